import { eq, inArray, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clickRollups, clicks, links, linktreeItems, linktrees, slugBlocks } from "../../../db/schema";
import { clickTs } from "../../lib/ids";
import { createTestServer, http, type TestServer, type TestUser } from "../../test/harness";

let t: TestServer;
let alice: TestUser;
let bob: TestUser;
let seq = 0;

beforeAll(async () => {
  t = await createTestServer();
  // pro: 10,000 token requests an hour, so the suite never meets the free plan's 100.
  alice = await t.user({ plan: "pro" });
  bob = await t.user({ plan: "pro" });
});
afterAll(() => t?.close());

const uniqueSlug = (p = "tree") => `${p}-${Date.now().toString(36)}-${seq++}`;
const req = (method: string, path: string, json?: unknown, auth: Record<string, string> = alice.auth) =>
  http(`${t.api}${path}`, { method, json, headers: auth });
const newTree = async (json: Record<string, unknown> = {}, auth = alice.auth) => {
  const r = await req("POST", "/linktrees", { slug: uniqueSlug(), title: "My links", ...json }, auth);
  expect(r.status).toBe(201);
  return r.json;
};
const newItem = async (treeId: string, json: Record<string, unknown> = {}, auth = alice.auth) => {
  const r = await req("POST", `/linktrees/${treeId}/items`, { title: "Item", url: "https://example.com/", ...json }, auth);
  expect(r.status).toBe(201);
  return r.json;
};
const detail = async (treeId: string) => {
  const r = await req("GET", `/linktrees/${treeId}`);
  expect(r.status).toBe(200);
  return r.json;
};
/** Test cases named by their body, long repeated values shortened to "x×101"; the body moves last. */
const named = <T extends unknown[]>(cases: [Record<string, unknown>, ...T][]) =>
  cases.map(
    ([body, ...rest]) =>
      [JSON.stringify(body).replace(/(.)\1{19,}/g, (m: string, c: string) => `${c}×${m.length}`), ...rest, body] as [string, ...T, Record<string, unknown>],
  );
const slugOf = (shortUrl: string) => new URL(shortUrl).pathname.slice(1);
const liveLinkBySlug = async (slug: string) => (await t.app.db.select().from(links).where(eq(links.slug, slug)))[0];
/** A stored click with its hourly rollup, as the click recorder writes them. */
const addClick = async (linkId: string, timestamp: number) => {
  const hour = Math.floor(timestamp / 3_600_000) * 3_600_000;
  await t.app.db.insert(clicks).values({ linkId, ts: clickTs(timestamp), workspaceId: alice.workspaceId, timestamp, device: "desktop", rule: "url" });
  await t.app.db
    .insert(clickRollups)
    .values({ linkId, hour, count: 1 })
    .onConflictDoUpdate({ target: [clickRollups.linkId, clickRollups.hour], set: { count: sql`${clickRollups.count} + 1` } });
};

