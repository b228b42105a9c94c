import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { http } from "../harness";
import { signIn, startLoggedServer, type LoggedServer } from "./servers";

/** `app_session` is HttpOnly, SameSite=Lax, Path=/, and Secure on https. */
const attributes = (setCookie: string) =>
  setCookie
    .split(";")
    .slice(1)
    .map((a) => a.trim().toLowerCase());

describe("session cookie on http", () => {
  let s: LoggedServer;
  beforeAll(async () => void (s = await startLoggedServer()));
  afterAll(() => s.close());

  it("POST /auth/verify sets app_session HttpOnly; SameSite=Lax; Path=/ without Secure", async () => {
    const { verify, setCookie, session } = await signIn(s, "cookie-http@example.com");
    expect(verify.status).toBe(200);
    expect(session.length).toBeGreaterThanOrEqual(20);
    const a = attributes(setCookie);
    expect(a).toContain("httponly");
    expect(a).toContain("samesite=lax");
    expect(a).toContain("path=/");
    expect(a).not.toContain("secure");
    expect(a.some((x) => x.startsWith("domain="))).toBe(false);
  });

  it("logout clears the cookie with the same flags", async () => {
    const { cookie } = await signIn(s, "cookie-logout@example.com");
    const out = await http(`${s.api}/auth/logout`, { method: "POST", headers: cookie });
    expect(out.status).toBe(204);
    const cleared = out.headers.getSetCookie().find((c) => c.startsWith("app_session="))!;
    expect(cleared).toMatch(/^app_session=;/);
    expect(attributes(cleared)).toEqual(expect.arrayContaining(["httponly", "samesite=lax", "path=/"]));
  });
});

describe("session cookie when APP_URL is https", () => {
  let s: LoggedServer;
  beforeAll(async () => void (s = await startLoggedServer({ https: true })));
  afterAll(() => s.close());

  it("POST /auth/verify sets app_session with Secure", async () => {
    const { verify, setCookie } = await signIn(s, "cookie-https@example.com");
    expect(verify.status).toBe(200);
    expect(attributes(setCookie)).toEqual(expect.arrayContaining(["httponly", "samesite=lax", "path=/", "secure"]));
  });
});
