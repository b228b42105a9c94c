import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { linktrees } from "../../db/schema";
import { createUserWithWorkspace, issueToken } from "../lib/users";
import { http, type TestServer, type TestUser } from "../test/harness";
import { BOT, BROWSER, pageServer, pageTools } from "../routers/linktrees/public-page.test-helper";
import { startTwoInstances, type Instance } from "../test/two-instances";

// Needs the Remix build (`npm run build`): the page is rendered by a Remix route.
// The redirect host keeps each rendered linktree page; these rules say when that copy must not be used.
let t: TestServer;
let alice: TestUser;
beforeAll(async () => void ({ t, alice } = await pageServer()));
afterAll(() => t?.close());
afterEach(() => void vi.useRealTimers());

const { api, visit, tree, item } = pageTools(() => ({ t, alice }), "cached");
const buttons = (html: string) => [...html.matchAll(/<a class="item" href="[^"]+">([^<]*)</g)].map((m) => m[1]);
/** A published page with two items, visited twice so its rendering is kept. */
async function warmPage() {
  const tr = await tree();
  const first = await item(tr.id, { title: "First" });
  const second = await item(tr.id, { title: "Second" });
  expect((await api("PATCH", `/linktrees/${tr.id}`, { published: true })).status).toBe(200);
  expect((await visit(tr.slug)).status).toBe(200);
  expect((await visit(tr.slug)).status).toBe(200);
  return { ...tr, first, second };
}

describe("rendered linktree page cache", () => {
  it("a visited page is answered from the kept rendering: a change made behind the service's back is not seen", async () => {
    const p = await warmPage();
    await t.app.db.update(linktrees).set({ title: "Changed behind its back" }).where(eq(linktrees.id, p.id));
    const r = await visit(p.slug);
    expect(r.status).toBe(200);
    expect(r.text).not.toContain("Changed behind its back");
  });

  it("a kept page answers the same body and headers as its first rendering, without the internal freshness header", async () => {
    const tr = await tree();
    await item(tr.id, { title: "Soon", starts_at: Date.now() + 3_600_000 });
    await api("PATCH", `/linktrees/${tr.id}`, { published: true });
    const a = await visit(tr.slug);
    const b = await visit(tr.slug);
    expect(b.text).toBe(a.text);
    for (const name of ["content-type", "content-security-policy", "cache-control", "x-content-type-options", "referrer-policy"]) {
      expect(b.headers.get(name)).toBe(a.headers.get(name));
    }
    expect(a.headers.get("x-page-fresh-until")).toBeNull();
    expect(b.headers.get("x-page-fresh-until")).toBeNull();
  });

  const edits: [string, (p: Awaited<ReturnType<typeof warmPage>>) => Promise<unknown>, (html: string) => void][] = [
    ["the title", (p) => api("PATCH", `/linktrees/${p.id}`, { title: "Renamed page" }), (h) => expect(h).toContain("<h1>Renamed page</h1>")],
    ["the theme", (p) => api("PATCH", `/linktrees/${p.id}`, { theme: "bold" }), (h) => expect(h).toContain("theme-bold")],
    [
      "the avatar",
      (p) => api("PATCH", `/linktrees/${p.id}`, { avatar_url: "https://img.example/new.png" }),
      (h) => expect(h).toContain("https://img.example/new.png"),
    ],
    ["a new item", (p) => item(p.id, { title: "Third" }), (h) => expect(buttons(h)).toEqual(["First", "Second", "Third"])],
    ["an item's title", (p) => api("PATCH", `/linktrees/${p.id}/items/${p.first.id}`, { title: "One" }), (h) => expect(buttons(h)).toEqual(["One", "Second"])],
    ["an item switched off", (p) => api("PATCH", `/linktrees/${p.id}/items/${p.first.id}`, { active: false }), (h) => expect(buttons(h)).toEqual(["Second"])],
    ["an item moved", (p) => api("PATCH", `/linktrees/${p.id}/items/${p.second.id}`, { position: 0 }), (h) => expect(buttons(h)).toEqual(["Second", "First"])],
    ["an item deleted", (p) => api("DELETE", `/linktrees/${p.id}/items/${p.second.id}`), (h) => expect(buttons(h)).toEqual(["First"])],
    [
      "the dashboard's reordering",
      (p) => t.caller(alice.auth).linktree.reorderItems({ id: p.id, itemIds: [p.second.id, p.first.id] }),
      (h) => expect(buttons(h)).toEqual(["Second", "First"]),
    ],
  ];
  it.each(edits)("an edit of %s shows on the very next view of a kept page", async (_what, edit, shows) => {
    const p = await warmPage();
    await edit(p);
    const r = await visit(p.slug);
    expect(r.status).toBe(200);
    shows(r.text);
  });

  it("unpublishing a kept page answers 404 on the very next view, and publishing it again serves it", async () => {
    const p = await warmPage();
    await api("PATCH", `/linktrees/${p.id}`, { published: false });
    expect((await visit(p.slug)).status).toBe(404);
    await api("PATCH", `/linktrees/${p.id}`, { published: true });
    expect((await visit(p.slug)).status).toBe(200);
  });

  it("a scheduled item appears exactly at its starts_at and goes exactly at its ends_at while the page is kept", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const at = Date.now();
    vi.setSystemTime(at);
    const tr = await tree();
    await item(tr.id, { title: "Always" });
    await item(tr.id, { title: "Flash sale", starts_at: at + 5_000, ends_at: at + 10_000 });
    await api("PATCH", `/linktrees/${tr.id}`, { published: true });
    // Each instant is visited twice: the second visit is answered from the kept page if it were still good.
    const seen = async (time: number) => {
      vi.setSystemTime(time);
      const pages = [await visit(tr.slug), await visit(tr.slug)];
      return pages.map((r) => buttons(r.text));
    };
    expect(await seen(at + 4_999)).toEqual([["Always"], ["Always"]]);
    expect(await seen(at + 5_000)).toEqual([
      ["Always", "Flash sale"],
      ["Always", "Flash sale"],
    ]);
    expect(await seen(at + 9_999)).toEqual([
      ["Always", "Flash sale"],
      ["Always", "Flash sale"],
    ]);
    expect(await seen(at + 10_000)).toEqual([["Always"], ["Always"]]);
  });

  it("every visit to a kept page counts one view; bots and HEAD count none", async () => {
    const p = await warmPage();
    for (let i = 0; i < 3; i++) expect((await visit(p.slug)).status).toBe(200);
    expect((await visit(p.slug, { ua: BOT })).status).toBe(200);
    expect((await visit(p.slug, { method: "HEAD" })).status).toBe(200);
    await t.app.clicks?.flush();
    expect((await api("GET", `/linktrees/${p.id}/analytics`)).json.views).toBe(5); // the two warming visits and three more
  });

  it("a click on a kept page's item is counted for that item", async () => {
    const p = await warmPage();
    const page = await visit(p.slug);
    const href = page.text.match(/<a class="item" href="([^"]+)"/)![1];
    expect(href).toBe(p.first.short_url);
    expect((await http(href, { headers: { "user-agent": BROWSER } })).status).toBe(301);
    await t.app.clicks?.flush();
    expect((await api("GET", `/linktrees/${p.id}/analytics`)).json).toMatchObject({ views: 3, clicks: 1, items: [{ id: p.first.id, count: 1 }, { count: 0 }] });
  });
});