describe("POST /linktrees", () => {
  it("creates an unpublished linktree with 201 and exactly the Linktree fields", async () => {
    const slug = uniqueSlug();
    const r = await req("POST", "/linktrees", { slug, title: "Ana", bio: "Hello", avatar_url: "https://img.example/a.png" });
    expect(r.status).toBe(201);
    expect(r.json).toEqual({
      id: expect.any(String),
      slug,
      title: "Ana",
      bio: "Hello",
      avatar_url: "https://img.example/a.png",
      published: false,
      created_at: expect.any(Number),
      updated_at: expect.any(Number),
    });
  });

  it("defaults bio and avatar_url to null", async () => {
    const tree = await newTree();
    expect(tree).toMatchObject({ bio: null, avatar_url: null, published: false });
  });

  it("creates the page's own link record with the linktree slug, absent from GET /links", async () => {
    const tree = await newTree();
    const link = await liveLinkBySlug(tree.slug);
    expect(link).toMatchObject({ kind: "linktree", workspaceId: alice.workspaceId, deletedAt: null });
    const list = await req("GET", "/links");
    expect(list.json.links.map((l: { slug: string }) => l.slug)).not.toContain(tree.slug);
  });

  it.each(
    named([
      [{ slug: "Bad Slug" }, "INVALID_LINK_ID", "slug"],
      [{ slug: "x".repeat(51) }, "INVALID_LINK_ID", "slug"],
      [{ slug: "" }, "INVALID_LINK_ID", "slug"],
      [{ title: "x".repeat(101) }, "VALIDATION_FAILED", "title"],
      [{ title: 5 }, "VALIDATION_FAILED", "title"],
      [{ bio: "x".repeat(301) }, "VALIDATION_FAILED", "bio"],
      [{ avatar_url: "ftp://example.com/a.png" }, "VALIDATION_FAILED", "avatar_url"],
      [{ avatar_url: "not a url" }, "VALIDATION_FAILED", "avatar_url"],
      [{ published: true }, "VALIDATION_FAILED", "published"],
      [{ color: "red" }, "VALIDATION_FAILED", "color"],
    ] as [Record<string, unknown>, string, string][]),
  )("rejects %s with 400 %s naming the field", async (_name, code, field, extra) => {
    const r = await req("POST", "/linktrees", { slug: uniqueSlug(), title: "T", ...extra });
    expect(r.status).toBe(400);
    expect(r.json.error).toBe(code);
    expect(r.json.fields[field]).toEqual(expect.arrayContaining([expect.any(String)]));
  });

  it("requires slug and title", async () => {
    const r = await req("POST", "/linktrees", {});
    expect(r.status).toBe(400);
    expect(Object.keys(r.json.fields).sort()).toEqual(["slug", "title"]);
  });

  it("accepts a title of exactly 100 and a bio of exactly 300 characters", async () => {
    const tree = await newTree({ title: "t".repeat(100), bio: "b".repeat(300) });
    expect(tree.title).toHaveLength(100);
  });

  it("rejects an avatar_url on the redirect domain (no loops)", async () => {
    const r = await req("POST", "/linktrees", { slug: uniqueSlug(), title: "T", avatar_url: `${t.redirect}/x.png` });
    expect(r.status).toBe(400);
    expect(r.json.fields.avatar_url).toBeDefined();
  });

  it("answers 409 SLUG_ALREADY_IN_USE for a slug taken by another linktree", async () => {
    const tree = await newTree();
    const r = await req("POST", "/linktrees", { slug: tree.slug, title: "Again" }, bob.auth);
    expect(r.status).toBe(409);
    expect(r.json).toEqual({ error: "SLUG_ALREADY_IN_USE" });
  });

  it("shares the slug namespace with links in both directions", async () => {
    const slug = uniqueSlug("shared");
    const link = await req("POST", "/links", { url: "https://example.com/", slug }, bob.auth);
    expect(link.status).toBe(201);
    const r = await req("POST", "/linktrees", { slug, title: "T" });
    expect(r.status).toBe(409);
    expect(r.json.error).toBe("SLUG_ALREADY_IN_USE");
    const tree = await newTree();
    const l = await req("POST", "/links", { url: "https://example.com/", slug: tree.slug }, bob.auth);
    expect(l.status).toBe(409);
    expect(l.json.error).toBe("LINK_ID_ALREADY_IN_USE");
  });

  it("two concurrent creates of one slug: one 201, one 409", async () => {
    const slug = uniqueSlug("race");
    const [a, b] = await Promise.all([req("POST", "/linktrees", { slug, title: "A" }), req("POST", "/linktrees", { slug, title: "B" }, bob.auth)]);
    expect([a.status, b.status].sort()).toEqual([201, 409]);
    expect((a.status === 409 ? a : b).json).toEqual({ error: "SLUG_ALREADY_IN_USE" });
  });

  it("stores nothing when the slug is taken", async () => {
    const tree = await newTree();
    const before = await t.app.db.select({ id: linktrees.id }).from(linktrees);
    await req("POST", "/linktrees", { slug: tree.slug, title: "Again" });
    expect(await t.app.db.select({ id: linktrees.id }).from(linktrees)).toHaveLength(before.length);
  });

  it("answers 401 without a credential", async () => {
    const r = await req("POST", "/linktrees", { slug: uniqueSlug(), title: "T" }, {});
    expect(r.status).toBe(401);
    expect(r.json).toEqual({ error: "UNAUTHORIZED" });
  });
});

describe("GET /linktrees", () => {
  it("lists the caller's linktrees newest first, and only theirs", async () => {
    const a = await newTree();
    const b = await newTree();
    const other = await newTree({}, bob.auth);
    const r = await req("GET", "/linktrees");
    expect(r.status).toBe(200);
    const ids = r.json.linktrees.map((l: { id: string }) => l.id);
    expect(ids.indexOf(b.id)).toBeLessThan(ids.indexOf(a.id));
    expect(ids).not.toContain(other.id);
    expect(Object.keys(r.json.linktrees[0]).sort()).toEqual(["avatar_url", "bio", "created_at", "id", "published", "slug", "title", "updated_at"]);
  });
});

