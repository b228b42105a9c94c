import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestServer, http, type TestServer, type TestUser } from "../../test/harness";
import { openDatabase, type Database } from "../../../db/client";
import { AnswerCache } from "../../core/answer-cache";
import { createServices, type AppServices } from "../../core/services";
import { createContextInner } from "../../trpc/context";
import { createCaller } from "../index";

// REST `GET /links` without filters is answered from a per-instance cache of whole answers; every
// link or domain write, on any instance, clears it before the write answers.

let t: TestServer;
let u: TestUser;

beforeAll(async () => {
  t = await createTestServer();
  u = await t.user({ plan: "pro" });
});
afterAll(() => t?.close());

const list = async (query = "") => {
  const r = await http(`${t.api}/links${query}`, { headers: u.auth });
  expect(r.status).toBe(200);
  return r.json as { links: { id: string; slug: string; url: string; archived?: true }[]; next_cursor?: string | null };
};
const create = async (slug: string) => {
  const r = await http(`${t.api}/links`, { method: "POST", headers: u.auth, json: { url: `https://example.com/${slug}`, slug } });
  expect(r.status).toBe(201);
  return r.json as { id: string };
};

describe("GET /links answers from its cache only what no write has changed since", () => {
  it("a link created after a listing is in the next listing (with and without limit)", async () => {
    await create("c-one");
    expect((await list()).links.map((l) => l.slug)).toEqual(["c-one"]);
    expect((await list("?limit=10")).links.map((l) => l.slug)).toEqual(["c-one"]);
    await create("c-two");
    expect((await list()).links.map((l) => l.slug)).toEqual(["c-two", "c-one"]);
    expect((await list("?limit=10")).links.map((l) => l.slug)).toEqual(["c-two", "c-one"]);
  });

  it("an edited link reads as edited in the next listing", async () => {
    const { id } = await create("e-one");
    await list();
    expect((await http(`${t.api}/links/${id}`, { method: "PATCH", headers: u.auth, json: { url: "https://example.com/edited" } })).status).toBe(200);
    expect((await list()).links.find((l) => l.id === id)?.url).toBe("https://example.com/edited");
  });

  it("a deleted link is gone from the next listing, an archived one moves to the archived listing", async () => {
    const gone = await create("d-gone");
    const old = await create("d-old");
    expect((await list()).links.map((l) => l.id)).toEqual(expect.arrayContaining([gone.id, old.id]));
    expect((await list("?status=archived")).links).toEqual([]);
    expect((await http(`${t.api}/links/${gone.id}`, { method: "DELETE", headers: u.auth })).status).toBe(204);
    expect((await http(`${t.api}/links/${old.id}`, { method: "PATCH", headers: u.auth, json: { archived: true } })).status).toBe(200);
    const ids = (await list()).links.map((l) => l.id);
    expect(ids).not.toContain(gone.id);
    expect(ids).not.toContain(old.id);
    expect((await list("?status=archived")).links.map((l) => l.id)).toEqual([old.id]);
  });

  it("a bulk action clears it too", async () => {
    const a = await create("b-one");
    await list();
    const r = await t.caller(u.auth).link.bulkTag({ ids: [a.id], add: ["bulk"], remove: [] });
    expect(r.updated).toBe(1);
    expect((await list()).links.find((l) => l.id === a.id)).toMatchObject({ tags: ["bulk"] });
  });

  it("one workspace's answer is never another's", async () => {
    const other = await t.user({ plan: "pro" });
    await create("w-mine");
    await list();
    const theirs = await http(`${t.api}/links`, { headers: other.auth });
    expect(theirs.json.links).toEqual([]);
  });
});

describe("the answer cache", () => {
  it("a read that began before a clear stores nothing", () => {
    const c = new AnswerCache<string>(10);
    const before = c.generation;
    c.clear();
    c.set("k", "stale", 1, before);
    expect(c.get("k")).toBeUndefined();
    c.set("k", "fresh", 1, c.generation);
    expect(c.get("k")).toBe("fresh");
  });

  it("forgets an answer after its time to live (a change made behind the service's back)", () => {
    const c = new AnswerCache<string>(10, 1000);
    c.set("k", "v", 1, c.generation, 5000);
    expect(c.get("k", 5999)).toBe("v");
    expect(c.get("k", 6000)).toBeUndefined();
  });

  it("keeps at most its budget, dropping the least recently used first", () => {
    const c = new AnswerCache<string>(10);
    c.set("a", "a", 4, c.generation);
    c.set("b", "b", 4, c.generation);
    c.get("a");
    c.set("c", "c", 4, c.generation);
    expect([c.get("a"), c.get("b"), c.get("c")]).toEqual(["a", undefined, "c"]);
    c.set("huge", "huge", 11, c.generation);
    expect(c.get("huge")).toBeUndefined();
  });
});

describe.skipIf(!process.env.DATABASE_URL)("two instances on one PostgreSQL database", () => {
  let second: Database;
  let app2: AppServices;
  beforeAll(async () => {
    second = await openDatabase({ databaseUrl: (t.app.database as Database & { url?: string }).url!, migrate: false, poolSize: 2 });
    app2 = await createServices(t.app.config, second);
    // Each knows the other once a heartbeat arrived.
    await new Promise((r) => setTimeout(r, 1200));
  });
  afterAll(async () => {
    await app2?.close();
    await second?.close();
  });

  it("a link created on one instance is in the other's very next listing", async () => {
    const other = () => createCaller(createContextInner(app2, { headers: u.auth, ip: "127.0.0.1", method: "GET" })).link.list({});
    for (let i = 0; i < 5; i++) {
      await other();
      const { id } = await create(`i-${i}`);
      expect((await other()).links.map((l) => l.id)).toContain(id);
    }
  });
});
