import { createHash, randomInt } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emailCodes, users, workspaces } from "../../../db/schema";
import { createTestApp, createTestServer, freePort, http, type TestServer } from "../../test/harness";
import { smtpCapture } from "../../lib/smtp-capture.test-helper";
import { latestCode, outbox, pendingCookieOf, sessionCookieOf, signIn, uniqueEmail } from "./sign-in.test-helper";

let t: TestServer;
// TRUST_PROXY lets each test come from its own address, so the per-address limit is tested on purpose only.
const fromAddress = () => ({ "x-forwarded-for": `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}` });

beforeAll(async () => {
  t = await createTestServer({ TRUST_PROXY: "true" });
});
afterAll(() => t?.close());

/**
 * The pending-sign-in cookie of the last start for each address: `verify` sends it unless the test
 * gives a cookie of its own, so by default a test's verify comes from the browser that asked.
 */
const pendingOf = new Map<string, string>();
const start = async (email: string, headers: Record<string, string> = fromAddress()) => {
  const r = await http(`${t.api}/auth/start`, { method: "POST", json: { email }, headers });
  const pending = pendingCookieOf(r.headers);
  if (pending) pendingOf.set(email.toLowerCase(), pending);
  return r;
};
const verify = (email: string, code: string, headers: Record<string, string> = {}) => {
  const pending = pendingOf.get(email.toLowerCase());
  return http(`${t.api}/auth/verify`, {
    method: "POST",
    json: { email, code },
    headers: { ...fromAddress(), ...(pending ? { cookie: pending } : {}), ...headers },
  });
};
const wrongCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0");

