import { randomInt } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { links, users } from "../../../db/schema";
import { SCOPES, isScope } from "../../domain/scopes";
import { createUserWithWorkspace, issueToken } from "../../lib/users";
import { appRouter } from "..";
import { scopeMiddleware, type Meta } from "../../trpc/init";
import { createTestServer, http, type TestServer } from "../../test/harness";
import { signIn, uniqueEmail } from "../auth/sign-in.test-helper";

let t: TestServer;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const newSession = async () => {
  const s = await signIn(t, uniqueEmail(), { "x-forwarded-for": `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}` });
  await t.app.db.update(users).set({ plan: "pro" }).where(eq(users.id, s.account.user.id));
  return s;
};
/** A pro user (several live tokens) with a token limited to `scopes`. */
async function scopedToken(scopes: string[]) {
  const user = await createUserWithWorkspace(t.app.db, { email: uniqueEmail(), plan: "pro" });
  const { token } = await issueToken(t.app.db, user.id, "scoped", undefined, scopes);
  const { token: full } = await issueToken(t.app.db, user.id, "full");
  return { user, headers: bearer(token), full: bearer(full) };
}

beforeAll(async () => {
  t = await createTestServer({ TRUST_PROXY: "true" });
});
afterAll(() => t?.close());

type Proc = { _def: { meta?: Meta; middlewares: unknown[] } };
const procedures = Object.entries((appRouter._def as unknown as { procedures: Record<string, Proc> }).procedures);
const scopeCheck = (scopeMiddleware as unknown as { _middlewares: unknown[] })._middlewares[0];
const reachableByToken = (p: Proc) => p._def.middlewares.includes(scopeCheck);

describe("every procedure declares the scope a token needs", () => {
  it("every procedure reachable by a token declares its scope explicitly (a scope, or null)", () => {
    const reachable = procedures.filter(([, p]) => reachableByToken(p));
    // The walk sees the whole API: links, analytics, linktrees, domains and the account.
    expect(reachable.map(([path]) => path)).toEqual(
      expect.arrayContaining(["link.create", "link.suggest", "analytics.workspace", "linktree.update", "domain.delete", "account.get"]),
    );
    const undeclared = reachable.filter(([, p]) => !Object.hasOwn(p._def.meta ?? {}, "scope")).map(([path]) => path);
    expect(undeclared).toEqual([]);
    const unknown = reachable.filter(([, p]) => p._def.meta!.scope !== null && !isScope(p._def.meta!.scope)).map(([path]) => path);
    expect(unknown).toEqual([]);
  });

  it("account administration and public procedures are not reachable by a token, so they need no scope", () => {
    const paths = procedures.filter(([, p]) => reachableByToken(p)).map(([path]) => path);
    for (const path of ["token.create", "token.list", "session.revoke", "account.delete", "workspace.switch", "report.create", "report.list"])
      expect(paths).not.toContain(path);
  });
});

describe("scoped tokens", () => {
  it("a request outside a token's scopes answers 403 INSUFFICIENT_SCOPE and changes nothing", async () => {
    const { user, headers, full } = await scopedToken(["links:read"]);
    const created = await http(`${t.api}/links`, { method: "POST", json: { url: "https://example.com/a" }, headers });
    expect(created.status).toBe(403);
    expect(created.json).toEqual({ error: "INSUFFICIENT_SCOPE" });
    expect(await t.app.db.select().from(links).where(eq(links.workspaceId, user.workspaceId))).toEqual([]);

    const own = await http(`${t.api}/links`, { method: "POST", json: { url: "https://example.com/b" }, headers: full });
    expect(own.status).toBe(201);
    const patched = await http(`${t.api}/links/${own.json.id}`, { method: "PATCH", json: { url: "https://example.com/c" }, headers });
    expect(patched.json).toEqual({ error: "INSUFFICIENT_SCOPE" });
    expect((await http(`${t.api}/links/${own.json.id}`, { method: "DELETE", headers })).status).toBe(403);
    const read = await http(`${t.api}/links/${own.json.id}`, { headers });
    expect(read.status).toBe(200);
    expect(read.json.url).toBe("https://example.com/b");
    expect(read.json.deleted_at).toBeNull();
    // Bulk creation is a links write too.
    const bulk = await http(`${t.api}/links/bulk`, { method: "POST", json: { links: [{ url: "https://example.com/d" }] }, headers });
    expect(bulk.json).toEqual({ error: "INSUFFICIENT_SCOPE" });
  });

  it("each scope opens exactly its resource: analytics, linktrees and domains", async () => {
    const { headers } = await scopedToken(["linktrees:read", "linktrees:write"]);
    expect((await http(`${t.api}/linktrees`, { headers })).status).toBe(200);
    const slug = `s${Date.now().toString(36)}${randomInt(1e6)}`;
    expect((await http(`${t.api}/linktrees`, { method: "POST", json: { slug, title: "T" }, headers })).status).toBe(201);
    for (const path of ["/links", "/analytics", "/domains"]) {
      const r = await http(`${t.api}${path}`, { headers });
      expect([path, r.status, r.json]).toEqual([path, 403, { error: "INSUFFICIENT_SCOPE" }]);
    }
    const analytics = await scopedToken(["analytics:read"]);
    expect((await http(`${t.api}/analytics`, { headers: analytics.headers })).status).toBe(200);
    expect((await http(`${t.api}/links`, { headers: analytics.headers })).status).toBe(403);
    const domains = await scopedToken(["domains:read"]);
    expect((await http(`${t.api}/domains`, { headers: domains.headers })).status).toBe(200);
    expect((await http(`${t.api}/domains`, { method: "POST", json: { name: "go.example.com" }, headers: domains.headers })).json).toEqual({
      error: "INSUFFICIENT_SCOPE",
    });
  });

  it("the tRPC endpoint checks the same scopes, for the dashboard's procedures too", async () => {
    const { headers } = await scopedToken(["analytics:read"]);
    const suggest = await http(`${t.api}/trpc/link.suggest?input=${encodeURIComponent(JSON.stringify({}))}`, { headers });
    expect(suggest.status).toBe(403);
    expect(suggest.json.error.data.error).toBe("INSUFFICIENT_SCOPE");
    const caller = t.caller(headers);
    await expect(caller.link.bulkDelete({ ids: ["abcdefgh"] })).rejects.toMatchObject({ publicCode: "INSUFFICIENT_SCOPE" });
  });

  it("a token with no scope at all still reads GET /account, which needs none", async () => {
    const { user, headers } = await scopedToken([]);
    const r = await http(`${t.api}/account`, { headers });
    expect(r.status).toBe(200);
    expect(r.json.user.id).toBe(user.id);
  });

  it("a scoped token still answers 403 SESSION_REQUIRED for account administration", async () => {
    const { headers } = await scopedToken(["links:read"]);
    const r = await http(`${t.api}/account/tokens`, { headers });
    expect(r.status).toBe(403);
    expect(r.json).toEqual({ error: "SESSION_REQUIRED" });
  });

  it("a classic token (made without scopes) keeps every scope", async () => {
    const { full } = await scopedToken([]);
    expect((await http(`${t.api}/links`, { method: "POST", json: { url: "https://example.com/e" }, headers: full })).status).toBe(201);
    expect((await http(`${t.api}/analytics`, { headers: full })).status).toBe(200);
    expect((await http(`${t.api}/domains`, { headers: full })).status).toBe(200);
  });

  it("sessions are not scoped", async () => {
    const s = await newSession();
    expect((await http(`${t.api}/links`, { method: "POST", json: { url: "https://example.com/f" }, headers: s.headers })).status).toBe(201);
  });
});

