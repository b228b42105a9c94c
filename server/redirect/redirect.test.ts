import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { links } from "../../db/schema";
import { insertLink } from "../routers/links/links.service";
import { createTestServer, http, type TestServer, type TestUser } from "../test/harness";
import { PEOPLE, SEARCH, SOCIAL } from "./ua-fixtures";

let t: TestServer;
let alice: TestUser;

beforeAll(async () => {
  // TRUST_PROXY lets the tests play visitors from other addresses (GeoIP, per-address limits).
  t = await createTestServer({ TRUST_PROXY: "true" });
  alice = await t.user({ plan: "pro" });
});
afterAll(() => t?.close());

const newLink = async (json: Record<string, unknown> = {}) => {
  const r = await http(`${t.api}/links`, { method: "POST", json: { url: "https://dest.example/path?q=1", ...json }, headers: alice.auth });
  expect(r.status).toBe(201);
  return r.json as { id: string; slug: string; short_url: string };
};
const visit = (slug: string, headers: Record<string, string> = {}, method = "GET") =>
  http(`${t.redirect}/${slug}`, { method, headers: { "user-agent": PEOPLE.windowsChrome, ...headers } });
const postPassword = (slug: string, password: string | null, headers: Record<string, string> = {}) =>
  http(`${t.redirect}/${slug}`, {
    method: "POST",
    body: password === null ? "" : new URLSearchParams({ password }).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", "user-agent": PEOPLE.windowsChrome, ...headers },
  });
const clicksOf = async (id: string) => {
  await t.app.clicks!.flush();
  const r = await http(`${t.api}/links/${id}/analytics`, { headers: alice.auth });
  expect(r.status).toBe(200);
  return r.json as {
    count: number;
    clicks: { rule: string; device: string; platform: string | null; browser: string | null; referer: string | null; country: string | null }[];
  };
};
/** Makes a link expired now, as time would (the API only accepts future expiries). */
const expire = async (id: string, slug: string) => {
  await t.app.db
    .update(links)
    .set({ expiresAt: Date.now() - 1 })
    .where(eq(links.id, id));
  await t.app.invalidateSlugs([slug]);
};
const meta = (html: string, name: string) => new RegExp(`<meta (?:property|name)="${name}" content="([^"]*)">`).exec(html)?.[1];