describe("GET /linktrees/{id}", () => {
  it("adds items ordered by position, inactive ones included", async () => {
    const tree = await newTree();
    const first = await newItem(tree.id, { title: "First" });
    const second = await newItem(tree.id, { title: "Second" });
    await req("PATCH", `/linktrees/${tree.id}/items/${first.id}`, { active: false });
    const d = await detail(tree.id);
    expect(d).toMatchObject({ id: tree.id, slug: tree.slug, title: tree.title });
    expect(d.items.map((i: { id: string }) => i.id)).toEqual([first.id, second.id]);
    expect(d.items[0].active).toBe(false);
  });

  it("answers 404 NOT_FOUND for an unknown id of any shape", async () => {
    for (const id of ["nope", "abcdefgh", "x".repeat(80), "%20"]) {
      const r = await req("GET", `/linktrees/${id}`);
      expect(r.status).toBe(404);
      expect(r.json).toEqual({ error: "NOT_FOUND" });
    }
  });
});

describe("PATCH /linktrees/{id}", () => {
  it("updates the given members and keeps the rest", async () => {
    const tree = await newTree({ bio: "old bio", avatar_url: "https://img.example/a.png" });
    const r = await req("PATCH", `/linktrees/${tree.id}`, { title: "New title" });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ title: "New title", bio: "old bio", avatar_url: "https://img.example/a.png", slug: tree.slug });
    expect(r.json.updated_at).toBeGreaterThan(tree.updated_at);
  });

  it("clears bio and avatar_url with null", async () => {
    const tree = await newTree({ bio: "old bio", avatar_url: "https://img.example/a.png" });
    const r = await req("PATCH", `/linktrees/${tree.id}`, { bio: null, avatar_url: null });
    expect(r.json).toMatchObject({ bio: null, avatar_url: null });
    expect(await detail(tree.id)).toMatchObject({ bio: null, avatar_url: null });
  });

  it("publishes and unpublishes", async () => {
    const tree = await newTree();
    expect((await req("PATCH", `/linktrees/${tree.id}`, { published: true })).json.published).toBe(true);
    expect((await detail(tree.id)).published).toBe(true);
    expect((await req("PATCH", `/linktrees/${tree.id}`, { published: false })).json.published).toBe(false);
  });

  it("renaming the slug moves the reservation and rewrites the page link record", async () => {
    const tree = await newTree();
    const record = await liveLinkBySlug(tree.slug);
    const slug = uniqueSlug("renamed");
    const r = await req("PATCH", `/linktrees/${tree.id}`, { slug });
    expect(r.status).toBe(200);
    expect(r.json.slug).toBe(slug);
    const [moved] = await t.app.db.select().from(links).where(eq(links.id, record.id));
    expect(moved).toMatchObject({ slug, url: `${t.redirect}/${slug}` });
    // The old slug is free again.
    const l = await req("POST", "/links", { url: "https://example.com/", slug: tree.slug }, bob.auth);
    expect(l.status).toBe(201);
  });

  it("renaming to a taken slug answers 409 SLUG_ALREADY_IN_USE and changes nothing", async () => {
    const tree = await newTree({ title: "Before" });
    const other = await newTree();
    const r = await req("PATCH", `/linktrees/${tree.id}`, { slug: other.slug, title: "After", published: true });
    expect(r.status).toBe(409);
    expect(r.json).toEqual({ error: "SLUG_ALREADY_IN_USE" });
    const d = await detail(tree.id);
    expect(d).toMatchObject({ slug: tree.slug, title: "Before", published: false, updated_at: tree.updated_at });
    expect(await liveLinkBySlug(tree.slug)).toBeDefined();
  });

  it("renaming to its own slug is a no-op for the reservation", async () => {
    const tree = await newTree();
    const r = await req("PATCH", `/linktrees/${tree.id}`, { slug: tree.slug });
    expect(r.status).toBe(200);
  });

  it.each(
    named([
      [{}, "VALIDATION_FAILED", "body"],
      [{ slug: "UPPER" }, "INVALID_LINK_ID", "slug"],
      [{ title: "x".repeat(101) }, "VALIDATION_FAILED", "title"],
      [{ title: null }, "VALIDATION_FAILED", "title"],
      [{ bio: "x".repeat(301) }, "VALIDATION_FAILED", "bio"],
      [{ avatar_url: "javascript:alert(1)" }, "VALIDATION_FAILED", "avatar_url"],
      [{ published: "true" }, "VALIDATION_FAILED", "published"],
      [{ published: 1 }, "VALIDATION_FAILED", "published"],
      [{ items: [] }, "VALIDATION_FAILED", "items"],
    ] as [Record<string, unknown>, string, string][]),
  )("rejects %s with 400 %s naming the field", async (_name, code, field, body) => {
    const tree = await newTree();
    const r = await req("PATCH", `/linktrees/${tree.id}`, body);
    expect(r.status).toBe(400);
    expect(r.json.error).toBe(code);
    expect(r.json.fields[field]).toEqual(expect.arrayContaining([expect.any(String)]));
  });
});

