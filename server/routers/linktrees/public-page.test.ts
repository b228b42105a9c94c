import { createHash, randomBytes } from "node:crypto";
import nodeHttp from "node:http";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { domains, links } from "../../../db/schema";
import { http, type TestServer, type TestUser } from "../../test/harness";
import { BOT, BROWSER, pageServer, pageTools } from "./public-page.test-helper";

// Needs the Remix build (`npm run build`): the page is rendered by a Remix route.
let t: TestServer;
let alice: TestUser;
beforeAll(async () => void ({ t, alice } = await pageServer()));
afterAll(() => t?.close());

const { api, visit, tree, item } = pageTools(() => ({ t, alice }), "page");
const views = async (id: string) => {
  await t.app.clicks?.flush(); // clicks are written in batches, off the request path
  return (await api("GET", `/linktrees/${id}/analytics`)).json;
};
const publish = (id: string, published = true) => api("PATCH", `/linktrees/${id}`, { published });
const pageLinkId = async (slug: string) =>
  (
    await t.app.db
      .select({ id: links.id })
      .from(links)
      .where(and(eq(links.slug, slug), eq(links.kind, "linktree")))
  )[0].id;

describe("public page on the redirect domain", () => {
  it("answers 404 with a small HTML page while unpublished, uncached, and counts no view", async () => {
    const tr = await tree();
    const r = await visit(tr.slug);
    expect(r.status).toBe(404);
    expect(r.headers.get("content-type")).toMatch(/^text\/html/);
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.text).toMatch(/not found/i);
    expect(r.text).not.toContain("Ana");
    // Any other client gets the service's 404 body.
    const plain = await visit(tr.slug, { accept: "*/*" });
    expect(plain.status).toBe(404);
    expect(plain.json).toEqual({ error: "NOT_FOUND" });
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

  it("carries its own share card: og:title the title, og:description the bio, og:image the generated 1200×630 PNG", async () => {
    const tr = await tree({ title: "Cards", bio: "About me", avatar_url: "https://img.example/c.png" });
    await publish(tr.id);
    const r = await visit(tr.slug);
    const pageLink = await pageLinkId(tr.slug);
    expect(r.text).toContain('<meta property="og:title" content="Cards"/>');
    expect(r.text).toContain('<meta property="og:description" content="About me"/>');
    expect(r.text).toContain(`<meta property="og:image" content="${t.redirect}/_/og/${pageLink}.png"/>`);
    expect(r.text).toContain(`<meta property="og:url" content="${t.redirect}/${tr.slug}"/>`);
    expect(r.text).toContain('<meta name="twitter:card" content="summary_large_image"/>');
  });

  it("the share-card image is a 1200×630 PNG while published, and 404 once unpublished", async () => {
    const tr = await tree({ title: "Image card" });
    await publish(tr.id);
    const id = await pageLinkId(tr.slug);
    const img = await fetch(`${t.redirect}/_/og/${id}.png`);
    expect(img.status).toBe(200);
    expect(img.headers.get("content-type")).toBe("image/png");
    const png = Buffer.from(await img.arrayBuffer());
    expect(png.subarray(1, 4).toString()).toBe("PNG");
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1200, 630]);
    await publish(tr.id, false);
    expect((await fetch(`${t.redirect}/_/og/${id}.png`)).status).toBe(404);
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
    const r = await http(`${t.appUrl}/_linktree-page/${await pageLinkId(tr.slug)}`);
    expect(r.status).toBe(404);
    expect(r.text).not.toContain("Ana");
  });
});

/** A GET to the redirect host's port with this Host header (fetch cannot set Host). */
function visitHost(host: string, path: string): Promise<{ status: number; text: string }> {
  const u = new URL(t.redirect);
  return new Promise((resolve, reject) => {
    const r = nodeHttp.request({ host: u.hostname, port: u.port, path, headers: { host, "user-agent": BROWSER } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode!, text }));
    });
    r.on("error", reject);
    r.end();
  });
}

