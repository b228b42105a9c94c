import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect } from "vitest";
import { http, type TestServer } from "../../test/harness";

export type OutboxMail = { to: string; subject: string; text: string; html: string; created_at: number };

/** Every mail written to DATA_DIR/outbox for `to`, oldest first. */
export function outbox(t: TestServer, to: string): OutboxMail[] {
  const dir = path.join(t.app.config.dataDir, "outbox");
  let files: string[] = [];
  try {
    files = readdirSync(dir);
  } catch {
    return [];
  }
  return files
    .map((f) => JSON.parse(readFileSync(path.join(dir, f), "utf8")) as OutboxMail)
    .filter((m) => m.to === to)
    .sort((a, b) => a.created_at - b.created_at);
}

/** The code of the newest mail to `to`: the only 6-digit number of its text (a code mail holds no user-supplied content). */
export function latestCode(t: TestServer, to: string): string {
  const mails = outbox(t, to);
  expect(mails.length).toBeGreaterThan(0);
  const numbers = mails[mails.length - 1].text.match(/\b\d{6}\b/g);
  expect(numbers).toHaveLength(1);
  return numbers![0];
}

export const sessionCookieOf = (headers: Headers) => {
  const c = headers.getSetCookie().find((s) => s.startsWith("app_session="));
  return c ? c.split(";")[0] : null;
};

/** The pending-sign-in cookie `POST /auth/start` set, as a Cookie header value. */
export const pendingCookieOf = (headers: Headers) => {
  const c = headers.getSetCookie().find((s) => s.startsWith("app_signin="));
  return c ? c.split(";")[0] : null;
};

/** Signs in over HTTP through the outbox, as one browser (the pending-sign-in cookie carried); returns the cookie header and the Account. */
export async function signIn(t: TestServer, email: string, headers: Record<string, string> = {}) {
  const start = await http(`${t.api}/auth/start`, { method: "POST", json: { email }, headers });
  expect(start.status).toBe(204);
  const pending = pendingCookieOf(start.headers);
  expect(pending).toBeTruthy();
  const verify = await http(`${t.api}/auth/verify`, {
    method: "POST",
    json: { email, code: latestCode(t, email) },
    headers: { ...headers, cookie: pending! },
  });
  expect(verify.status).toBe(200);
  const cookie = sessionCookieOf(verify.headers);
  expect(cookie).toBeTruthy();
  return { cookie: cookie!, headers: { cookie: cookie! }, account: verify.json, setCookie: verify.headers.getSetCookie() };
}

let n = 0;
export const uniqueEmail = (tag = "u") => `${tag}${Date.now().toString(36)}${(n++).toString(36)}${Math.random().toString(36).slice(2, 6)}@example.com`;