describe("DELETE /linktrees/{id}", () => {
  it("answers 204 and removes the linktree, its items and their link records, keeping clicks", async () => {
    const tree = await newTree();
    const item = await newItem(tree.id);
    const pageLink = await liveLinkBySlug(tree.slug);
    const itemLink = await liveLinkBySlug(slugOf(item.short_url));
    await addClick(itemLink.id, Date.now());
    const r = await req("DELETE", `/linktrees/${tree.id}`);
    expect(r.status).toBe(204);
    expect(r.text).toBe("");
    expect((await req("GET", `/linktrees/${tree.id}`)).status).toBe(404);
    expect(
      await t.app.db
        .select()
        .from(links)
        .where(inArray(links.id, [pageLink.id, itemLink.id])),
    ).toEqual([]);
    expect(await t.app.db.select().from(linktreeItems).where(eq(linktreeItems.linktreeId, tree.id))).toEqual([]);
    expect(await t.app.db.select().from(clicks).where(eq(clicks.linkId, itemLink.id))).toHaveLength(1);
    // Both slugs are free.
    expect((await req("POST", "/links", { url: "https://example.com/", slug: tree.slug }, bob.auth)).status).toBe(201);
    expect((await req("POST", "/links", { url: "https://example.com/", slug: itemLink.slug }, bob.auth)).status).toBe(201);
  });

  it("answers 404 the second time", async () => {
    const tree = await newTree();
    expect((await req("DELETE", `/linktrees/${tree.id}`)).status).toBe(204);
    expect((await req("DELETE", `/linktrees/${tree.id}`)).status).toBe(404);
  });
});