describe("sign-in by e-mail code", () => {
  it("signs up end to end over HTTP: start mails a code to the outbox, verify answers the Account and sets app_session", async () => {
    const email = uniqueEmail();
    expect((await start(email)).status).toBe(204);
    const [mail] = outbox(t, email);
    expect(mail).toEqual({ to: email, subject: expect.any(String), text: expect.any(String), html: expect.any(String), created_at: expect.any(Number) });
    const r = await verify(email, latestCode(t, email));
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      user: { id: expect.any(String), email, name: null, avatar_url: null, created_at: expect.any(Number) },
      workspace: { id: expect.any(String), name: null },
    });
    const cookie = r.headers.getSetCookie().find((c) => c.startsWith("app_session="))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).toMatch(/Path=\//);
    expect(cookie).not.toMatch(/Secure/i); // http APP_URL
    const account = await http(`${t.api}/account`, { headers: { cookie: cookie.split(";")[0] } });
    expect(account.status).toBe(200);
    expect(account.json.user.email).toBe(email);
  });

  it("makes the user and its workspace on the first verify only", async () => {
    const email = uniqueEmail();
    await start(email);
    expect(await t.app.db.select().from(users).where(eq(users.email, email))).toHaveLength(0);
    const first = await signInAgain(email);
    const second = await signInAgain(email);
    expect(second.user.id).toBe(first.user.id);
    expect(second.workspace.id).toBe(first.workspace.id);
    expect(await t.app.db.select().from(workspaces).where(eq(workspaces.id, first.workspace.id))).toHaveLength(1);
  });

  it("answers 204 to any address, known or not, and mails a code either way (no account oracle)", async () => {
    const known = uniqueEmail();
    await signIn(t, known, fromAddress());
    const unknown = uniqueEmail();
    const a = await start(known);
    const b = await start(unknown);
    expect([a.status, a.text, b.status, b.text]).toEqual([204, "", 204, ""]);
    expect(outbox(t, known)).toHaveLength(2);
    expect(outbox(t, unknown)).toHaveLength(1);
  });

  it("mails a 6-digit code that is the only 6-digit number of the text, and stores only a hash", async () => {
    const email = uniqueEmail();
    await start(email);
    const code = latestCode(t, email);
    expect(code).toMatch(/^\d{6}$/);
    const rows = await t.app.db.select().from(emailCodes).where(eq(emailCodes.email, email));
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(code);
  });

  it("accepts a code once only", async () => {
    const email = uniqueEmail();
    await start(email);
    const code = latestCode(t, email);
    expect((await verify(email, code)).status).toBe(200);
    const again = await verify(email, code);
    expect(again.status).toBe(400);
    expect(again.json).toEqual({ error: "INVALID_CODE", fields: { code: expect.any(Array) } });
  });

  it("accepts a code once only even for two verifies at the same moment", async () => {
    const email = uniqueEmail();
    await start(email);
    const code = latestCode(t, email);
    const results = await Promise.all([verify(email, code), verify(email, code), verify(email, code)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 400, 400]);
    expect(await t.app.db.select().from(users).where(eq(users.email, email))).toHaveLength(1);
  });

  it("refuses a wrong code with 400 INVALID_CODE and fields.code", async () => {
    const email = uniqueEmail();
    await start(email);
    const r = await verify(email, wrongCode(latestCode(t, email)));
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ error: "INVALID_CODE", fields: { code: [expect.any(String)] } });
    expect(sessionCookieOf(r.headers)).toBeNull();
  });

  it.each(["12345", "1234567", "abcdef", ""])("answers INVALID_CODE to a malformed code %j", async (code) => {
    const email = uniqueEmail();
    await start(email);
    const r = await verify(email, code);
    expect(r.status).toBe(400);
    expect(r.json.error).toBe("INVALID_CODE");
    expect(r.json.fields.code).toBeDefined();
  });

  it("refuses a code for another address", async () => {
    const a = uniqueEmail(),
      b = uniqueEmail();
    await start(a);
    await start(b);
    expect((await verify(b, latestCode(t, a))).json.error).toBe("INVALID_CODE");
  });

  it("refuses a code older than 10 minutes", async () => {
    const email = uniqueEmail();
    await start(email);
    const code = latestCode(t, email);
    const [row] = await t.app.db
      .select({ expiresAt: emailCodes.expiresAt, createdAt: emailCodes.createdAt })
      .from(emailCodes)
      .where(eq(emailCodes.email, email));
    expect(row.expiresAt - row.createdAt).toBe(10 * 60 * 1000);
    await t.app.db
      .update(emailCodes)
      .set({ expiresAt: Date.now() - 1 })
      .where(eq(emailCodes.email, email));
    expect((await verify(email, code)).json.error).toBe("INVALID_CODE");
  });

  it("ends a code after 5 wrong tries, even for the right code", async () => {
    const email = uniqueEmail();
    await start(email);
    const code = latestCode(t, email);
    for (let i = 0; i < 5; i++) expect((await verify(email, wrongCode(code))).status).toBe(400);
    const r = await verify(email, code);
    expect(r.status).toBe(400);
    expect(r.json.error).toBe("INVALID_CODE");
  });

  it("still accepts the right code after 4 wrong tries", async () => {
    const email = uniqueEmail();
    await start(email);
    const code = latestCode(t, email);
    for (let i = 0; i < 4; i++) await verify(email, wrongCode(code));
    expect((await verify(email, code)).status).toBe(200);
  });

  it("validates the e-mail with 400 VALIDATION_FAILED and fields.email", async () => {
    for (const body of [{ email: "not-an-email" }, {}, { email: 5 }, { email: `${"x".repeat(200)}@example.com` }]) {
      const r = await http(`${t.api}/auth/start`, { method: "POST", json: body, headers: fromAddress() });
      expect(r.status).toBe(400);
      expect(r.json).toEqual({ error: "VALIDATION_FAILED", fields: { email: expect.any(Array) } });
    }
  });

  it("takes an address whose last label is one letter (a@b.c) and refuses what is no address", async () => {
    const email = `${uniqueEmail().split("@")[0]}@b.c`;
    expect((await start(email)).status).toBe(204);
    const r = await verify(email, latestCode(t, email));
    expect(r.status).toBe(200);
    expect(r.json.user.email).toBe(email);
    for (const bad of ["a@b", "a@.c", "a..b@c.de", "a b@c.de", "@c.de", "a@b_c.de", "a@-b.de", ".a@b.de"]) {
      const refused = await http(`${t.api}/auth/start`, { method: "POST", json: { email: bad }, headers: fromAddress() });
      expect(refused.status, bad).toBe(400);
      expect(refused.json.fields.email, bad).toEqual(["must be an e-mail address"]);
    }
  });

  it("treats the e-mail case-insensitively", async () => {
    const email = uniqueEmail();
    await start(email.toUpperCase());
    const r = await verify(email, latestCode(t, email));
    expect(r.status).toBe(200);
    expect(r.json.user.email).toBe(email);
  });

  it("limits sign-in starts per address with 429 RATE_LIMITED and Retry-After", async () => {
    const headers = fromAddress();
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 31; i++) {
      last = await start(uniqueEmail(), headers);
      statuses.push(last.status);
    }
    expect(statuses.slice(0, 30).every((s) => s === 204)).toBe(true);
    expect(last!.status).toBe(429);
    expect(last!.json).toEqual({ error: "RATE_LIMITED" });
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("limits sign-in starts per e-mail address and client address with 429 RATE_LIMITED", async () => {
    const email = uniqueEmail();
    const headers = fromAddress();
    for (let i = 0; i < 5; i++) expect((await start(email, headers)).status).toBe(204);
    const r = await start(email, headers);
    expect(r.status).toBe(429);
    expect(r.json).toEqual({ error: "RATE_LIMITED" });
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(outbox(t, email)).toHaveLength(5);
  });

  it("refuses sign-in requests sent from another site's page", async () => {
    const email = uniqueEmail();
    const r = await start(email, { ...fromAddress(), origin: "https://evil.example" });
    expect(r.status).toBe(403);
    expect(outbox(t, email)).toHaveLength(0);
    await start(email);
    const v = await verify(email, latestCode(t, email), { ...fromAddress(), origin: "https://evil.example" });
    expect(v.status).toBe(403);
    expect(sessionCookieOf(v.headers)).toBeNull();
  });

  it("is not part of the public API document", async () => {
    const doc = (await http(`${t.api}/openapi.json`)).json;
    expect(Object.keys(doc.paths).filter((p) => p.startsWith("/auth"))).toEqual([]);
  });
});

