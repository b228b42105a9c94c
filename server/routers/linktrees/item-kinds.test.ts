import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { links } from "../../../db/schema";
import { createTestServer, http, type TestServer, type TestUser } from "../../test/harness";

// Item kinds (link, heading, text) and schedules (starts_at/ends_at), through the REST API.
let t: TestServer;
let alice: TestUser;
let seq = 0;

beforeAll(async () => {
  t = await createTestServer();
  alice = await t.user({ plan: "pro" });
});
afterAll(() => t?.close());

const req = (method: string, path: string, json?: unknown) => http(`${t.api}${path}`, { method, json, headers: alice.auth });
const newTree = async () => {
  const r = await req("POST", "/linktrees", { slug: `kinds-${Date.now().toString(36)}-${seq++}`, title: "Kinds" });
  expect(r.status).toBe(201);
  return r.json as { id: string; slug: string };
};
const addItem = (treeId: string, json: Record<string, unknown>) => req("POST", `/linktrees/${treeId}/items`, json);
const linkRowsOf = async (workspaceId: string) => t.app.db.select().from(links).where(eq(links.workspaceId, workspaceId));

describe("item kinds", () => {
  it("a link item made without kind reads exactly as before: no kind, window or other new member", async () => {
    const tree = await newTree();
    const r = await addItem(tree.id, { title: "Shop", url: "https://example.com/" });
    expect(r.status).toBe(201);
    expect(Object.keys(r.json).sort()).toEqual(["active", "created_at", "id", "position", "short_url", "title", "updated_at", "url"]);
  });

  it("kind link is the default and may be sent", async () => {
    const tree = await newTree();
    const r = await addItem(tree.id, { kind: "link", title: "Shop", url: "https://example.com/" });
    expect(r.status).toBe(201);
    expect(r.json.short_url).toMatch(/^http/);
    expect(r.json).not.toHaveProperty("kind");
  });

  it("a heading has a title only: no url, no short link, and no link record is made", async () => {
    const tree = await newTree();
    const before = (await linkRowsOf(alice.workspaceId)).length;
    const r = await addItem(tree.id, { kind: "heading", title: "My work" });
    expect(r.status, r.text).toBe(201);
    expect(r.json).toMatchObject({ kind: "heading", title: "My work", position: 0, active: true });
    expect(r.json).not.toHaveProperty("url");
    expect(r.json).not.toHaveProperty("short_url");
    expect((await linkRowsOf(alice.workspaceId)).length).toBe(before);
    const detail = await req("GET", `/linktrees/${tree.id}`);
    expect(detail.json.items).toEqual([r.json]);
  });

  it("a heading or text sent with url null has no url, as without one", async () => {
    const tree = await newTree();
    const r = await addItem(tree.id, { kind: "heading", title: "H", url: null });
    expect(r.status, r.text).toBe(201);
    expect(r.json).not.toHaveProperty("url");
  });

  it("PATCH url null on a link item answers 400 naming url and keeps its url", async () => {
    const tree = await newTree();
    const l = (await addItem(tree.id, { title: "L", url: "https://example.com/keep" })).json;
    const r = await req("PATCH", `/linktrees/${tree.id}/items/${l.id}`, { url: null });
    expect(r.status).toBe(400);
    expect(Object.keys(r.json.fields)).toEqual(["url"]);
    expect((await req("GET", `/linktrees/${tree.id}`)).json.items[0].url).toBe("https://example.com/keep");
  });

  it("a text item holds up to 500 characters in title; 501 answer 400 naming title", async () => {
    const tree = await newTree();
    const ok = await addItem(tree.id, { kind: "text", title: "t".repeat(500) });
    expect(ok.status).toBe(201);
    expect(ok.json.kind).toBe("text");
    const bad = await addItem(tree.id, { kind: "text", title: "t".repeat(501) });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.json.fields)).toEqual(["title"]);
  });

  it.each([
    ["a heading with a url", "url", { kind: "heading", title: "H", url: "https://example.com/" }],
    ["a text item with a url", "url", { kind: "text", title: "T", url: "https://example.com/" }],
    ["a link without a url", "url", { kind: "link", title: "L" }],
    ["a link with url null", "url", { title: "L", url: null }],
    ["a heading over 100 characters", "title", { kind: "heading", title: "h".repeat(101) }],
    ["a link title over 100 characters", "title", { title: "l".repeat(101), url: "https://example.com/" }],
    ["an unknown kind", "kind", { kind: "image", title: "I" }],
    ["a heading without title", "title", { kind: "heading" }],
    ["ends_at before starts_at", "ends_at", { kind: "heading", title: "H", starts_at: 2_000, ends_at: 1_000 }],
    ["ends_at equal to starts_at", "ends_at", { kind: "heading", title: "H", starts_at: 2_000, ends_at: 2_000 }],
    ["starts_at not an integer", "starts_at", { kind: "heading", title: "H", starts_at: 1.5 }],
    ["ends_at as a string", "ends_at", { kind: "heading", title: "H", ends_at: "1000" }],
  ] as [string, string, Record<string, unknown>][])("%s answers 400 VALIDATION_FAILED naming %s, and adds nothing", async (_name, field, body) => {
    const tree = await newTree();
    const r = await addItem(tree.id, body);
    expect(r.status, r.text).toBe(400);
    expect(r.json.error).toBe("VALIDATION_FAILED");
    expect(Object.keys(r.json.fields)).toEqual([field]);
    expect((await req("GET", `/linktrees/${tree.id}`)).json.items).toEqual([]);
  });

  it("starts_at and ends_at are stored and answered; the API lists an item outside its window", async () => {
    const tree = await newTree();
    const past = { starts_at: 1_000, ends_at: 2_000 };
    const r = await addItem(tree.id, { title: "Old sale", url: "https://example.com/sale", ...past });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject(past);
    expect((await req("GET", `/linktrees/${tree.id}`)).json.items[0]).toMatchObject({ id: r.json.id, ...past });
  });

  it("PATCH sets and clears the window; an end before the stored start answers 400 naming ends_at", async () => {
    const tree = await newTree();
    const item = (await addItem(tree.id, { title: "Sale", url: "https://example.com/", starts_at: 5_000 })).json;
    const bad = await req("PATCH", `/linktrees/${tree.id}/items/${item.id}`, { ends_at: 4_000 });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.json.fields)).toEqual(["ends_at"]);
    const set = await req("PATCH", `/linktrees/${tree.id}/items/${item.id}`, { ends_at: 9_000 });
    expect(set.json).toMatchObject({ starts_at: 5_000, ends_at: 9_000 });
    const cleared = await req("PATCH", `/linktrees/${tree.id}/items/${item.id}`, { starts_at: null, ends_at: null });
    expect(cleared.status).toBe(200);
    expect(cleared.json).not.toHaveProperty("starts_at");
    expect(cleared.json).not.toHaveProperty("ends_at");
  });

  it("PATCH of a url onto a heading answers 400 naming url and changes nothing", async () => {
    const tree = await newTree();
    const h = (await addItem(tree.id, { kind: "heading", title: "H" })).json;
    const r = await req("PATCH", `/linktrees/${tree.id}/items/${h.id}`, { url: "https://example.com/" });
    expect(r.status).toBe(400);
    expect(Object.keys(r.json.fields)).toEqual(["url"]);
    expect((await req("GET", `/linktrees/${tree.id}`)).json.items[0]).toEqual(h);
  });

  it("PATCH of a long title onto a link item answers 400 naming title (its kind's limit is 100)", async () => {
    const tree = await newTree();
    const l = (await addItem(tree.id, { title: "L", url: "https://example.com/" })).json;
    const r = await req("PATCH", `/linktrees/${tree.id}/items/${l.id}`, { title: "x".repeat(101) });
    expect(r.status).toBe(400);
    expect(Object.keys(r.json.fields)).toEqual(["title"]);
  });

  it("PATCH kind turns a link into a heading (its short link goes) and a heading into a link (with the url sent)", async () => {
    const tree = await newTree();
    const l = (await addItem(tree.id, { title: "Was a link", url: "https://example.com/a" })).json;
    const slug = new URL(l.short_url).pathname.slice(1);
    const h = await req("PATCH", `/linktrees/${tree.id}/items/${l.id}`, { kind: "heading" });
    expect(h.status, h.text).toBe(200);
    expect(h.json).toMatchObject({ kind: "heading", title: "Was a link" });
    expect(h.json).not.toHaveProperty("short_url");
    expect(await t.app.db.select().from(links).where(eq(links.slug, slug))).toEqual([]);

    const needsUrl = await req("PATCH", `/linktrees/${tree.id}/items/${l.id}`, { kind: "link" });
    expect(needsUrl.status).toBe(400);
    expect(Object.keys(needsUrl.json.fields)).toEqual(["url"]);
    const back = await req("PATCH", `/linktrees/${tree.id}/items/${l.id}`, { kind: "link", url: "https://example.com/b" });
    expect(back.status, back.text).toBe(200);
    expect(back.json).toMatchObject({ title: "Was a link", url: "https://example.com/b", short_url: expect.stringMatching(/^http/) });
    expect(back.json).not.toHaveProperty("kind");
  });

  it("deleting a heading keeps the page; deleting the linktree with headings and text removes everything", async () => {
    const tree = await newTree();
    const h = (await addItem(tree.id, { kind: "heading", title: "H" })).json;
    await addItem(tree.id, { kind: "text", title: "Some words" });
    await addItem(tree.id, { title: "L", url: "https://example.com/" });
    expect((await req("DELETE", `/linktrees/${tree.id}/items/${h.id}`)).status).toBe(204);
    const page = await t.app.db.select().from(links).where(eq(links.slug, tree.slug));
    expect(page).toHaveLength(1);
    expect((await req("GET", `/linktrees/${tree.id}`)).json.items.map((i: { position: number }) => i.position)).toEqual([0, 1]);
    expect((await req("DELETE", `/linktrees/${tree.id}`)).status).toBe(204);
    expect(await t.app.db.select().from(links).where(eq(links.slug, tree.slug))).toEqual([]);
  });

  it("analytics lists headings and text with no short link and no clicks", async () => {
    const tree = await newTree();
    const h = (await addItem(tree.id, { kind: "heading", title: "H" })).json;
    const a = await req("GET", `/linktrees/${tree.id}/analytics`);
    expect(a.status).toBe(200);
    expect(a.json.items).toEqual([{ id: h.id, title: "H", short_url: null, active: true, count: 0 }]);
  });
});
