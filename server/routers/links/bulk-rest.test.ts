import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestServer, http, type TestServer, type TestUser } from "../../test/harness";
import { createToken } from "../tokens/tokens.service";

// The dashboard's bulk actions are REST paths too: what the dashboard can do, a token can do.
let t: TestServer;
let u: TestUser;
beforeAll(async () => {
  t = await createTestServer();
  u = await t.user({ plan: "pro" });
});
afterAll(() => t?.close());

const api = (method: string, path: string, json?: unknown, auth = u.auth) => http(`${t.api}${path}`, { method, json, headers: auth });
const make = async (tag: string, n: number) => {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await api("POST", "/links", { url: `https://example.com/${tag}/${i}`, tags: [tag] })).json.id);
  return ids;
};
const tagsOf = async (id: string) => (await api("GET", `/links/${id}`)).json.tags as string[];

describe("bulk actions over REST", () => {
  it("POST /links/bulk/tags, /expiry, /archive and /delete change the chosen links and answer how many", async () => {
    const [a, b] = await make("chosen", 2);
    expect((await api("POST", "/links/bulk/tags", { ids: [a, b], add: ["launch"], remove: ["chosen"] })).json).toEqual({ updated: 2 });
    expect(await tagsOf(a)).toEqual(["launch"]);
    const at = Date.now() + 86_400_000;
    expect((await api("POST", "/links/bulk/expiry", { ids: [a], expires_at: at })).json).toEqual({ updated: 1 });
    expect((await api("GET", `/links/${a}`)).json.expires_at).toBe(at);
    expect((await api("POST", "/links/bulk/archive", { ids: [b], archived: true })).json).toEqual({ updated: 1 });
    expect((await api("GET", `/links/${b}`)).json.archived).toBe(true);
    expect((await api("POST", "/links/bulk/delete", { ids: [a, b] })).json).toEqual({ updated: 2 });
    expect((await api("GET", `/links/${a}`)).json.deleted_at).not.toBeNull();
  });

  it("an id of no link of the workspace fails the whole call with 404, changing nothing", async () => {
    const [a] = await make("partial", 1);
    const r = await api("POST", "/links/bulk/tags", { ids: [a, "zzzzzzzz"], add: ["never"] });
    expect(r.status).toBe(404);
    expect(await tagsOf(a)).toEqual(["partial"]);
  });

  it("POST /links/matching/… acts on every link the filters match when `expected` is their number, else 400 naming expected and nothing changes", async () => {
    const tag = `m${Date.now().toString(36)}`;
    const ids = await make(tag, 3);
    const wrong = await api("POST", "/links/matching/tags", { filters: { tag }, expected: 2, add: "seen" });
    expect(wrong.status).toBe(400);
    expect(Object.keys(wrong.json.fields)).toEqual(["expected"]);
    expect(await tagsOf(ids[0])).toEqual([tag]);
    expect((await api("POST", "/links/matching/tags", { filters: { tag }, expected: 3, add: "seen" })).json).toEqual({ updated: 3 });
    for (const id of ids) expect(await tagsOf(id)).toEqual([tag, "seen"].sort());
    expect((await api("POST", "/links/matching/delete", { filters: { tag }, expected: 3 })).json).toEqual({ updated: 3 });
    expect((await api("GET", `/links?tag=${tag}`)).json.links).toEqual([]);
  });

  it("are in /openapi.json and need links:write", async () => {
    const doc = (await http(`${t.api}/openapi.json`)).json;
    for (const p of ["tags", "expiry", "archive", "delete"]) {
      expect(doc.paths[`/links/bulk/${p}`]?.post, p).toBeDefined();
      expect(doc.paths[`/links/matching/${p}`]?.post, p).toBeDefined();
    }
    // A read-only token (tokens are made by a session; this one straight through the service).
    const { token } = await createToken(t.app.db, u.id, "reader", undefined, ["links:read"]);
    const refused = await api("POST", "/links/bulk/delete", { ids: ["aaaaaaaa"] }, { authorization: `Bearer ${token}` });
    expect(refused.status).toBe(403);
    expect(refused.json.error).toBe("INSUFFICIENT_SCOPE");
  });
});