describe("the page's look", () => {
  it("a page without a theme keeps the default look that follows the visitor's dark mode", async () => {
    const tr = await tree();
    await publish(tr.id);
    const r = await visit(tr.slug);
    expect(r.text).toContain("prefers-color-scheme:dark");
    expect(r.text).toContain('class="theme-default buttons-rounded"');
  });

  it("colours picked without a theme hold in every mode: drawn over the light theme, no dark mode putting the default colours back, secondary text in the picked text colour", async () => {
    const tr = await tree({ colors: { background: "#222222", text: "#ffffff", button: "#ffffff", button_text: "#111111" } });
    await publish(tr.id);
    const r = await visit(tr.slug);
    expect(r.text).toContain('class="theme-light buttons-rounded"');
    expect(r.text).toContain("--bg:#222222;--fg:#ffffff;--muted:#ffffff;--btn:#ffffff;--btn-fg:#111111");
    expect(r.text).not.toContain("prefers-color-scheme:dark");
    expect(r.text).not.toContain("--muted:#4b5563");
  });

  it("draws the chosen theme's colours, the picked colours over them, and the button style; the style is allowed by its hash", async () => {
    const tr = await tree({ theme: "bold", colors: { button: "#000000", button_text: "#ffffff" }, button_style: "pill" });
    await publish(tr.id);
    const r = await visit(tr.slug);
    expect(r.status).toBe(200);
    expect(r.text).toContain('class="theme-bold buttons-pill"');
    expect(r.text).toContain("--bg:#4c1d95");
    expect(r.text).toContain("--btn:#000000;--btn-fg:#ffffff");
    expect(r.text).toContain("--radius:9999px");
    expect(r.text).not.toContain("prefers-color-scheme:dark");
    const style = r.text.match(/<style>([\s\S]*?)<\/style>/)![1];
    const hash = createHash("sha256").update(style).digest("base64");
    expect(r.headers.get("content-security-policy")).toContain(`style-src 'sha256-${hash}'`);
  });

  it("outline buttons are drawn in the text colour without a fill", async () => {
    const tr = await tree({ theme: "soft", button_style: "outline" });
    await publish(tr.id);
    expect((await visit(tr.slug)).text).toContain('class="theme-soft buttons-outline outline"');
  });

  it("shows socials as a row of links named by their platform, with icons hidden from screen readers", async () => {
    const tr = await tree({
      socials: [
        { platform: "github", url: "https://github.com/ana" },
        { platform: "email", url: "mailto:ana@example.com" },
      ],
    });
    await publish(tr.id);
    const r = await visit(tr.slug);
    expect(r.text).toContain('<nav aria-label="Profiles of Ana">');
    const socials = [
      ...r.text.matchAll(
        /<a href="([^"]+)" title="([^"]+)" rel="me noopener"><svg[^>]*aria-hidden="true"[\s\S]*?<\/svg><span class="sr">([^<]+)<\/span><\/a>/g,
      ),
    ].map((m) => [m[1], m[3]]);
    expect(socials).toEqual([
      ["https://github.com/ana", "GitHub"],
      ["mailto:ana@example.com", "Email"],
    ]);
  });

  it("headings are section titles and text items paragraphs, neither a link", async () => {
    const tr = await tree();
    await api("POST", `/linktrees/${tr.id}/items`, { kind: "heading", title: "My shop" });
    await item(tr.id, { title: "Buy" });
    await api("POST", `/linktrees/${tr.id}/items`, { kind: "text", title: "Shipping in\nthree days" });
    await publish(tr.id);
    const r = await visit(tr.slug);
    expect(r.text).toContain('<li><h2 class="section">My shop</h2></li>');
    expect(r.text).toContain('<li><p class="note">Shipping in\nthree days</p></li>');
    expect([...r.text.matchAll(/<a class="item"/g)]).toHaveLength(1);
  });

  it("an item is shown only inside its window; the API still lists it", async () => {
    const tr = await tree();
    const now = Date.now();
    await item(tr.id, { title: "Ended sale", ends_at: now - 1_000 });
    await item(tr.id, { title: "Coming soon", starts_at: now + 3_600_000 });
    await item(tr.id, { title: "Running now", starts_at: now - 1_000, ends_at: now + 3_600_000 });
    await publish(tr.id);
    const r = await visit(tr.slug);
    expect(r.text).toContain("Running now");
    expect(r.text).not.toContain("Ended sale");
    expect(r.text).not.toContain("Coming soon");
    expect((await api("GET", `/linktrees/${tr.id}`)).json.items).toHaveLength(3);
  });
});

describe("a page on a branded domain", () => {
  async function brandedTree() {
    const name = `lt-${randomBytes(4).toString("hex")}.brand.example`;
    const d = await api("POST", "/domains", { name });
    expect(d.status).toBe(201);
    await t.app.db.update(domains).set({ verified: true, verifiedAt: Date.now() }).where(eq(domains.id, d.json.id));
    await t.app.invalidateDomains();
    const tr = await tree({ domain: name });
    await publish(tr.id);
    return { name, ...tr };
  }

  it("is served at <domain>/<slug> and counts the view; the same slug on the default domain is unknown", async () => {
    const tr = await brandedTree();
    const r = await visitHost(tr.name, `/${tr.slug}`);
    expect(r.status).toBe(200);
    expect(r.text).toContain(`<link rel="canonical" href="https://${tr.name}/${tr.slug}"/>`);
    expect((await visit(tr.slug)).status).toBe(404);
    expect((await views(tr.id)).views).toBe(1);
  });

  it("its items' short links stay on the default domain and count their clicks", async () => {
    const tr = await brandedTree();
    const it1 = await item(tr.id, { title: "Go", url: "https://dest.example/" });
    expect(it1.short_url.startsWith(`${t.redirect}/`)).toBe(true);
    const page = await visitHost(tr.name, `/${tr.slug}`);
    expect(page.text).toContain(`href="${it1.short_url}"`);
    expect((await http(it1.short_url, { headers: { "user-agent": BROWSER } })).status).toBe(301);
    expect(await views(tr.id)).toMatchObject({ views: 1, clicks: 1 });
  });

  it("a page with the same slug on the default domain and on a branded one shows each its own", async () => {
    const tr = await brandedTree();
    const other = await api("POST", "/linktrees", { slug: tr.slug, title: "Default twin" });
    expect(other.status).toBe(201);
    await publish(other.json.id);
    expect((await visit(tr.slug)).text).toContain("Default twin");
    expect((await visitHost(tr.name, `/${tr.slug}`)).text).not.toContain("Default twin");
  });
});