describe("token creation with scopes", () => {
  it("token creation takes scopes and the token list shows each token's scopes", async () => {
    const s = await newSession();
    const scoped = await http(`${t.api}/account/tokens`, {
      method: "POST",
      json: { name: "ro", scopes: ["links:read", "analytics:read", "links:read"] },
      headers: s.headers,
    });
    expect(scoped.status).toBe(201);
    expect(scoped.json.record.scopes).toEqual(["links:read", "analytics:read"]);
    const classic = await http(`${t.api}/account/tokens`, { method: "POST", json: { name: "all" }, headers: s.headers });
    expect(classic.json.record.scopes).toEqual([...SCOPES]);
    const list = (await http(`${t.api}/account/tokens`, { headers: s.headers })).json.tokens;
    expect(list.map((x: { name: string; scopes: string[] }) => [x.name, x.scopes])).toEqual([
      ["all", [...SCOPES]],
      ["ro", ["links:read", "analytics:read"]],
    ]);
    // The new token does what its scopes say.
    const token = bearer(scoped.json.token);
    expect((await http(`${t.api}/links`, { headers: token })).status).toBe(200);
    expect((await http(`${t.api}/links`, { method: "POST", json: { url: "https://example.com/g" }, headers: token })).status).toBe(403);
  });

  it.each([[["links:admin"]], ["links:read"], [[1]], [null], [{ links: "read" }]])(
    "invalid scope names answer 400 VALIDATION_FAILED naming scopes: %j",
    async (scopes) => {
      const s = await newSession();
      const r = await http(`${t.api}/account/tokens`, { method: "POST", json: { name: "x", scopes }, headers: s.headers });
      expect(r.status).toBe(400);
      expect(r.json.error).toBe("VALIDATION_FAILED");
      expect(Object.keys(r.json.fields)).toEqual(["scopes"]);
      expect(r.json.fields.scopes[0]).toContain("links:read");
    },
  );
});

describe("/openapi.json", () => {
  it("each scoped operation declares 403 INSUFFICIENT_SCOPE and names its scope", async () => {
    const doc = (await http(`${t.api}/openapi.json`)).json;
    const ops = Object.values(doc.paths as Record<string, Record<string, any>>).flatMap((item) => Object.values(item));
    const scoped = ops.filter((o) => o["x-scopes"]);
    expect(scoped.length).toBeGreaterThan(20);
    for (const o of scoped) {
      expect([o.operationId, Object.keys(o.responses)]).toEqual([o.operationId, expect.arrayContaining(["403"])]);
      expect(o.description).toContain(`\`${o["x-scopes"][0]}\` scope`);
      expect(SCOPES).toContain(o["x-scopes"][0]);
    }
    expect(doc.paths["/links"].post["x-scopes"]).toEqual(["links:write"]);
    expect(doc.paths["/links"].get["x-scopes"]).toEqual(["links:read"]);
    expect(doc.paths["/analytics"].get["x-scopes"]).toEqual(["analytics:read"]);
    expect(doc.paths["/account"].get["x-scopes"]).toBeUndefined();
    expect(doc.paths["/links"].post.responses["403"].description).toContain("INSUFFICIENT_SCOPE");
  });
});