describe("POST /linktrees/{id}/items", () => {
  it("creates an item with 201, exactly the LinktreeItem fields, and its own short link", async () => {
    const tree = await newTree();
    const r = await req("POST", `/linktrees/${tree.id}/items`, { title: "Shop", url: "https://shop.example/?utm_source=tree" });
    expect(r.status).toBe(201);
    expect(r.json).toEqual({
      id: expect.any(String),
      title: "Shop",
      url: "https://shop.example/?utm_source=tree",
      short_url: expect.stringMatching(new RegExp(`^${t.redirect}/[0-9a-z]{4}$`)),
      position: 0,
      active: true,
      created_at: expect.any(Number),
      updated_at: expect.any(Number),
    });
    const link = await liveLinkBySlug(slugOf(r.json.short_url));
    expect(link).toMatchObject({ kind: "linktree_item", workspaceId: alice.workspaceId, url: "https://shop.example/?utm_source=tree" });
  });

  it("item links are linktree-owned: absent from GET /links and 409 LINKTREE_LINK_NOT_EDITABLE through /links", async () => {
    const tree = await newTree();
    const item = await newItem(tree.id);
    const link = await liveLinkBySlug(slugOf(item.short_url));
    const list = await req("GET", "/links");
    expect(list.json.links.map((l: { id: string }) => l.id)).not.toContain(link.id);
    expect((await req("PATCH", `/links/${link.id}`, { url: "https://evil.example/" })).json).toEqual({ error: "LINKTREE_LINK_NOT_EDITABLE" });
    expect((await req("DELETE", `/links/${link.id}`)).json).toEqual({ error: "LINKTREE_LINK_NOT_EDITABLE" });
    const page = await liveLinkBySlug(tree.slug);
    expect((await req("DELETE", `/links/${page.id}`)).status).toBe(409);
  });

  it("appends by default and inserts at a given position, shifting the rest", async () => {
    const tree = await newTree();
    const a = await newItem(tree.id, { title: "a" });
    const b = await newItem(tree.id, { title: "b" });
    const c = await newItem(tree.id, { title: "c", position: 1 });
    expect(c.position).toBe(1);
    const d = await detail(tree.id);
    expect(d.items.map((i: { id: string; position: number }) => [i.id, i.position])).toEqual([
      [a.id, 0],
      [c.id, 1],
      [b.id, 2],
    ]);
  });

  it("clamps a position outside 0..n", async () => {
    const tree = await newTree();
    const a = await newItem(tree.id, { position: 99 });
    expect(a.position).toBe(0);
    const b = await newItem(tree.id, { position: 99 });
    expect(b.position).toBe(1);
    const c = await newItem(tree.id, { position: -5 });
    expect(c.position).toBe(0);
    expect((await detail(tree.id)).items.map((i: { id: string }) => i.id)).toEqual([c.id, a.id, b.id]);
  });

  it("keeps positions exactly 0..n-1 under concurrent inserts", async () => {
    const tree = await newTree();
    const n = 12;
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        req("POST", `/linktrees/${tree.id}/items`, { title: `i${i}`, url: "https://example.com/", position: i % 3 === 0 ? 0 : undefined }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(n).fill(201));
    const d = await detail(tree.id);
    expect(d.items.map((i: { position: number }) => i.position)).toEqual([...Array(n).keys()]);
  });

  it.each(
    named([
      [{ title: "" }, "title"],
      [{ title: "x".repeat(101) }, "title"],
      [{ url: "mailto:a@b.c" }, "url"],
      [{ url: `https://example.com/${"x".repeat(4100)}` }, "url"],
      [{ position: 1.5 }, "position"],
      [{ position: "1" }, "position"],
      [{ active: false }, "active"],
      [{ extra: 1 }, "extra"],
    ] as [Record<string, unknown>, string][]),
  )("rejects %s with 400 naming the field and stores nothing", async (_name, field, extra) => {
    const tree = await newTree();
    const before = (await t.app.db.select({ id: links.id }).from(links)).length;
    const r = await req("POST", `/linktrees/${tree.id}/items`, { title: "T", url: "https://example.com/", ...extra });
    expect(r.status).toBe(400);
    expect(r.json.error).toBe("VALIDATION_FAILED");
    expect(r.json.fields[field]).toEqual(expect.arrayContaining([expect.any(String)]));
    expect((await detail(tree.id)).items).toEqual([]);
    expect((await t.app.db.select({ id: links.id }).from(links)).length).toBe(before);
  });

  it("a failure after the positions shifted (no free generated slug) rolls the whole insert back", async () => {
    const tree = await newTree();
    const [a, b] = [await newItem(tree.id), await newItem(tree.id)];
    const before = (await t.app.db.select({ id: links.id }).from(links)).length;
    // Exhaust the generated namespace reversibly: every block count becomes negative.
    const flip = () => t.app.db.update(slugBlocks).set({ free: sql`-${slugBlocks.free} - 1` });
    await flip();
    try {
      const r = await req("POST", `/linktrees/${tree.id}/items`, { title: "Front", url: "https://example.com/", position: 0 });
      expect(r.status).toBe(503);
      expect(r.json).toEqual({ error: "SLUGS_EXHAUSTED" });
    } finally {
      await flip();
    }
    expect((await detail(tree.id)).items.map((i: { id: string; position: number }) => [i.id, i.position])).toEqual([
      [a.id, 0],
      [b.id, 1],
    ]);
    expect((await t.app.db.select({ id: links.id }).from(links)).length).toBe(before);
  });

  it("rejects an item url on the redirect domain and stores nothing", async () => {
    const tree = await newTree();
    const r = await req("POST", `/linktrees/${tree.id}/items`, { title: "Loop", url: `${t.redirect}/${tree.slug}` });
    expect(r.status).toBe(400);
    expect(r.json.fields.url).toBeDefined();
    expect((await detail(tree.id)).items).toEqual([]);
  });

  it("requires title and url", async () => {
    const tree = await newTree();
    const r = await req("POST", `/linktrees/${tree.id}/items`, {});
    expect(r.status).toBe(400);
    expect(Object.keys(r.json.fields).sort()).toEqual(["title", "url"]);
  });

  it("answers 404 for an unknown linktree", async () => {
    const r = await req("POST", `/linktrees/unknown/items`, { title: "T", url: "https://example.com/" });
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ error: "NOT_FOUND" });
  });
});

