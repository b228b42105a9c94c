import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestServer, http, type TestServer, type TestUser } from "../../test/harness";

// Needs the Remix build (`npm run build`): the page is rendered by a Remix route.
let t: TestServer;
let alice: TestUser;
let seq = 0;

const BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";
const BOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";

beforeAll(async () => {
  t = await createTestServer({}, { remix: true });
  alice = await t.user({ plan: "pro" });
});
afterAll(() => t?.close());

const api = (method: string, path: string, json?: unknown) => http(`${t.api}${path}`, { method, json, headers: alice.auth });
const visit = (slug: string, opts: { ua?: string; method?: string } = {}) =>
  http(`${t.redirect}/${slug}`, { method: opts.method ?? "GET", headers: { "user-agent": opts.ua ?? BROWSER } });
const views = async (id: string) => {
  await t.app.clicks?.flush(); // clicks are written in batches, off the request path
  return (await api("GET", `/linktrees/${id}/analytics`)).json;
};

async function tree(json: Record<string, unknown> = {}) {
  const r = await api("POST", "/linktrees", { slug: `page-${Date.now().toString(36)}-${seq++}`, title: "Ana", ...json });
  expect(r.status).toBe(201);
  return r.json as { id: string; slug: string };
}
async function item(id: string, json: Record<string, unknown>) {
  const r = await api("POST", `/linktrees/${id}/items`, { url: "https://example.com/", ...json });
  expect(r.status).toBe(201);
  return r.json as { id: string; short_url: string };
}
const publish = (id: string, published = true) => api("PATCH", `/linktrees/${id}`, { published });

describe("public page on the redirect domain", () => {
  it("answers 404 with a small HTML page while unpublished, uncached, and counts no view", async () => {
    const tr = await tree();
    const r = await visit(tr.slug);
    expect(r.status).toBe(404);
    expect(r.headers.get("content-type")).toMatch(/^text\/html/);
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.text).toMatch(/not found/i);
    expect(r.text).not.toContain("Ana");
    expect((await views(tr.id)).views).toBe(0);
  });

  it("serves the published page: title, bio, avatar, active items in order as links to their short_url", async () => {
    const tr = await tree({ title: "Ana's page", bio: "Hi there", avatar_url: "https://img.example/ana.png" });
    const a = await item(tr.id, { title: "Shop" });
    const hidden = await item(tr.id, { title: "Hidden item" });
    const b = await item(tr.id, { title: "Blog", position: 0 });
    await api("PATCH", `/linktrees/${tr.id}/items/${hidden.id}`, { active: false });
    await publish(tr.id);

    const r = await visit(tr.slug);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^text\/html/);
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.text).toMatch(/^<!doctype html>/i);
    expect(r.text).toContain("<h1>Ana&#x27;s page</h1>");
    expect(r.text).toContain("Hi there");
    expect(r.text).toMatch(/<img[^>]+src="https:\/\/img\.example\/ana\.png"/);
    const hrefs = [...r.text.matchAll(/<a class="item" href="([^"]+)"/g)].map((m) => m[1]);
    expect(hrefs).toEqual([b.short_url, a.short_url]);
    expect(r.text).not.toContain("Hidden item");
    // No client JavaScript, and a policy that forbids any.
    expect(r.text).not.toMatch(/<script/i);
    expect(r.headers.get("content-security-policy")).toMatch(/default-src 'none'/);
    expect(r.headers.get("content-security-policy")).not.toMatch(/script-src/);
    // Mobile-first and accessible basics.
    expect(r.text).toContain('name="viewport"');
    expect(r.text).toContain('<html lang="en">');
    expect(r.text).toMatch(/<nav aria-label="Links of Ana&#x27;s page">/);
  });

  it("carries OG tags for the page", async () => {
    const tr = await tree({ title: "Cards", bio: "About me", avatar_url: "https://img.example/c.png" });
    await publish(tr.id);
    const r = await visit(tr.slug);
    expect(r.text).toContain('<meta property="og:title" content="Cards"/>');
    expect(r.text).toContain('<meta property="og:description" content="About me"/>');
    expect(r.text).toContain('<meta property="og:image" content="https://img.example/c.png"/>');
    expect(r.text).toContain(`<meta property="og:url" content="${t.redirect}/${tr.slug}"/>`);
    expect(r.text).toContain('<meta name="twitter:card" content="summary"/>');
  });

  it("escapes every user-supplied text", async () => {
    const evil = `<script>alert("x")</script>&<b>`;
    const tr = await tree({ title: evil, bio: evil });
    await item(tr.id, { title: evil, url: `https://example.com/?q="><script>alert(1)</script>` });
    await publish(tr.id);
    const r = await visit(tr.slug);
    expect(r.status).toBe(200);
    expect(r.text).not.toContain("<script>");
    expect(r.text).not.toContain("<b>");
    expect(r.text).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&lt;b&gt;");
  });

  it("unpublishing takes effect on the next request", async () => {
    const tr = await tree();
    await publish(tr.id);
    expect((await visit(tr.slug)).status).toBe(200);
    await publish(tr.id, false);
    expect((await visit(tr.slug)).status).toBe(404);
  });

  it("looks up the slug case-insensitively", async () => {
    const tr = await tree();
    await publish(tr.id);
    expect((await visit(tr.slug.toUpperCase())).status).toBe(200);
  });

  it("follows a slug rename and a delete at once", async () => {
    const tr = await tree();
    await publish(tr.id);
    expect((await visit(tr.slug)).status).toBe(200);
    const renamed = `${tr.slug}-new`;
    await api("PATCH", `/linktrees/${tr.id}`, { slug: renamed });
    expect((await visit(tr.slug)).status).toBe(404);
    expect((await visit(renamed)).status).toBe(200);
    await api("DELETE", `/linktrees/${tr.id}`);
    expect((await visit(renamed)).status).toBe(404);
  });

  it("counts one view per served page; bots, HEAD and unpublished visits are not counted", async () => {
    const tr = await tree();
    await publish(tr.id);
    expect((await visit(tr.slug)).status).toBe(200);
    expect((await views(tr.id)).views).toBe(1);
    const bot = await visit(tr.slug, { ua: BOT });
    expect(bot.status).toBe(200);
    const head = await visit(tr.slug, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.text).toBe("");
    await publish(tr.id, false);
    expect((await visit(tr.slug)).status).toBe(404);
    expect((await views(tr.id)).views).toBe(1);
  });

  it("an item button leads through its short link to the destination and counts the item click", async () => {
    const tr = await tree();
    const it1 = await item(tr.id, { title: "Go", url: "https://dest.example/path?x=1" });
    await publish(tr.id);
    const page = await visit(tr.slug);
    const href = page.text.match(/<a class="item" href="([^"]+)"/)![1];
    expect(href).toBe(it1.short_url);
    const hop = await http(href, { headers: { "user-agent": BROWSER } });
    expect([301, 302]).toContain(hop.status);
    expect(hop.headers.get("location")).toBe("https://dest.example/path?x=1");
    const a = await views(tr.id);
    expect(a).toMatchObject({ views: 1, clicks: 1, items: [{ id: it1.id, count: 1 }] });
  });

  it("is not served on the app domain's internal route path", async () => {
    const tr = await tree();
    await publish(tr.id);
    const r = await http(`${t.appUrl}/_linktree-page/${tr.slug}`);
    expect(r.status).toBe(404);
    expect(r.text).not.toContain("Ana");
  });
});
