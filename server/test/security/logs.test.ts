import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { http } from "../harness";
import { lastCode, signIn, startLoggedServer, type LoggedServer } from "./servers";

/**
 * No token, code, password, session id or hash in any log line. The logger here is
 * a bare pino at level trace (no redaction), so only what the code never logs passes.
 */
const rowsOf = (r: unknown) => (r as { rows?: Record<string, unknown>[] }).rows ?? (r as Record<string, unknown>[]);

describe("log lines carry no secrets", () => {
  let s: LoggedServer;
  const secrets = new Map<string, string>();
  beforeAll(async () => void (s = await startLoggedServer()));
  afterAll(() => s.close());

  it("sign-in, token, password and e-mail change flows log none of their secrets", async () => {
    const email = "logs@example.com";
    // Sign-in: one wrong code, then the right one.
    await http(`${s.api}/auth/start`, { method: "POST", json: { email } });
    const wrong = lastCode(s.app, email) === "000000" ? "000001" : "000000";
    expect((await http(`${s.api}/auth/verify`, { method: "POST", json: { email, code: wrong } })).status).toBe(400);
    const { code, session, cookie } = await signIn(s, email);
    secrets.set("sign-in code", code).set("session id", session);

    // Token: created, used, used revoked, and a guessed one.
    const created = await http(`${s.api}/account/tokens`, { method: "POST", headers: cookie, json: { name: "ci" } });
    expect(created.status).toBe(201);
    const token = created.json.token as string;
    secrets.set("token", token).set("token sha256", createHash("sha256").update(token).digest("hex"));
    const auth = { authorization: `Bearer ${token}` };
    expect((await http(`${s.api}/links`, { headers: auth })).status).toBe(200);
    const guessed = "tok_" + "Q".repeat(32);
    secrets.set("guessed token", guessed);
    expect((await http(`${s.api}/links`, { headers: { authorization: `Bearer ${guessed}` } })).status).toBe(401);

    // Password link: created, wrong try, right try, password change.
    const password = "Corr3ct-Horse-Battery";
    const link = (await http(`${s.api}/links`, { method: "POST", headers: auth, json: { url: "https://example.com/pw", password } })).json;
    secrets.set("password", password).set("wrong password", "Wr0ng-Guess-9");
    const form = (pw: string) =>
      http(`${s.redirect}/${link.slug}`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: `password=${encodeURIComponent(pw)}`,
      });
    expect((await form("Wr0ng-Guess-9")).status).toBe(401);
    expect((await form(password)).status).toBe(302);
    secrets.set("new password", "An0ther-Secret-Pw");
    expect((await http(`${s.api}/links/${link.id}`, { method: "PATCH", headers: auth, json: { password: "An0ther-Secret-Pw" } })).status).toBe(200);
    expect((await http(`${s.api}/links`, { method: "POST", headers: auth, json: { url: "https://example.com/x", password: "abc" } })).status).toBe(400);

    // E-mail change: the code of the new address.
    expect((await http(`${s.api}/account/email`, { method: "POST", headers: cookie, json: { email: "logs2@example.com" } })).status).toBe(202);
    const code2 = lastCode(s.app, "logs2@example.com");
    secrets.set("e-mail change code", code2);
    expect((await http(`${s.api}/account/email/verify`, { method: "POST", headers: cookie, json: { code: code2 } })).status).toBe(200);

    // Revoke, then use the revoked token.
    const list = (await http(`${s.api}/account/tokens`, { headers: cookie })).json;
    await http(`${s.api}/account/tokens/${list.tokens[0].id}`, { method: "DELETE", headers: cookie });
    expect((await http(`${s.api}/links`, { headers: auth })).status).toBe(401);

    // Stored hashes must not be logged either.
    await s.app.clicks?.flush();
    for (const r of rowsOf(await s.app.db.execute(sql`select password_hash from links where password_hash is not null`)))
      secrets.set("password hash", String(r.password_hash));
    for (const r of rowsOf(await s.app.db.execute(sql`select code_hash from email_codes`))) secrets.set(`code hash ${r.code_hash}`, String(r.code_hash));
    for (const r of rowsOf(await s.app.db.execute(sql`select token_hash from api_tokens`))) secrets.set(`token hash ${r.token_hash}`, String(r.token_hash));

    expect(s.lines.length, "the flows produced log lines").toBeGreaterThan(10);
    const leaks: string[] = [];
    for (const line of s.lines) for (const [what, value] of secrets) if (value && line.includes(value)) leaks.push(`${what} in: ${line.slice(0, 300)}`);
    // Anything shaped like a token or an scrypt hash is a leak too, whoever's it is.
    for (const line of s.lines) if (/tok_[0-9A-Za-z]{32}|scrypt\$\d+\$/.test(line)) leaks.push(`secret-shaped value in: ${line.slice(0, 300)}`);
    expect(leaks).toEqual([]);
  });
});
