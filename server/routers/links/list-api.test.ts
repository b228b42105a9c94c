import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { domains } from "../../../db/schema";
import { newLinkId } from "../../lib/ids";
import { createTestServer, http, type TestServer, type TestUser } from "../../test/harness";
import { linkTools, uniq } from "./links.test-helper";

let t: TestServer;

beforeAll(async () => {
  t = await createTestServer();
});
afterAll(() => t?.close());

const get = (u: TestUser, query = "") => http(`${t.api}/links${query}`, { headers: u.auth });
const ids = (r: { json: { links: { id: string }[] } }) => r.json.links.map((l) => l.id);

const { put, clicksOn } = linkTools(() => t);

/** Every page of `query` with `limit`, following `next_cursor`; `between` runs after each page. */
async function allPages(u: TestUser, query: string, limit: number, between: (page: number) => Promise<void> = async () => {}) {
  const pages: string[][] = [];
  let cursor: string | null = null;
  do {
    const r = await get(u, `?${query}${query ? "&" : ""}limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.json).sort()).toEqual(["links", "next_cursor"]);
    pages.push(ids(r));
    cursor = r.json.next_cursor;
    await between(pages.length);
  } while (cursor);
  return pages;
}

describe("GET /links paging and filters", () => {
  it("no parameters: the answer is byte-for-byte the full list, without next_cursor", async () => {
    const u = await t.user();
    const a = await put(u, { createdAt: 1000, updatedAt: 1000 });
    const b = await put(u, { createdAt: 2000, updatedAt: 2000 });
    const r = await get(u);
    expect(r.status).toBe(200);
    const one = async (id: string) => (await http(`${t.api}/links/${id}`, { headers: u.auth })).json;
    expect(r.text).toBe(JSON.stringify({ links: [await one(b.id), await one(a.id)] }));
  });

  it("filters without limit: every match as {links} only", async () => {
    const u = await t.user();
    for (let i = 0; i < 3; i++) await put(u, { tags: ["many"] });
    const r = await get(u, "?tag=many");
    expect(Object.keys(r.json)).toEqual(["links"]);
    expect(r.json.links).toHaveLength(3);
  });

  it("limit: the pages cover every link exactly once, newest first, ties by id", async () => {
    const u = await t.user();
    // Shared creation times: the id breaks ties, so no link falls between two pages.
    for (let i = 0; i < 7; i++) await put(u, { createdAt: 5000 + Math.floor(i / 3), updatedAt: 5000 });
    const all = ids(await get(u));
    const pages = await allPages(u, "", 3);
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
    expect(pages.flat()).toEqual(all);
  });

  it("pages never repeat or skip a pre-existing live link while links are created and deleted", async () => {
    const u = await t.user();
    const before: string[] = [];
    for (let i = 0; i < 10; i++) before.push((await put(u, { createdAt: 10_000 + i, updatedAt: 10_000 })).id);
    const deleted = new Set<string>();
    const pages = await allPages(u, "", 3, async (page) => {
      // A newer link, an older one, and one deletion of a link not yet listed, between every two pages.
      await put(u, { createdAt: 20_000 + page, updatedAt: 20_000 });
      await put(u, { createdAt: 9_000 - page, updatedAt: 9_000 });
      const victim = before[before.length - 1 - page * 3 - 1];
      if (victim) {
        const d = await http(`${t.api}/links/${victim}`, { method: "DELETE", headers: u.auth });
        expect(d.status).toBe(204);
        deleted.add(victim);
      }
    });
    const seen = pages.flat();
    expect(new Set(seen).size).toBe(seen.length);
    const expected = [...before].reverse().filter((id) => !deleted.has(id));
    expect(seen.filter((id) => before.includes(id))).toEqual(expected);
  });

  it("sort=clicks: most clicks of all time first, ties newest first, across pages", async () => {
    const u = await t.user();
    const few = await put(u, { createdAt: 1, updatedAt: 1 });
    const many = await put(u, { createdAt: 2, updatedAt: 2 });
    const none = await put(u, { createdAt: 3, updatedAt: 3 });
    const none2 = await put(u, { createdAt: 4, updatedAt: 4 });
    const few2 = await put(u, { createdAt: 5, updatedAt: 5 });
    await clicksOn(few.id, u.workspaceId, 2);
    await clicksOn(few2.id, u.workspaceId, 2);
    await clicksOn(many.id, u.workspaceId, 5);
    const order = [many.id, few2.id, few.id, none2.id, none.id];
    expect(ids(await get(u, "?sort=clicks"))).toEqual(order);
    expect((await allPages(u, "sort=clicks", 2)).flat()).toEqual(order);
  });

  it("q: case-insensitive part of slug, url, share-card title or title; % and _ are literal", async () => {
    const u = await t.user();
    const pct = await put(u, { url: "https://example.com/100%off" });
    const under = await put(u, { url: "https://example.com/a_b" });
    const titled = await put(u, { url: "https://example.com/x", title: "Spring SALE" });
    const og = await put(u, { url: "https://example.com/y", ogTitle: "Card Words" });
    await put(u, { url: "https://example.com/axb" });
    expect(ids(await get(u, "?q=%25off"))).toEqual([pct.id]);
    expect(ids(await get(u, "?q=a_b"))).toEqual([under.id]);
    expect(ids(await get(u, "?q=sale"))).toEqual([titled.id]);
    expect(ids(await get(u, "?q=CARD"))).toEqual([og.id]);
  });

  it("tag: only links carrying the tag", async () => {
    const u = await t.user();
    const tagged = await put(u, { tags: ["promo"] });
    await put(u, { tags: ["other"] });
    expect(ids(await get(u, "?tag=promo"))).toEqual([tagged.id]);
  });

  it("domain: default or a verified branded domain; anything else is 400 naming domain", async () => {
    const u = await t.user();
    const brand = `b${uniq()}.example`;
    const domainId = newLinkId();
    const now = Date.now();
    await t.app.db
      .insert(domains)
      .values({ id: domainId, workspaceId: u.workspaceId, name: brand, verificationValue: "x", verified: true, verifiedAt: now, createdAt: now });
    const onDefault = await put(u);
    const onBrand = await put(u, { domainId });
    expect(ids(await get(u, `?domain=${brand}`))).toEqual([onBrand.id]);
    expect(ids(await get(u, "?domain=default"))).toEqual([onDefault.id]);
    const bad = await get(u, "?domain=nobody.example");
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ error: "VALIDATION_FAILED", fields: { domain: expect.any(Array) } });
  });

  it("slug: the exact slug, on the default domain unless domain is given", async () => {
    const u = await t.user();
    const brand = `s${uniq()}.example`;
    const domainId = newLinkId();
    const now = Date.now();
    await t.app.db
      .insert(domains)
      .values({ id: domainId, workspaceId: u.workspaceId, name: brand, verificationValue: "x", verified: true, verifiedAt: now, createdAt: now });
    const slug = `x${uniq()}`;
    const onDefault = await put(u, { slug });
    const onBrand = await put(u, { slug, domainId });
    await put(u, { slug: `${slug}2` });
    expect(ids(await get(u, `?slug=${slug}`))).toEqual([onDefault.id]);
    expect(ids(await get(u, `?slug=${slug}&domain=${brand}`))).toEqual([onBrand.id]);
    // Not a slug (upper case): a bad value, named.
    expect((await get(u, `?slug=${slug.toUpperCase()}`)).json.fields).toEqual({ slug: [expect.stringContaining("0-9, a-z")] });
  });

  it("status: live by default (expired included), expired only past expires_at, archived matches none yet", async () => {
    const u = await t.user();
    const expired = await put(u, { expiresAt: Date.now() - 1000, createdAt: 1, updatedAt: 1 });
    const future = await put(u, { expiresAt: Date.now() + 3_600_000, createdAt: 2, updatedAt: 2 });
    const plain = await put(u, { createdAt: 3, updatedAt: 3 });
    const gone = await put(u, { createdAt: 4, updatedAt: 4 });
    await http(`${t.api}/links/${gone.id}`, { method: "DELETE", headers: u.auth });
    expect(ids(await get(u, "?status=live"))).toEqual([plain.id, future.id, expired.id]);
    expect(ids(await get(u))).toEqual([plain.id, future.id, expired.id]);
    expect(ids(await get(u, "?status=expired"))).toEqual([expired.id]);
    const archived = await get(u, "?status=archived");
    expect(archived.status).toBe(200);
    expect(archived.json).toEqual({ links: [] });
  });

  it("bad limit, cursor, sort, status or an unknown, repeated or bracketed parameter: 400 naming it", async () => {
    const u = await t.user();
    const cases: [string, string][] = [
      ["?limit=0", "limit"],
      ["?limit=1001", "limit"],
      ["?limit=abc", "limit"],
      ["?limit=", "limit"],
      ["?limit=2.5", "limit"],
      ["?limit=5&cursor=nonsense", "cursor"],
      ["?limit=5&cursor=" + Buffer.from("{}").toString("base64url"), "cursor"],
      ["?cursor=abc", "cursor"],
      ["?sort=newest", "sort"],
      ["?status=deleted", "status"],
      ["?colour=red", "colour"],
      ["?limit=2&limit=3", "limit"],
      ["?tag[]=a", "tag"],
      ["?slug=" + "a".repeat(51), "slug"],
      ["?slug=", "slug"],
      ["?slug=%21%21", "slug"],
      ["?slug=LST-1", "slug"],
      ["?slug=a%00", "slug"],
      ["?__proto__=1", "__proto__"],
      ["?__proto__=1&__proto__=2", "__proto__"],
    ];
    for (const [query, field] of cases) {
      const r = await get(u, query);
      expect(r.status, query).toBe(400);
      expect(r.json.error, query).toBe("VALIDATION_FAILED");
      expect(Object.keys(r.json.fields), query).toEqual([field]);
    }
  });

  it("a cursor of another workspace, another filter or sort, or with edited keys: 400 naming cursor", async () => {
    const u = await t.user();
    const other = await t.user();
    for (let i = 0; i < 3; i++) await put(u, { tags: ["p"] });
    for (let i = 0; i < 3; i++) await put(other, { tags: ["p"] });
    const first = await get(u, "?limit=1&tag=p");
    const cursor: string = first.json.next_cursor;
    expect(cursor).toEqual(expect.any(String));
    expect((await get(u, `?limit=1&tag=p&cursor=${cursor}`)).status).toBe(200);
    const decoded = JSON.parse(Buffer.from(cursor, "base64url").toString());
    const edited = Buffer.from(JSON.stringify({ ...decoded, key: [decoded.key[0] + 1, decoded.key[1]] })).toString("base64url");
    for (const [who, query] of [
      [other, `?limit=1&tag=p&cursor=${cursor}`],
      [u, `?limit=1&cursor=${cursor}`],
      [u, `?limit=1&tag=p&sort=clicks&cursor=${cursor}`],
      [u, `?limit=1&tag=p&cursor=${edited}`],
    ] as const) {
      const r = await get(who, query);
      expect(r.status, query).toBe(400);
      expect(r.json).toMatchObject({ error: "VALIDATION_FAILED", fields: { cursor: expect.any(Array) } });
    }
  });

  it("every parameter is documented in /openapi.json, and the answer declares next_cursor", async () => {
    const doc = (await http(`${t.appUrl}/api/openapi.json`)).json;
    const op = doc.paths["/links"].get;
    const params = op.parameters.map((p: { name: string; description?: string }) => [p.name, Boolean(p.description)]);
    expect(params).toEqual(["limit", "cursor", "sort", "q", "tag", "domain", "slug", "status", "health"].map((n) => [n, true]));
    // The answer refers to the LinkList schema, named once in components.
    expect(op.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/LinkList" });
    const answer = doc.components.schemas.LinkList;
    expect(answer.required).toEqual(["links"]);
    expect(answer.properties.next_cursor).toMatchObject({ type: "string", nullable: true });
  });
});
