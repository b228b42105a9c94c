import { randomInt } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiTokens, users } from "../../../db/schema";
import { sha256 } from "../../lib/crypto";
import { SCOPES } from "../../domain/scopes";
import { createTestServer, http, type TestServer } from "../../test/harness";
import { signIn, uniqueEmail } from "../auth/sign-in.test-helper";

let t: TestServer;
const newSession = () => signIn(t, uniqueEmail(), { "x-forwarded-for": `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}` });
const create = (headers: Record<string, string>, name = "ci") => http(`${t.api}/account/tokens`, { method: "POST", json: { name }, headers });
const list = async (headers: Record<string, string>) => (await http(`${t.api}/account/tokens`, { headers })).json.tokens;
const revoke = (headers: Record<string, string>, id: string) => http(`${t.api}/account/tokens/${id}`, { method: "DELETE", headers });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

beforeAll(async () => {
  t = await createTestServer({ TRUST_PROXY: "true" });
});
afterAll(() => t?.close());

describe("API tokens", () => {
  it("creates a token with 201: tok_ + 32 base62, shown once, with its record", async () => {
    const s = await newSession();
    const r = await create(s.headers, "deploy");
    expect(r.status).toBe(201);
    expect(r.json.token).toMatch(/^tok_[0-9A-Za-z]{32}$/);
    expect(r.json.record).toEqual({
      id: expect.any(String),
      name: "deploy",
      prefix: r.json.token.slice(0, 8),
      created_at: expect.any(Number),
      last_used_at: null,
      revoked_at: null,
      scopes: [...SCOPES],
    });
    // The list never shows the token again.
    const listed = await list(s.headers);
    expect(listed).toEqual([r.json.record]);
    expect(JSON.stringify(listed)).not.toContain(r.json.token);
  });

  it("stores only the SHA-256 of the token", async () => {
    const s = await newSession();
    const r = await create(s.headers);
    const [row] = await t.app.db.select().from(apiTokens).where(eq(apiTokens.id, r.json.record.id));
    expect(row.tokenHash).toBe(sha256(r.json.token));
    expect(JSON.stringify(row)).not.toContain(r.json.token);
  });

  it("lets a token do what its owner can with links", async () => {
    const s = await newSession();
    const { token } = (await create(s.headers)).json;
    const r = await http(`${t.api}/links`, { method: "POST", json: { url: "https://example.com/" }, headers: bearer(token) });
    expect(r.status).toBe(201);
    expect((await http(`${t.api}/account`, { headers: bearer(token) })).json.user.id).toBe(s.account.user.id);
  });

  it("allows one live token on the free plan (409 TOKEN_LIMIT_REACHED); revoking frees the slot", async () => {
    const s = await newSession();
    const first = await create(s.headers);
    const second = await create(s.headers);
    expect(second.status).toBe(409);
    expect(second.json).toEqual({ error: "TOKEN_LIMIT_REACHED" });
    expect((await revoke(s.headers, first.json.record.id)).status).toBe(204);
    expect((await create(s.headers)).status).toBe(201);
  });

  it("allows ten live tokens on the pro plan", async () => {
    const s = await newSession();
    await t.app.db.update(users).set({ plan: "pro" }).where(eq(users.id, s.account.user.id));
    for (let i = 0; i < 10; i++) expect((await create(s.headers, `t${i}`)).status).toBe(201);
    expect((await create(s.headers)).json.error).toBe("TOKEN_LIMIT_REACHED");
  });

  it("does not let two parallel creations take the last free slot", async () => {
    const s = await newSession();
    const results = await Promise.all([create(s.headers), create(s.headers), create(s.headers)]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409]);
  });

  it("answers 401 to a revoked token from the next request on, and keeps its record in the list", async () => {
    const s = await newSession();
    const r = await create(s.headers);
    expect((await http(`${t.api}/links`, { headers: bearer(r.json.token) })).status).toBe(200);
    expect((await revoke(s.headers, r.json.record.id)).status).toBe(204);
    const after = await http(`${t.api}/links`, { headers: bearer(r.json.token) });
    expect(after.status).toBe(401);
    expect(after.json).toEqual({ error: "UNAUTHORIZED" });
    const [rec] = await list(s.headers);
    expect(rec.id).toBe(r.json.record.id);
    expect(rec.revoked_at).toEqual(expect.any(Number));
  });

  it("answers 204 again to a second revocation, keeping the first revoked_at", async () => {
    const s = await newSession();
    const r = await create(s.headers);
    await revoke(s.headers, r.json.record.id);
    const [before] = await list(s.headers);
    expect((await revoke(s.headers, r.json.record.id)).status).toBe(204);
    const [after] = await list(s.headers);
    expect(after.revoked_at).toBe(before.revoked_at);
  });

  it("answers 404 for another user's token or an unknown id, and leaves it working", async () => {
    const a = await newSession();
    const b = await newSession();
    const r = await create(a.headers);
    expect((await revoke(b.headers, r.json.record.id)).status).toBe(404);
    expect((await revoke(b.headers, "nope")).json).toEqual({ error: "NOT_FOUND" });
    expect((await http(`${t.api}/links`, { headers: bearer(r.json.token) })).status).toBe(200);
    expect(await list(b.headers)).toEqual([]);
  });

  it("lists tokens newest first, revoked ones included", async () => {
    const s = await newSession();
    await t.app.db.update(users).set({ plan: "pro" }).where(eq(users.id, s.account.user.id));
    const ids: string[] = [];
    for (const name of ["a", "b", "c"]) ids.push((await create(s.headers, name)).json.record.id);
    await revoke(s.headers, ids[1]);
    const tokens = await list(s.headers);
    expect(tokens.map((x: { name: string }) => x.name)).toEqual(["c", "b", "a"]);
    expect(tokens[1].revoked_at).not.toBeNull();
  });

  it("writes last_used_at on use, at most once every five minutes", async () => {
    const s = await newSession();
    const r = await create(s.headers);
    await http(`${t.api}/links`, { headers: bearer(r.json.token) });
    const [first] = await list(s.headers);
    expect(first.last_used_at).toEqual(expect.any(Number));
    // Used again within five minutes: unchanged. Pretend the last use was 4 minutes ago.
    await t.app.db
      .update(apiTokens)
      .set({ lastUsedAt: Date.now() - 4 * 60_000 })
      .where(eq(apiTokens.id, r.json.record.id));
    // Minutes later this instance's cached look-up (at most a minute old, core/auth.ts) is gone too.
    t.app.tokenCache.clear();
    const [{ last_used_at: fourAgo }] = await list(s.headers);
    await http(`${t.api}/links`, { headers: bearer(r.json.token) });
    expect((await list(s.headers))[0].last_used_at).toBe(fourAgo);
    // Six minutes ago: written again.
    await t.app.db
      .update(apiTokens)
      .set({ lastUsedAt: Date.now() - 6 * 60_000 })
      .where(eq(apiTokens.id, r.json.record.id));
    t.app.tokenCache.clear();
    const [{ last_used_at: sixAgo }] = await list(s.headers);
    await http(`${t.api}/links`, { headers: bearer(r.json.token) });
    expect((await list(s.headers))[0].last_used_at).toBeGreaterThan(sixAgo);
  });

  it.each([[{}], [{ name: "" }], [{ name: "x".repeat(101) }], [{ name: 1 }], [{ name: "a", scope: "all" }]])(
    "answers 400 VALIDATION_FAILED to %j",
    async (json) => {
      const s = await newSession();
      const r = await http(`${t.api}/account/tokens`, { method: "POST", json, headers: s.headers });
      expect(r.status).toBe(400);
      expect(r.json.error).toBe("VALIDATION_FAILED");
      expect(Object.keys(r.json.fields).length).toBeGreaterThan(0);
    },
  );
});
