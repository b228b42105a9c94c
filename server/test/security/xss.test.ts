import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestServer, http, type TestServer, type TestUser } from "../harness";

/**
 * XSS for every page that shows user text. The payloads are stored through the API
 * wherever user text goes (titles, descriptions, bios, names, URLs, report details, referers),
 * and no page may contain them unescaped.
 */
const SCRIPT = "<script>alert(1)</script>";
const IMG = '"><img src=x onerror=alert(1)>';
const URL_XSS = 'https://example.com/x"><script>alert(1)</script>';
const FACEBOOK = "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)";

function expectEscaped(html: string, what: string) {
  expect(html, `${what}: raw <script> payload`).not.toContain(SCRIPT);
  expect(html, `${what}: raw attribute-breaking payload`).not.toContain(IMG);
  expect(html, `${what}: an onerror handler made it into markup`).not.toMatch(/<img[^>]*\sonerror=/i);
  expect(html, `${what}: a script tag with the payload`).not.toMatch(/<script[^>]*>\s*alert\(1\)/i);
}

async function seed(t: TestServer, u: TestUser) {
  const card = (
    await http(`${t.api}/links`, {
      method: "POST",
      headers: u.auth,
      json: { url: URL_XSS, og_title: `${SCRIPT}${IMG}`, og_description: `${IMG}${SCRIPT}`, og_image: URL_XSS, tags: ["x"] },
    })
  ).json;
  const locked = (await http(`${t.api}/links`, { method: "POST", headers: u.auth, json: { url: URL_XSS, password: "secret-pw", og_title: SCRIPT } })).json;
  const tree = (
    await http(`${t.api}/linktrees`, {
      method: "POST",
      headers: u.auth,
      json: { slug: "xss-tree", title: `${SCRIPT}`, bio: `${IMG}${SCRIPT}`, avatar_url: URL_XSS },
    })
  ).json;
  await http(`${t.api}/linktrees/${tree.id}/items`, { method: "POST", headers: u.auth, json: { title: `${IMG}${SCRIPT}`, url: URL_XSS } });
  await http(`${t.api}/linktrees/${tree.id}`, { method: "PATCH", headers: u.auth, json: { published: true } });
  return { card, locked, tree };
}

describe("pages of the redirect host", () => {
  let t: TestServer;
  let s: Awaited<ReturnType<typeof seed>>;
  beforeAll(async () => {
    t = await createTestServer();
    s = await seed(t, await t.user({ plan: "pro" }));
  });
  afterAll(() => t.close());

  it("the stored records carry the payloads (the test stores what it checks)", () => {
    expect(s.card.og_title).toBe(`${SCRIPT}${IMG}`);
    // Stored as a browser would request it: the quote and angle brackets percent-encoded.
    expect(s.card.og_image).toBe(new URL(URL_XSS).href);
    expect(s.tree.title).toBe(SCRIPT);
  });

  it("share card: og_title, og_description and og_image are escaped", async () => {
    const res = await http(`${t.redirect}/${s.card.slug}`, { headers: { "user-agent": FACEBOOK } });
    expect(res.status).toBe(200);
    expect(res.text).toContain('property="og:title"');
    expectEscaped(res.text, "share card");
    expect(res.text, "the payload is shown, escaped").toContain("alert(1)");
    expect(res.text).not.toContain('x"><script>');
  });

  it("password form and its wrong-password answer are escaped (crawler sees the card, people the form)", async () => {
    expectEscaped((await http(`${t.redirect}/${s.locked.slug}`, { headers: { "user-agent": FACEBOOK } })).text, "password link card");
    const form = await http(`${t.redirect}/${s.locked.slug}`);
    expect(form.status).toBe(200);
    expectEscaped(form.text, "password form");
    const wrong = await http(`${t.redirect}/${s.locked.slug}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `password=${encodeURIComponent(SCRIPT)}`,
    });
    expect(wrong.status).toBe(401);
    expectEscaped(wrong.text, "password form after a wrong try");
  });

  it("404 page does not reflect the path", async () => {
    for (const path of [encodeURIComponent(SCRIPT), encodeURIComponent(IMG), "x?q=" + encodeURIComponent(SCRIPT)]) {
      const res = await http(`${t.redirect}/${path}`);
      expect(res.status).toBe(404);
      expectEscaped(res.text, `404 for ${path}`);
      expect(res.text).not.toContain("alert(1)");
    }
  });
});

// Remix renders the linktree page and the dashboard (CI builds before testing).
describe.skipIf(!existsSync("build/index.js"))("pages rendered by Remix", () => {
  let t: TestServer;
  let u: TestUser;
  let s: Awaited<ReturnType<typeof seed>>;
  let cookie: Record<string, string>;
  beforeAll(async () => {
    t = await createTestServer({}, { remix: true });
    u = await t.user({ plan: "pro", isAdmin: true });
    s = await seed(t, u);
    const session = await t.app.lucia.createSession(u.id, { createdAt: Date.now() });
    cookie = { cookie: `app_session=${session.id}`, origin: t.appUrl };
    // User text that reaches other pages: account name, token name, a report, a click's referer.
    await http(`${t.api}/account`, { method: "PATCH", headers: cookie, json: { name: `${SCRIPT}${IMG}` } });
    await http(`${t.api}/account/tokens`, { method: "POST", headers: cookie, json: { name: `${IMG}${SCRIPT}` } });
    await http(`${t.api}/reports`, { method: "POST", json: { url: s.card.short_url, reason: "spam", detail: `${SCRIPT}${IMG}`, email: "a@example.com" } });
    await http(`${t.redirect}/${s.card.slug}`, { headers: { referer: URL_XSS, "user-agent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0" } });
    await t.app.clicks?.flush();
  });
  afterAll(() => t.close());

  it("linktree public page: title, bio, avatar and item titles are escaped", async () => {
    const res = await http(`${t.redirect}/${s.tree.slug}`);
    expect(res.status).toBe(200);
    expectEscaped(res.text, "linktree page");
    expect(res.text, "the payload is shown, escaped").toContain("alert(1)");
    expect(res.text).not.toContain('x"><script>');
  });

  it("dashboard pages with stored user text are escaped", async () => {
    const pages = [
      "/links",
      `/links/${s.card.id}`,
      `/links/${s.locked.id}`,
      "/linktrees",
      `/linktrees/${s.tree.id}`,
      "/analytics",
      `/analytics?link_id=${s.card.id}`,
      "/settings",
      "/settings/tokens",
      "/settings/sessions",
      "/admin/reports",
    ];
    let seen = 0;
    for (const path of pages) {
      const res = await http(`${t.appUrl}${path}`, { headers: { cookie: cookie.cookie } });
      expect(res.status, `${path} ${res.text.slice(0, 200)}`).toBeLessThan(500);
      if (res.status !== 200) continue;
      seen++;
      expectEscaped(res.text, path);
    }
    expect(seen, "dashboard pages rendered").toBeGreaterThan(3);
  });

  it("public report form and sign-in page reflect no query input", async () => {
    for (const path of [`/report?url=${encodeURIComponent(SCRIPT)}`, `/login?next=${encodeURIComponent(IMG)}`, `/login?email=${encodeURIComponent(IMG)}`]) {
      const res = await http(`${t.appUrl}${path}`);
      expect(res.status, path).toBeLessThan(500);
      expectEscaped(res.text, path);
    }
  });
});