describe("a sign-in code belongs to the browser that asked for it", () => {
  const liveCodes = (email: string) =>
    t.app.db
      .select({ attempts: emailCodes.attempts, looseAttempts: emailCodes.looseAttempts, usedAt: emailCodes.usedAt, pendingHash: emailCodes.pendingHash })
      .from(emailCodes)
      .where(eq(emailCodes.email, email));

  it("POST /auth/start sets an httpOnly pending-sign-in cookie for the code's 10 minutes, and only its hash is stored with the code", async () => {
    const email = uniqueEmail();
    const r = await start(email);
    expect(r.status).toBe(204);
    const set = r.headers.getSetCookie().find((c) => c.startsWith("app_signin="))!;
    expect(set).toMatch(/HttpOnly/i);
    expect(set).toMatch(/SameSite=Lax/i);
    expect(set).toMatch(/Path=\//);
    expect(set).toMatch(/Max-Age=600/);
    const value = set.split(";")[0].slice("app_signin=".length);
    expect(value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const [row] = await liveCodes(email);
    expect(row.pendingHash).toBe(createHash("sha256").update(value).digest("hex"));
    expect(JSON.stringify(await t.app.db.select().from(emailCodes).where(eq(emailCodes.email, email)))).not.toContain(value);
  });

  it("refuses the right code from a browser with another pending sign-in with 400 INVALID_CODE, counting nothing; the owner's code still works", async () => {
    const email = uniqueEmail();
    await start(email);
    const code = latestCode(t, email);
    const other = pendingCookieOf((await http(`${t.api}/auth/start`, { method: "POST", json: { email: uniqueEmail() }, headers: fromAddress() })).headers)!;
    const r = await verify(email, code, { cookie: other });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ error: "INVALID_CODE", fields: { code: [expect.any(String)] } });
    expect(sessionCookieOf(r.headers)).toBeNull();
    expect(await liveCodes(email)).toEqual([expect.objectContaining({ attempts: 0, looseAttempts: 0, usedAt: null })]);
    expect((await verify(email, code)).status).toBe(200);
  });

  it("a client that keeps no cookies (a script) signs in with {email, code} alone: 200 Account and the session cookie", async () => {
    for (const cookie of ["", "app_signin=forged"]) {
      const email = uniqueEmail();
      await http(`${t.api}/auth/start`, { method: "POST", json: { email }, headers: fromAddress() });
      const r = await verify(email, latestCode(t, email), { cookie });
      expect(r.status, r.text).toBe(200);
      expect(r.json.user.email).toBe(email);
      expect(sessionCookieOf(r.headers)).toBeTruthy();
    }
  });

  it("5 wrong tries from clients without the pending cookie end the code for them, not for the browser that asked", async () => {
    const email = uniqueEmail();
    await start(email);
    const code = latestCode(t, email);
    for (let i = 0; i < 5; i++) expect((await verify(email, wrongCode(code), { cookie: "" })).status).toBe(400);
    // Spent for cookieless callers: even the right code is refused now.
    expect((await verify(email, code, { cookie: "" })).status).toBe(400);
    expect(await liveCodes(email)).toEqual([expect.objectContaining({ attempts: 0, looseAttempts: 5, usedAt: null })]);
    expect((await verify(email, code)).status).toBe(200);
  });

  it("wrong guesses from another browser neither count against nor end the owner's code, even from one that started a sign-in for the same address", async () => {
    const victim = uniqueEmail();
    await start(victim);
    const code = latestCode(t, victim);
    // The attacker's own pending sign-in for the victim's address: a second code, mailed to the victim.
    const attacker = await http(`${t.api}/auth/start`, { method: "POST", json: { email: victim }, headers: fromAddress() });
    const attackerCookie = pendingCookieOf(attacker.headers)!;
    for (let i = 0; i < 10; i++) {
      expect((await verify(victim, wrongCode(code), { cookie: attackerCookie })).status).toBe(400);
      expect((await verify(victim, wrongCode(code), { cookie: "" })).status).toBe(400);
    }
    expect((await liveCodes(victim)).map((r) => r.attempts).sort()).toEqual([0, 5]);
    const r = await verify(victim, code);
    expect(r.status).toBe(200);
    expect(r.json.user.email).toBe(victim);
  });

  it("5 wrong tries end the codes of that pending sign-in only", async () => {
    const email = uniqueEmail();
    await start(email);
    const code = latestCode(t, email);
    for (let i = 0; i < 5; i++) expect((await verify(email, wrongCode(code))).status).toBe(400);
    expect((await verify(email, code)).json.error).toBe("INVALID_CODE");
    // The same address from a fresh browser gets a code that works.
    pendingOf.delete(email);
    await start(email);
    expect((await verify(email, latestCode(t, email))).status).toBe(200);
  });

  it("keeps the browser's pending sign-in across a second start, so the code of the first mail still works", async () => {
    const email = uniqueEmail();
    await start(email);
    const first = latestCode(t, email);
    const again = await start(email, { ...fromAddress(), cookie: pendingOf.get(email)! });
    expect(pendingCookieOf(again.headers)).toBe(pendingOf.get(email));
    expect(outbox(t, email)).toHaveLength(2);
    expect((await verify(email, first)).status).toBe(200);
  });

  it("clears the pending-sign-in cookie once signed in", async () => {
    const email = uniqueEmail();
    await start(email);
    const r = await verify(email, latestCode(t, email));
    expect(r.status).toBe(200);
    expect(r.headers.getSetCookie().find((c) => c.startsWith("app_signin="))).toMatch(/^app_signin=;.*Max-Age=0/i);
  });

  it("sends from one client address for someone else's address do not stop its owner's browser getting a code", async () => {
    const victim = uniqueEmail();
    const attacker = fromAddress();
    for (let i = 0; i < 5; i++) expect((await start(victim, attacker)).status).toBe(204);
    expect((await start(victim, attacker)).status).toBe(429);
    pendingOf.delete(victim);
    const own = await start(victim);
    expect(own.status).toBe(204);
    expect(outbox(t, victim)).toHaveLength(6);
    expect((await verify(victim, latestCode(t, victim))).status).toBe(200);
  });

  it("caps code mails to one address at 100 an hour over every client address: past it 204 as always, without a mail", async () => {
    const email = uniqueEmail();
    for (let from = 0; from < 20; from++) {
      const headers = fromAddress();
      const statuses = await Promise.all(Array.from({ length: 5 }, () => start(email, headers).then((r) => r.status)));
      expect(statuses).toEqual([204, 204, 204, 204, 204]);
    }
    expect(outbox(t, email)).toHaveLength(100);
    const r = await start(email);
    expect([r.status, r.text]).toEqual([204, ""]);
    expect(pendingCookieOf(r.headers)).toBeTruthy(); // the same answer as a sent code
    expect(outbox(t, email)).toHaveLength(100);
  });
});