describe("GET /{slug}: plain links", () => {
  it("redirects with 301 to url and Cache-Control: no-store", async () => {
    const l = await newLink();
    const r = await visit(l.slug);
    expect(r.status).toBe(301);
    expect(r.headers.get("location")).toBe("https://dest.example/path?q=1");
    expect(r.headers.get("cache-control")).toBe("no-store");
  });

  it("looks up upper-case paths lower-cased", async () => {
    const l = await newLink({ slug: `case-${Date.now().toString(36)}` });
    const r = await visit(l.slug.toUpperCase());
    expect(r.status).toBe(301);
    expect(r.headers.get("location")).toBe("https://dest.example/path?q=1");
  });

  it("reads percent-encoded letters, digits and hyphens of the path as themselves (the same URI)", async () => {
    const l = await newLink({ slug: `pct-${Date.now().toString(36)}` });
    const encoded = [...l.slug].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join("");
    const r = await visit(encoded);
    expect(r.status).toBe(301);
    expect(r.headers.get("location")).toBe("https://dest.example/path?q=1");
    expect((await visit(`${l.slug.slice(0, -1)}%2F`)).status).toBe(404); // an encoded slash stays what it is
  });

  it("answers HEAD like GET, without a body", async () => {
    const l = await newLink();
    const r = await visit(l.slug, {}, "HEAD");
    expect(r.status).toBe(301);
    expect(r.headers.get("location")).toBe("https://dest.example/path?q=1");
    expect(r.text).toBe("");
  });

  it.each(["zzzz-unknown-slug", "a.b", "a/b", "x".repeat(51), "%61bc", "a_b"])(
    "unknown or malformed slug %s → 404 NOT_FOUND (a page for a browser)",
    async (slug) => {
      const r = await visit(slug);
      expect(r.status).toBe(404);
      expect(r.json).toEqual({ error: "NOT_FOUND" });
      expect(r.headers.get("cache-control")).toBe("no-store");
      const page = await visit(slug, { accept: "text/html,*/*;q=0.8" });
      expect(page.status).toBe(404);
      expect(page.headers.get("content-type")).toMatch(/^text\/html/);
      expect(page.headers.get("cache-control")).toBe("no-store");
      expect(page.text).toContain("not found");
    },
  );

  it("paths under /_ are the service's own, never a slug", async () => {
    expect((await http(`${t.redirect}/_/health`)).status).toBe(200);
    expect((await visit("_x")).status).toBe(404);
    expect((await visit("_/og/zzzzzzzz.png")).status).toBe(404);
  });

  it("a deleted link stops redirecting on the next request", async () => {
    const l = await newLink();
    expect((await visit(l.slug)).status).toBe(301); // now cached
    expect((await http(`${t.api}/links/${l.id}`, { method: "DELETE", headers: alice.auth })).status).toBe(204);
    expect((await visit(l.slug)).status).toBe(404);
  });

  it("a PATCH takes effect on the next request (url and slug)", async () => {
    const l = await newLink();
    expect((await visit(l.slug)).headers.get("location")).toBe("https://dest.example/path?q=1");
    const newSlug = `moved-${Date.now().toString(36)}`;
    const p = await http(`${t.api}/links/${l.id}`, { method: "PATCH", json: { url: "https://new.example/", slug: newSlug }, headers: alice.auth });
    expect(p.status).toBe(200);
    expect((await visit(l.slug)).status).toBe(404);
    expect((await visit(newSlug)).headers.get("location")).toBe("https://new.example/");
  });

  it("a link created after its slug was visited (cached miss) redirects at once", async () => {
    const slug = `late-${Date.now().toString(36)}`;
    expect((await visit(slug)).status).toBe(404);
    await newLink({ slug });
    expect((await visit(slug)).status).toBe(301);
  });

  it("item links of linktrees redirect like normal links; linktree pages without a page handler answer 404", async () => {
    const item = await insertLink(t.app.db, { workspaceId: alice.workspaceId, url: "https://item.example/", kind: "linktree_item" });
    expect((await visit(item.slug)).headers.get("location")).toBe("https://item.example/");
    const tree = await insertLink(t.app.db, { workspaceId: alice.workspaceId, url: "https://tree.example/", kind: "linktree" });
    expect((await visit(tree.slug)).status).toBe(404);
  });
});

describe("GET /{slug}: expiry (evaluated per request)", () => {
  it("expired with expiration_url → 302 to it, counted with rule expiration_url", async () => {
    const l = await newLink({
      expires_at: Date.now() + 3_600_000,
      expiration_url: "https://gone.example/",
      targeting: { ios: "https://ios.example/" },
      og_title: "T",
    });
    expect((await visit(l.slug, { "user-agent": PEOPLE.iphoneSafari })).headers.get("location")).toBe("https://ios.example/");
    await expire(l.id, l.slug);
    const r = await visit(l.slug, { "user-agent": PEOPLE.iphoneSafari });
    expect(r.status).toBe(302);
    expect(r.headers.get("location")).toBe("https://gone.example/");
    // Share cards are ignored too.
    expect((await visit(l.slug, { "user-agent": SOCIAL.facebookexternalhit })).status).toBe(302);
    const c = await clicksOf(l.id);
    expect(c.clicks.map((x) => x.rule)).toEqual(["expiration_url", "ios"]);
  });

  it("expired without expiration_url → 404 (a page for a browser), counted with rule expired_404", async () => {
    const l = await newLink({ expires_at: Date.now() + 3_600_000 });
    await expire(l.id, l.slug);
    const r = await visit(l.slug, { accept: "text/html" });
    expect(r.status).toBe(404);
    expect(r.headers.get("content-type")).toMatch(/^text\/html/);
    expect((await clicksOf(l.id)).clicks.map((x) => x.rule)).toEqual(["expired_404"]);
  });

  it("PATCH with a new future expires_at makes it active again", async () => {
    const l = await newLink({ expires_at: Date.now() + 3_600_000 });
    await expire(l.id, l.slug);
    expect((await visit(l.slug)).status).toBe(404);
    await http(`${t.api}/links/${l.id}`, { method: "PATCH", json: { expires_at: null }, headers: alice.auth });
    expect((await visit(l.slug)).status).toBe(301);
  });
});

