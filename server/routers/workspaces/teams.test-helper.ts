import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect } from "vitest";
import type { AppServices } from "../../core/services";
import { randomBytes } from "node:crypto";
import { createUserWithWorkspace, issueToken } from "../../lib/users";
import { http, type TestUser } from "../../test/harness";

/** A user with a login session (cookie) and a token in the personal workspace; pro, so more tokens fit. */
export type Person = TestUser & { cookie: Record<string, string>; sessionId: string };

export async function person(t: { app: AppServices }, opts: { plan?: "free" | "pro"; name?: string } = {}): Promise<Person> {
  const email = `u${randomBytes(6).toString("hex")}@example.com`;
  const user = await createUserWithWorkspace(t.app.db, { email, plan: opts.plan ?? "pro", name: opts.name });
  const { token } = await issueToken(t.app.db, user.id, "test");
  const s = await t.app.lucia.createSession(user.id, { createdAt: Date.now() });
  return {
    id: user.id,
    email,
    workspaceId: user.workspaceId,
    token,
    auth: { authorization: `Bearer ${token}` },
    cookie: { cookie: `app_session=${s.id}` },
    sessionId: s.id,
  };
}

/** One REST call under `base` (API_URL) as `who` (cookie or bearer headers). */
export const caller = (base: () => string) => (method: string, p: string, who?: Record<string, string>, json?: unknown) =>
  http(`${base()}${p}`, { method, headers: who, json });

type Mail = { to: string; subject: string; text: string; html: string; created_at: number };

/** Every mail written to DATA_DIR/outbox for `to`, oldest first. */
export function mailsTo(app: AppServices, to: string): Mail[] {
  const dir = path.join(app.config.dataDir, "outbox");
  let files: string[] = [];
  try {
    files = readdirSync(dir);
  } catch {
    return [];
  }
  return files
    .map((f) => JSON.parse(readFileSync(path.join(dir, f), "utf8")) as Mail)
    .filter((m) => m.to === to)
    .sort((a, b) => a.created_at - b.created_at);
}

/** The token of the newest invitation mailed to `to`. */
export function invitationToken(app: AppServices, to: string): string {
  const mails = mailsTo(app, to);
  expect(mails.length).toBeGreaterThan(0);
  const m = /\/invites\/([0-9A-Za-z]{32})\b/.exec(mails[mails.length - 1].text);
  expect(m).not.toBeNull();
  return m![1];
}