describe("PATCH /linktrees/{id}/items/{itemId}", () => {
  it("changing the url changes the item's short link destination, same slug", async () => {
    const tree = await newTree();
    const item = await newItem(tree.id, { url: "https://old.example/" });
    const r = await req("PATCH", `/linktrees/${tree.id}/items/${item.id}`, { url: "https://new.example/" });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ url: "https://new.example/", short_url: item.short_url });
    expect(await liveLinkBySlug(slugOf(item.short_url))).toMatchObject({ url: "https://new.example/" });
  });

  it("updates title and active and keeps the rest", async () => {
    const tree = await newTree();
    const item = await newItem(tree.id, { title: "Old" });
    const r = await req("PATCH", `/linktrees/${tree.id}/items/${item.id}`, { title: "New", active: false });
    expect(r.json).toMatchObject({ title: "New", active: false, url: item.url, position: 0 });
    expect(r.json.updated_at).toBeGreaterThan(item.updated_at);
  });

  it("moves an item and keeps positions dense, down and up, clamped to n-1", async () => {
    const tree = await newTree();
    const [a, b, c, d] = [await newItem(tree.id), await newItem(tree.id), await newItem(tree.id), await newItem(tree.id)];
    const order = async () => (await detail(tree.id)).items.map((i: { id: string; position: number }) => [i.id, i.position]);
    expect((await req("PATCH", `/linktrees/${tree.id}/items/${a.id}`, { position: 2 })).json.position).toBe(2);
    expect(await order()).toEqual([
      [b.id, 0],
      [c.id, 1],
      [a.id, 2],
      [d.id, 3],
    ]);
    await req("PATCH", `/linktrees/${tree.id}/items/${d.id}`, { position: 0 });
    expect(await order()).toEqual([
      [d.id, 0],
      [b.id, 1],
      [c.id, 2],
      [a.id, 3],
    ]);
    expect((await req("PATCH", `/linktrees/${tree.id}/items/${b.id}`, { position: 50 })).json.position).toBe(3);
    expect(await order()).toEqual([
      [d.id, 0],
      [c.id, 1],
      [a.id, 2],
      [b.id, 3],
    ]);
  });

  it("keeps positions dense under concurrent moves", async () => {
    const tree = await newTree();
    const items = [];
    for (let i = 0; i < 6; i++) items.push(await newItem(tree.id));
    await Promise.all(items.map((it, i) => req("PATCH", `/linktrees/${tree.id}/items/${it.id}`, { position: (i * 7) % 6 })));
    expect((await detail(tree.id)).items.map((i: { position: number }) => i.position)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it("a failing url leaves title and position unchanged", async () => {
    const tree = await newTree();
    const item = await newItem(tree.id, { title: "Keep" });
    await newItem(tree.id);
    const r = await req("PATCH", `/linktrees/${tree.id}/items/${item.id}`, { title: "Changed", position: 1, url: `${t.redirect}/loop` });
    expect(r.status).toBe(400);
    const d = await detail(tree.id);
    expect(d.items[0]).toMatchObject({ id: item.id, title: "Keep", position: 0 });
  });

  it.each(
    named([
      [{}, "body"],
      [{ title: "" }, "title"],
      [{ url: "nope" }, "url"],
      [{ position: "2" }, "position"],
      [{ active: "false" }, "active"],
      [{ active: 0 }, "active"],
      [{ slug: "abcd" }, "slug"],
    ] as [Record<string, unknown>, string][]),
  )("rejects %s with 400 naming the field", async (_name, field, body) => {
    const tree = await newTree();
    const item = await newItem(tree.id);
    const r = await req("PATCH", `/linktrees/${tree.id}/items/${item.id}`, body);
    expect(r.status).toBe(400);
    expect(r.json.fields[field]).toEqual(expect.arrayContaining([expect.any(String)]));
  });

  it("answers 404 for an unknown item, or an item of another linktree", async () => {
    const tree = await newTree();
    const other = await newTree();
    const item = await newItem(other.id);
    expect((await req("PATCH", `/linktrees/${tree.id}/items/nope`, { title: "x" })).status).toBe(404);
    const r = await req("PATCH", `/linktrees/${tree.id}/items/${item.id}`, { title: "x" });
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ error: "NOT_FOUND" });
  });
});

describe("DELETE /linktrees/{id}/items/{itemId}", () => {
  it("answers 204, removes the item and its link record, frees the slug, closes the gap and keeps clicks", async () => {
    const tree = await newTree();
    const [a, b, c] = [await newItem(tree.id), await newItem(tree.id), await newItem(tree.id)];
    const link = await liveLinkBySlug(slugOf(b.short_url));
    await addClick(link.id, Date.now());
    const r = await req("DELETE", `/linktrees/${tree.id}/items/${b.id}`);
    expect(r.status).toBe(204);
    expect(r.text).toBe("");
    expect((await detail(tree.id)).items.map((i: { id: string; position: number }) => [i.id, i.position])).toEqual([
      [a.id, 0],
      [c.id, 1],
    ]);
    expect(await t.app.db.select().from(links).where(eq(links.id, link.id))).toEqual([]);
    expect(await t.app.db.select().from(clicks).where(eq(clicks.linkId, link.id))).toHaveLength(1);
    expect((await req("POST", "/links", { url: "https://example.com/", slug: link.slug }, bob.auth)).status).toBe(201);
    expect((await req("DELETE", `/linktrees/${tree.id}/items/${b.id}`)).status).toBe(404);
  });
});

