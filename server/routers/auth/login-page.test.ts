import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestServer, http, type TestServer } from "../../test/harness";
import { latestCode, outbox, pendingCookieOf, sessionCookieOf, uniqueEmail } from "./sign-in.test-helper";

/**
 * The dashboard's sign-in page calls the sign-in procedures server-side: the pending-sign-in cookie
 * they set must reach the browser, and the browser's cookie must reach them.
 */
let t: TestServer;
beforeAll(async () => {
  t = await createTestServer({}, { remix: true });
});
afterAll(() => t?.close());

/** The /login form as a browser without script posts it. */
const postLogin = (fields: Record<string, string>, cookie?: string) =>
  http(`${t.appUrl}/login`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...(cookie ? { cookie } : {}) },
    body: new URLSearchParams(fields).toString(),
  });

describe("the dashboard's sign-in page", () => {
  it("relays the pending-sign-in cookie: the browser that asked for the code signs in with it", async () => {
    const email = uniqueEmail();
    const asked = await postLogin({ email, redirectTo: "/links" });
    expect(asked.status).toBe(200);
    expect(asked.text).toContain("We sent a code");
    const pending = pendingCookieOf(asked.headers);
    expect(pending).toBeTruthy();
    expect(asked.headers.getSetCookie().find((c) => c.startsWith("app_signin="))).toMatch(/HttpOnly/i);
    const signedIn = await postLogin({ email, code: latestCode(t, email), redirectTo: "/links" }, pending!);
    expect(signedIn.status).toBe(302);
    expect(signedIn.headers.get("location")).toBe("/links");
    expect(sessionCookieOf(signedIn.headers)).toBeTruthy();
  });

  it("refuses the code from another browser with the page's wrong-code message, and the asking browser's code still works", async () => {
    const email = uniqueEmail();
    const pending = pendingCookieOf((await postLogin({ email })).headers)!;
    const code = latestCode(t, email);
    // Another browser, with a sign-in of its own pending.
    const other = pendingCookieOf((await postLogin({ email: uniqueEmail() })).headers)!;
    for (let i = 0; i < 6; i++) {
      const elsewhere = await postLogin({ email, code }, other);
      expect(elsewhere.status).toBe(200);
      expect(elsewhere.text).toContain("That code is wrong or has expired.");
      expect(sessionCookieOf(elsewhere.headers)).toBeNull();
    }
    expect(outbox(t, email)).toHaveLength(1);
    // (A browser that keeps no cookie at all tries the code as a script would: see auth.test.ts.)
    expect((await postLogin({ email, code }, pending)).status).toBe(302);
  });
});