describe("GET /{slug}: targeting", () => {
  const targeting = { ios: "https://ios.example/", android: "https://android.example/", geo: { GB: "https://gb.example/", br: "https://br.example/" } };
  const gb = { "x-forwarded-for": "81.2.69.160" }; // GB in the shipped GeoIP database

  it.each([
    ["iPhone", PEOPLE.iphoneSafari, "https://ios.example/"],
    ["iPad", PEOPLE.ipadSafari, "https://ios.example/"],
    ["Android", PEOPLE.androidChrome, "https://android.example/"],
    ["Android tablet", PEOPLE.androidTablet, "https://android.example/"],
    ["Windows (country GB by GeoIP)", PEOPLE.windowsChrome, "https://gb.example/"],
  ])("%s → its destination; the OS rule beats the country rule", async (_n, ua, location) => {
    const l = await newLink({ targeting });
    const r = await visit(l.slug, { "user-agent": ua, ...gb });
    expect(r.status).toBe(301);
    expect(r.headers.get("location")).toBe(location);
  });

  it("an IPv6 visitor's country comes from GeoIP too: country targeting applies, and the click has the country", async () => {
    const l = await newLink({ targeting: { geo: { DE: "https://de.example/", GB: "https://gb.example/" } } });
    const r = await visit(l.slug, { "x-forwarded-for": "2a02:8100::1" }); // DE in the shipped IPv6 database
    expect(r.headers.get("location")).toBe("https://de.example/");
    const [click] = (await clicksOf(l.id)).clicks;
    expect(click).toMatchObject({ country: "DE", rule: "geo" });
    // A unique-local IPv6 address has none.
    expect((await visit(l.slug, { "x-forwarded-for": "fd12:3456::1" })).headers.get("location")).toBe("https://dest.example/path?q=1");
  });

  it("no match → url; loopback and private addresses have no country", async () => {
    const l = await newLink({ targeting });
    expect((await visit(l.slug, { "user-agent": PEOPLE.macSafari })).headers.get("location")).toBe("https://dest.example/path?q=1");
    expect((await visit(l.slug, { "x-forwarded-for": "192.168.1.20" })).headers.get("location")).toBe("https://dest.example/path?q=1");
  });

  it("without TRUST_PROXY semantics, edge headers are not trusted (EDGE_HEADERS=none)", async () => {
    const l = await newLink({ targeting });
    const r = await visit(l.slug, { "cloudfront-viewer-country": "GB", "cloudfront-is-ios-viewer": "true" });
    expect(r.headers.get("location")).toBe("https://dest.example/path?q=1");
  });

  it("each click records the rule that decided it, with device, platform, browser, referer and GeoIP country", async () => {
    const l = await newLink({ targeting });
    await visit(l.slug, { "user-agent": PEOPLE.iphoneSafari });
    await visit(l.slug, { "user-agent": PEOPLE.androidChrome });
    await visit(l.slug, { ...gb, referer: "https://news.example/item" });
    await visit(l.slug);
    const c = await clicksOf(l.id);
    expect(c.count).toBe(4);
    // Clicks in the same millisecond have no defined order: compare them by rule.
    expect(c.clicks.map((x) => x.rule).sort()).toEqual(["android", "geo", "ios", "url"]);
    const byRule = (rule: string) => c.clicks.find((x) => x.rule === rule);
    expect(byRule("geo")).toMatchObject({ country: "GB", referer: "https://news.example/item", device: "desktop", platform: "Windows", browser: "Chrome 131" });
    expect(byRule("ios")).toMatchObject({ device: "mobile", platform: "iOS", country: null });
  });
});