/**
 * Two service instances on one database (a second connection pool on PostgreSQL; the same embedded
 * database on PGlite), as behind a load balancer: each keeps its own rendered pages.
 */
describe("rendered linktree page cache across instances", () => {
  let a: Instance, b: Instance;
  let close: (() => Promise<void>) | undefined;
  let auth: Record<string, string>;

  beforeAll(async () => {
    ({ a, b, close } = await startTwoInstances({}, { remix: true }));
    const user = await createUserWithWorkspace(a.app.db, { email: `c${randomBytes(6).toString("hex")}@example.com`, plan: "pro" });
    auth = { authorization: `Bearer ${(await issueToken(a.app.db, user.id, "test")).token}` };
  });
  afterAll(() => close?.());

  it("an edit made on one instance shows on the very next view of the page another instance keeps", async () => {
    const on = (method: string, path: string, json?: unknown) => http(`${a.api}${path}`, { method, json, headers: auth });
    const slug = `twin-${Date.now().toString(36)}`;
    const tr = (await on("POST", "/linktrees", { slug, title: "Before" })).json as { id: string };
    await on("POST", `/linktrees/${tr.id}/items`, { title: "Item", url: "https://example.com/" });
    await on("PATCH", `/linktrees/${tr.id}`, { published: true });
    const viewOnB = () => http(`${b.redirect}/${slug}`, { headers: { "user-agent": BROWSER } });
    expect((await viewOnB()).text).toContain("<h1>Before</h1>");
    expect((await viewOnB()).text).toContain("<h1>Before</h1>");
    expect((await on("PATCH", `/linktrees/${tr.id}`, { title: "After" })).status).toBe(200);
    expect((await viewOnB()).text).toContain("<h1>After</h1>");
  });
});