describe("positions under concurrent deletes", () => {
  it("closes every gap: the remaining items are exactly 0..n-1", async () => {
    const tree = await newTree();
    const items = [];
    for (let i = 0; i < 8; i++) items.push(await newItem(tree.id, { title: `i${i}` }));
    const doomed = [items[0], items[3], items[4], items[7]];
    const r = await Promise.all(doomed.map((it) => req("DELETE", `/linktrees/${tree.id}/items/${it.id}`)));
    expect(r.map((x) => x.status)).toEqual([204, 204, 204, 204]);
    const d = await detail(tree.id);
    expect(d.items.map((i: { title: string; position: number }) => [i.title, i.position])).toEqual([
      ["i1", 0],
      ["i2", 1],
      ["i5", 2],
      ["i6", 3],
    ]);
  });
});

describe("GET /linktrees/{id}/analytics", () => {
  it("counts views, item clicks and per-item counts in an inclusive range, inactive items included", async () => {
    const tree = await newTree();
    const a = await newItem(tree.id, { title: "A" });
    const b = await newItem(tree.id, { title: "B" });
    await req("PATCH", `/linktrees/${tree.id}/items/${b.id}`, { active: false });
    const page = await liveLinkBySlug(tree.slug);
    const la = await liveLinkBySlug(slugOf(a.short_url));
    const lb = await liveLinkBySlug(slugOf(b.short_url));
    // Hours apart, so whole hours (rollups) and partial edge hours are both counted.
    const H = 3_600_000;
    const t0 = 1_700_000_000_000;
    for (const [id, ts] of [
      [page.id, t0],
      [page.id, t0 + 10 * H],
      [page.id, t0 + 20 * H],
      [la.id, t0],
      [la.id, t0 + 20 * H],
      [lb.id, t0 + 10 * H],
    ] as const)
      await addClick(id, ts);

    const all = await req("GET", `/linktrees/${tree.id}/analytics`);
    expect(all.status).toBe(200);
    expect(all.json).toEqual({
      id: tree.id,
      slug: tree.slug,
      title: tree.title,
      published: false,
      views: 3,
      clicks: 3,
      items: [
        { id: a.id, title: "A", short_url: a.short_url, active: true, count: 2 },
        { id: b.id, title: "B", short_url: b.short_url, active: false, count: 1 },
      ],
    });
    const ranged = await req("GET", `/linktrees/${tree.id}/analytics?from=${t0 + 10 * H}&to=${t0 + 20 * H}`);
    expect(ranged.json).toMatchObject({ views: 2, clicks: 2, items: [{ count: 1 }, { count: 1 }] });
    const point = await req("GET", `/linktrees/${tree.id}/analytics?from=${t0}&to=${t0}`);
    expect(point.json).toMatchObject({ views: 1, clicks: 1 });
  });

  it("answers zeros for a linktree without clicks", async () => {
    const tree = await newTree();
    const r = await req("GET", `/linktrees/${tree.id}/analytics`);
    expect(r.json).toMatchObject({ views: 0, clicks: 0, items: [] });
  });

  it.each([["from=abc"], ["to=1.5"], ["from=1e3"], ["from=12abc"], ["from="]])("rejects %s with 400 VALIDATION_FAILED", async (q) => {
    const tree = await newTree();
    const r = await req("GET", `/linktrees/${tree.id}/analytics?${q}`);
    expect(r.status).toBe(400);
    expect(r.json.error).toBe("VALIDATION_FAILED");
    expect(Object.keys(r.json.fields).length).toBeGreaterThan(0);
  });
});

describe("workspace isolation", () => {
  it("answers 404 on every endpoint for another workspace's linktree and items", async () => {
    const tree = await newTree();
    const item = await newItem(tree.id);
    const calls: [string, string, unknown?][] = [
      ["GET", `/linktrees/${tree.id}`],
      ["PATCH", `/linktrees/${tree.id}`, { title: "mine" }],
      ["DELETE", `/linktrees/${tree.id}`],
      ["POST", `/linktrees/${tree.id}/items`, { title: "T", url: "https://example.com/" }],
      ["PATCH", `/linktrees/${tree.id}/items/${item.id}`, { title: "mine" }],
      ["DELETE", `/linktrees/${tree.id}/items/${item.id}`],
      ["GET", `/linktrees/${tree.id}/analytics`],
    ];
    for (const [method, path, body] of calls) {
      const r = await req(method, path, body, bob.auth);
      expect([method, path, r.status, r.json]).toEqual([method, path, 404, { error: "NOT_FOUND" }]);
    }
    expect((await req("GET", "/linktrees", undefined, bob.auth)).json.linktrees.map((l: { id: string }) => l.id)).not.toContain(tree.id);
    const d = await detail(tree.id);
    expect(d).toMatchObject({ title: tree.title, items: [{ id: item.id, title: item.title }] });
  });

  it("answers 401 on every endpoint without a credential", async () => {
    for (const [method, path] of [
      ["GET", "/linktrees"],
      ["GET", "/linktrees/x"],
      ["PATCH", "/linktrees/x"],
      ["DELETE", "/linktrees/x"],
      ["POST", "/linktrees/x/items"],
      ["PATCH", "/linktrees/x/items/y"],
      ["DELETE", "/linktrees/x/items/y"],
      ["GET", "/linktrees/x/analytics"],
    ]) {
      const r = await req(method, path, method === "GET" || method === "DELETE" ? undefined : { title: "x" }, {});
      expect([method, path, r.status]).toEqual([method, path, 401]);
    }
  });
});