describe("share cards", () => {
  it.each(Object.entries(SOCIAL))("%s gets 200 HTML with the share-card tags (not counted)", async (_n, ua) => {
    const l = await newLink({ og_title: "Hello", og_description: "World", og_image: "https://img.example/a.png" });
    const r = await visit(l.slug, { "user-agent": ua });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^text\/html/);
    expect(meta(r.text, "og:title")).toBe("Hello");
    expect(meta(r.text, "og:description")).toBe("World");
    expect(meta(r.text, "og:image")).toBe("https://img.example/a.png");
    expect(meta(r.text, "og:url")).toBe(l.short_url);
    expect(meta(r.text, "twitter:card")).toBe("summary_large_image");
    expect((await clicksOf(l.id)).count).toBe(0);
  });

  it.each([...Object.entries(SEARCH), ["a person", PEOPLE.macSafari]])("%s gets the 301 instead", async (_n, ua) => {
    const l = await newLink({ og_title: "Hello" });
    const r = await visit(l.slug, { "user-agent": ua });
    expect(r.status).toBe(301);
    expect(r.headers.get("location")).toBe("https://dest.example/path?q=1");
  });

  it("a link without og_ fields gives social crawlers the 301", async () => {
    const l = await newLink();
    expect((await visit(l.slug, { "user-agent": SOCIAL.Twitterbot })).status).toBe(301);
  });

  it("every value is HTML-escaped", async () => {
    const l = await newLink({ og_title: `"><script>alert(1)</script>`, og_description: `a & b 'c' <d>` });
    const r = await visit(l.slug, { "user-agent": SOCIAL.Slackbot });
    expect(r.text).not.toContain("<script>");
    expect(r.text).toContain("&#34;&#62;&#60;script&#62;alert(1)&#60;/script&#62;");
    expect(meta(r.text, "og:description")).toBe("a &#38; b &#39;c&#39; &#60;d&#62;");
  });

  it("with a title and no og_image, og:image is the generated /_/og/{id}.png", async () => {
    const l = await newLink({ og_title: "Generated" });
    const r = await visit(l.slug, { "user-agent": SOCIAL.LinkedInBot });
    expect(meta(r.text, "og:image")).toBe(`${t.redirect}/_/og/${l.id}.png`);
  });
});

const pngSize = (buf: Buffer) => ({ png: buf.subarray(1, 4).toString() === "PNG", width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) });
const getPng = async (id: string) => {
  const res = await fetch(`${t.redirect}/_/og/${id}.png`);
  return { status: res.status, type: res.headers.get("content-type"), body: Buffer.from(await res.arrayBuffer()) };
};

describe("GET /_/og/{id}.png", () => {
  it("is a 1200×630 PNG rendered from the title, regenerated when the title changes", async () => {
    const l = await newLink({ og_title: "First title" });
    const a = await getPng(l.id);
    expect(a.status).toBe(200);
    expect(a.type).toBe("image/png");
    expect(pngSize(a.body)).toEqual({ png: true, width: 1200, height: 630 });
    expect((await getPng(l.id)).body.equals(a.body)).toBe(true);
    await http(`${t.api}/links/${l.id}`, { method: "PATCH", json: { og_title: "Second, different title" }, headers: alice.auth });
    const b = await getPng(l.id);
    expect(b.status).toBe(200);
    expect(b.body.equals(a.body)).toBe(false);
  });

  it("answers 404 for links without a title and unknown ids", async () => {
    const l = await newLink({ og_description: "only a description" });
    expect((await getPng(l.id)).status).toBe(404);
    expect((await getPng("zzzzzzzz")).status).toBe(404);
  });
});