describe("the session cookie", () => {
  it("is Secure when APP_URL is https", async () => {
    const secure = await createTestApp({ APP_URL: "https://app.example", REDIRECT_URL: "https://go.example" });
    try {
      const cookie = secure.app.lucia.createSessionCookie("abc").serialize();
      expect(cookie).toMatch(/; Secure/);
      expect(cookie).toMatch(/HttpOnly/);
      expect(cookie).toMatch(/SameSite=Lax/);
    } finally {
      await secure.close();
    }
  });
});

describe("POST /auth/logout", () => {
  it("ends the session and clears the cookie with 204", async () => {
    const s = await signIn(t, uniqueEmail(), fromAddress());
    const r = await http(`${t.api}/auth/logout`, { method: "POST", headers: s.headers });
    expect(r.status).toBe(204);
    expect(r.text).toBe("");
    const cleared = r.headers.getSetCookie().find((c) => c.startsWith("app_session="))!;
    expect(cleared).toMatch(/^app_session=;/);
    expect(cleared).toMatch(/Max-Age=0/i);
    expect((await http(`${t.api}/account`, { headers: s.headers })).status).toBe(401);
  });

  it("answers 401 without a session and 403 SESSION_REQUIRED to a token", async () => {
    expect((await http(`${t.api}/auth/logout`, { method: "POST" })).json).toEqual({ error: "UNAUTHORIZED" });
    const u = await t.user();
    const r = await http(`${t.api}/auth/logout`, { method: "POST", headers: u.auth });
    expect(r.status).toBe(403);
    expect(r.json).toEqual({ error: "SESSION_REQUIRED" });
  });

  it("ignores the cookie when the logout comes from another site (401, session kept)", async () => {
    const s = await signIn(t, uniqueEmail(), fromAddress());
    const r = await http(`${t.api}/auth/logout`, { method: "POST", headers: { ...s.headers, origin: "https://evil.example" } });
    expect(r.status).toBe(401);
    expect((await http(`${t.api}/account`, { headers: s.headers })).status).toBe(200);
  });
});

async function signInAgain(email: string) {
  return (await signIn(t, email, fromAddress())).account;
}

describe("mail through SMTP_URL", () => {
  it("sends the code through nodemailer to a real SMTP server", async () => {
    const port = await freePort();
    const smtp = await smtpCapture(port);
    const received = smtp.received;
    const s = await createTestServer({ SMTP_URL: `smtp://127.0.0.1:${port}` });
    try {
      const email = uniqueEmail();
      const started = await http(`${s.api}/auth/start`, { method: "POST", json: { email } });
      expect(started.status).toBe(204);
      expect(received).toHaveLength(1);
      expect(received[0].to).toEqual([email]);
      const code = /code is (\d{6})/.exec(received[0].raw)![1];
      expect(outbox(s, email)).toHaveLength(0); // not written to the outbox
      const r = await http(`${s.api}/auth/verify`, { method: "POST", json: { email, code }, headers: { cookie: pendingCookieOf(started.headers)! } });
      expect(r.status).toBe(200);
      expect(r.json.user.email).toBe(email);
    } finally {
      await s.close();
      await smtp.close();
    }
  });
});