describe("dashboard procedures", () => {
  it("reorderItems sets positions to the given order", async () => {
    const tree = await newTree();
    const [a, b, c] = [await newItem(tree.id), await newItem(tree.id), await newItem(tree.id)];
    const caller = t.caller(alice.auth);
    const out = await caller.linktree.reorderItems({ id: tree.id, itemIds: [c.id, a.id, b.id] });
    expect(out.map((i) => [i.id, i.position])).toEqual([
      [c.id, 0],
      [a.id, 1],
      [b.id, 2],
    ]);
    expect((await detail(tree.id)).items.map((i: { id: string }) => i.id)).toEqual([c.id, a.id, b.id]);
  });

  it("reorderItems rejects a list that is not a permutation of the items and changes nothing", async () => {
    const tree = await newTree();
    const [a, b] = [await newItem(tree.id), await newItem(tree.id)];
    const caller = t.caller(alice.auth);
    for (const itemIds of [[a.id], [a.id, a.id], [a.id, b.id, "zzz"], [b.id, "zzz"]]) {
      await expect(caller.linktree.reorderItems({ id: tree.id, itemIds })).rejects.toMatchObject({
        publicCode: "VALIDATION_FAILED",
        fields: { itemIds: expect.any(Array) },
      });
    }
    expect((await detail(tree.id)).items.map((i: { id: string }) => i.id)).toEqual([a.id, b.id]);
  });

  it("reorderItems answers 404 for another workspace", async () => {
    const tree = await newTree();
    await expect(t.caller(bob.auth).linktree.reorderItems({ id: tree.id, itemIds: [] })).rejects.toMatchObject({ publicCode: "NOT_FOUND" });
  });

  it("publicPage returns only published linktrees with active items in order", async () => {
    const tree = await newTree({ title: "Pub", bio: "Bio" });
    const a = await newItem(tree.id, { title: "A" });
    const b = await newItem(tree.id, { title: "B" });
    const c = await newItem(tree.id, { title: "C", position: 0 });
    await req("PATCH", `/linktrees/${tree.id}/items/${b.id}`, { active: false });
    const anon = t.caller({});
    const pageLink = await liveLinkBySlug(tree.slug);
    await expect(anon.linktree.publicPage({ link_id: pageLink.id })).rejects.toMatchObject({ publicCode: "NOT_FOUND" });
    await req("PATCH", `/linktrees/${tree.id}`, { published: true });
    const page = await anon.linktree.publicPage({ link_id: pageLink.id });
    expect(page).toMatchObject({
      slug: tree.slug,
      title: "Pub",
      bio: "Bio",
      avatar_url: null,
      url: `${t.redirect}/${tree.slug}`,
      og_image: `${t.redirect}/_/og/${pageLink.id}.png`,
      theme: null,
      button_style: "rounded",
      socials: [],
      items: [
        { kind: "link", id: c.id, title: "C", short_url: c.short_url },
        { kind: "link", id: a.id, title: "A", short_url: a.short_url },
      ],
    });
    const link = await t.caller({}).link.create({ url: "https://example.com/" });
    await expect(anon.linktree.publicPage({ link_id: link.id })).rejects.toMatchObject({ publicCode: "NOT_FOUND" });
  });
});

describe("OpenAPI document", () => {
  it("lists every linktree path under the linktrees tag, with no dashboard-only procedure", async () => {
    const r = await http(`${t.api}/openapi.json`);
    const doc = r.json;
    const paths = Object.keys(doc.paths).filter((p) => p.startsWith("/linktrees"));
    expect(paths.sort()).toEqual(["/linktrees", "/linktrees/{id}", "/linktrees/{id}/analytics", "/linktrees/{id}/items", "/linktrees/{id}/items/{itemId}"]);
    for (const p of paths) for (const op of Object.values(doc.paths[p]) as { tags: string[] }[]) expect(op.tags).toEqual(["linktrees"]);
  });
});