describe("password links", () => {
  const PW = "correct horse";

  it("people get an accessible form (200 HTML, no JavaScript); the view is not counted", async () => {
    const l = await newLink({ password: PW });
    const r = await visit(l.slug);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^text\/html/);
    expect(r.text).toMatch(/<form method="post" action="\/[0-9a-z-]+">/);
    expect(r.text).toContain('<label for="password">');
    expect(r.text).toContain('id="password" name="password" type="password"');
    expect(r.text).not.toContain("<script");
    expect(r.text).not.toContain("dest.example");
    expect((await clicksOf(l.id)).count).toBe(0);
  });

  it("crawlers see the card, not the form", async () => {
    const l = await newLink({ password: PW, og_title: "Secret page" });
    const r = await visit(l.slug, { "user-agent": SOCIAL.Discordbot });
    expect(r.status).toBe(200);
    expect(meta(r.text, "og:title")).toBe("Secret page");
    expect(r.text).not.toContain("dest.example");
  });

  it("the right password redirects with 302 applying targeting, and counts the click", async () => {
    const l = await newLink({ password: PW, targeting: { android: "https://android.example/" } });
    const r = await postPassword(l.slug, PW, { "user-agent": PEOPLE.androidChrome, "x-forwarded-for": "198.51.100.10" });
    expect(r.status).toBe(302);
    expect(r.headers.get("location")).toBe("https://android.example/");
    expect(r.headers.get("cache-control")).toBe("no-store");
    const c = await clicksOf(l.id);
    expect(c.clicks.map((x) => x.rule)).toEqual(["android"]);
  });

  it("a wrong password answers 401 with the form again, not counted", async () => {
    const l = await newLink({ password: PW });
    const r = await postPassword(l.slug, "wrong guess", { "x-forwarded-for": "198.51.100.11" });
    expect(r.status).toBe(401);
    expect(r.text).toContain('name="password"');
    expect(r.text).toContain('role="alert"');
    expect((await clicksOf(l.id)).count).toBe(0);
  });

  it("10 wrong tries per address in 15 minutes; the next answers 429 with Retry-After, even with the right password", async () => {
    const l = await newLink({ password: PW });
    const ip = { "x-forwarded-for": "198.51.100.12" };
    for (let i = 0; i < 10; i++) expect((await postPassword(l.slug, `wrong${i}`, ip)).status).toBe(401);
    const r = await postPassword(l.slug, PW, ip);
    expect(r.status).toBe(429);
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    // Another address still gets in.
    expect((await postPassword(l.slug, PW, { "x-forwarded-for": "198.51.100.13" })).status).toBe(302);
  });

  it("right passwords do not use up tries", async () => {
    const l = await newLink({ password: PW });
    const ip = { "x-forwarded-for": "198.51.100.14" };
    for (let i = 0; i < 12; i++) expect((await postPassword(l.slug, PW, ip)).status).toBe(302);
  });

  it("the per-address limit is exact under parallel attempts", async () => {
    const l = await newLink({ password: PW });
    const ip = { "x-forwarded-for": "198.51.100.15" };
    const statuses = (await Promise.all(Array.from({ length: 16 }, (_, i) => postPassword(l.slug, `wrong${i}`, ip)))).map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(6);
  });

  it("100 wrong tries per link in 15 minutes, from any addresses", async () => {
    const l = await newLink({ password: PW });
    const statuses = (await Promise.all(Array.from({ length: 105 }, (_, i) => postPassword(l.slug, "nope", { "x-forwarded-for": `203.0.113.${i + 1}` })))).map(
      (r) => r.status,
    );
    expect(statuses.filter((s) => s === 401)).toHaveLength(100);
    expect(statuses.filter((s) => s === 429)).toHaveLength(5);
  }, 60_000); // 100 scrypt checks: slow on a busy machine

  it("past the per-link limit every try answers 429 with Retry-After, the right password from a new address too", async () => {
    const l = await newLink({ password: PW });
    const wrong = (ip: string, n: number) => Array.from({ length: n }, (_, i) => postPassword(l.slug, `nope${i}`, { "x-forwarded-for": ip }));
    // 100 wrong tries from ten addresses, each within its own limit.
    const tries = await Promise.all(Array.from({ length: 10 }, (_, i) => wrong(`192.0.2.${i + 1}`, 10)).flat());
    expect(tries.every((r) => r.status === 401)).toBe(true);
    for (const [ip, password] of [
      ["192.0.2.50", PW],
      ["192.0.2.51", "nope"],
    ]) {
      const r = await postPassword(l.slug, password, { "x-forwarded-for": ip });
      expect(r.status).toBe(429);
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
      // The page tells the visitor when to try again.
      expect(r.text).toMatch(/Too many wrong attempts\. Please try again in 1[45] minutes\./);
    }
    expect((await clicksOf(l.id)).count).toBe(0);
    // A try refused by the link's limit is not held against its address: another link still lets it in.
    const other = await newLink({ password: PW });
    expect((await postPassword(other.slug, PW, { "x-forwarded-for": "192.0.2.50" })).status).toBe(302);
  }, 60_000);

  it("an empty submission shows the form again without using a try", async () => {
    const l = await newLink({ password: PW });
    expect((await postPassword(l.slug, null, { "x-forwarded-for": "198.51.100.16" })).status).toBe(401);
    expect((await postPassword(l.slug, "", { "x-forwarded-for": "198.51.100.16" })).status).toBe(401);
  });

  it("an expired link with a password: the form first, then the expiry answer, counted only after the password", async () => {
    const gone = await newLink({ password: PW, expires_at: Date.now() + 3_600_000, expiration_url: "https://gone.example/" });
    const plain = await newLink({ password: PW, expires_at: Date.now() + 3_600_000 });
    await expire(gone.id, gone.slug);
    await expire(plain.id, plain.slug);
    for (const l of [gone, plain]) {
      const r = await visit(l.slug);
      expect(r.status).toBe(200);
      expect(r.text).toContain('name="password"');
      expect(r.text).not.toContain("gone.example");
      expect((await postPassword(l.slug, "wrong guess", { "x-forwarded-for": "198.51.100.17" })).status).toBe(401);
      expect((await clicksOf(l.id)).count).toBe(0);
    }
    const r = await postPassword(gone.slug, PW, { "x-forwarded-for": "198.51.100.17" });
    expect(r.status).toBe(302);
    expect(r.headers.get("location")).toBe("https://gone.example/");
    expect((await clicksOf(gone.id)).clicks.map((x) => x.rule)).toEqual(["expiration_url"]);
    const p = await postPassword(plain.slug, PW, { "x-forwarded-for": "198.51.100.17" });
    expect(p.status).toBe(404);
    expect((await clicksOf(plain.id)).clicks.map((x) => x.rule)).toEqual(["expired_404"]);
  });

  it("POST to an unknown slug answers 404", async () => {
    expect((await postPassword("zzzz-nope", PW)).status).toBe(404);
  });
});

describe("what is counted", () => {
  it("bots, crawlers, HEAD requests and unknown slugs are not counted; people are", async () => {
    const l = await newLink({ og_title: "x" });
    await visit(l.slug, { "user-agent": SEARCH.Googlebot });
    await visit(l.slug, { "user-agent": SEARCH.bingbot });
    await visit(l.slug, { "user-agent": SOCIAL.facebookexternalhit });
    await visit(l.slug, { "user-agent": "curl/8.5.0" });
    await visit(l.slug, { "user-agent": "" });
    await visit(l.slug, {}, "HEAD");
    await visit(`${l.slug}-nope`);
    expect((await clicksOf(l.id)).count).toBe(0);
    await visit(l.slug);
    await visit(l.slug, { "user-agent": PEOPLE.iphoneSafari });
    expect((await clicksOf(l.id)).count).toBe(2);
  });

  it("clicks of a deleted link are kept", async () => {
    const l = await newLink();
    await visit(l.slug);
    await t.app.clicks!.flush();
    await http(`${t.api}/links/${l.id}`, { method: "DELETE", headers: alice.auth });
    expect((await clicksOf(l.id)).count).toBe(1);
  });
});
