import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, createTestServer, http, type TestApp, type TestServer, type TestUser } from "../harness";
import { rowCounts } from "../fuzz/fuzz-kit";

/**
 * Every stored URL field (url, expiration_url, targeting ios/android/geo,
 * og_image, avatar_url, item url) takes only absolute http(s) URLs off the redirect domain: no
 * javascript:, data:, relative or protocol-relative URLs (open redirect), no loops. 400 naming
 * the field, nothing stored.
 */
let t: TestServer;
let u: TestUser;
let link: { id: string; url: string };
let tree: { id: string };
let item: { id: string };

beforeAll(async () => {
  t = await createTestServer();
  u = await t.user({ plan: "pro" });
  link = (await http(`${t.api}/links`, { method: "POST", headers: u.auth, json: { url: "https://example.com/ok" } })).json;
  tree = (await http(`${t.api}/linktrees`, { method: "POST", headers: u.auth, json: { slug: "url-tree", title: "T" } })).json;
  item = (await http(`${t.api}/linktrees/${tree.id}/items`, { method: "POST", headers: u.auth, json: { title: "i", url: "https://example.com/i" } })).json;
});
afterAll(() => t.close());

function badUrls(): [string, string][] {
  const r = new URL(t.redirect);
  return [
    ["javascript:", "javascript:alert(document.cookie)"],
    ["JavaScript: with spaces", " JavaScript:alert(1)"],
    ["data:", "data:text/html,<script>alert(1)</script>"],
    ["vbscript:", "vbscript:msgbox(1)"],
    ["file:", "file:///etc/passwd"],
    ["ftp:", "ftp://example.com/x"],
    ["relative", "/admin"],
    ["bare word", "example"],
    ["protocol-relative", "//evil.example/x"],
    ["backslash protocol-relative", "\\\\evil.example/x"],
    ["redirect domain", `${t.redirect}/abcd`],
    ["redirect domain, https", `https://${r.host}/abcd`],
    ["redirect domain, upper case", `http://${r.host.toUpperCase()}/ABCD`],
    ["redirect domain, with credentials", `http://user:pw@${r.host}/abcd`],
    ["too long", "https://example.com/" + "a".repeat(4100)],
  ];
}

type Case = { what: string; method: string; path: () => string; body: (bad: string) => Record<string, unknown>; field: string };
const future = () => Date.now() + 86_400_000;
const cases: Case[] = [
  { what: "POST /links url", method: "POST", path: () => "/links", body: (b) => ({ url: b }), field: "url" },
  {
    what: "POST /links expiration_url",
    method: "POST",
    path: () => "/links",
    body: (b) => ({ url: "https://example.com/", expires_at: future(), expiration_url: b }),
    field: "expiration_url",
  },
  {
    what: "POST /links targeting.ios",
    method: "POST",
    path: () => "/links",
    body: (b) => ({ url: "https://example.com/", targeting: { ios: b } }),
    field: "targeting",
  },
  {
    what: "POST /links targeting.android",
    method: "POST",
    path: () => "/links",
    body: (b) => ({ url: "https://example.com/", targeting: { android: b } }),
    field: "targeting",
  },
  {
    what: "POST /links targeting.geo",
    method: "POST",
    path: () => "/links",
    body: (b) => ({ url: "https://example.com/", targeting: { geo: { BR: b } } }),
    field: "targeting",
  },
  { what: "POST /links og_image", method: "POST", path: () => "/links", body: (b) => ({ url: "https://example.com/", og_image: b }), field: "og_image" },
  { what: "PATCH /links url", method: "PATCH", path: () => `/links/${link.id}`, body: (b) => ({ url: b }), field: "url" },
  {
    what: "PATCH /links expiration_url",
    method: "PATCH",
    path: () => `/links/${link.id}`,
    body: (b) => ({ expires_at: future(), expiration_url: b }),
    field: "expiration_url",
  },
  { what: "PATCH /links targeting.ios", method: "PATCH", path: () => `/links/${link.id}`, body: (b) => ({ targeting: { ios: b } }), field: "targeting" },
  {
    what: "PATCH /links targeting.android",
    method: "PATCH",
    path: () => `/links/${link.id}`,
    body: (b) => ({ targeting: { android: b } }),
    field: "targeting",
  },
  {
    what: "PATCH /links targeting.geo",
    method: "PATCH",
    path: () => `/links/${link.id}`,
    body: (b) => ({ targeting: { geo: { us: b } } }),
    field: "targeting",
  },
  { what: "PATCH /links og_image", method: "PATCH", path: () => `/links/${link.id}`, body: (b) => ({ og_image: b }), field: "og_image" },
  {
    what: "POST /linktrees avatar_url",
    method: "POST",
    path: () => "/linktrees",
    body: (b) => ({ slug: "tree-new", title: "x", avatar_url: b }),
    field: "avatar_url",
  },
  { what: "PATCH /linktrees avatar_url", method: "PATCH", path: () => `/linktrees/${tree.id}`, body: (b) => ({ avatar_url: b }), field: "avatar_url" },
  { what: "POST /linktrees/{id}/items url", method: "POST", path: () => `/linktrees/${tree.id}/items`, body: (b) => ({ title: "x", url: b }), field: "url" },
  {
    what: "PATCH /linktrees/{id}/items/{itemId} url",
    method: "PATCH",
    path: () => `/linktrees/${tree.id}/items/${item.id}`,
    body: (b) => ({ url: b }),
    field: "url",
  },
];

describe("stored URL fields refuse open redirects and loops", () => {
  it("the fixtures exist", () => {
    expect(link.id && tree.id && item.id).toBeTruthy();
  });

  for (const c of cases) {
    it(`${c.what}: javascript:, data:, relative, //host, the redirect domain → 400 naming the field, nothing stored`, async () => {
      for (const [kind, bad] of badUrls()) {
        const before = await rowCounts(t.app.db);
        const snapshot = (await http(`${t.api}/links/${link.id}`, { headers: u.auth })).text;
        const res = await http(`${t.api}${c.path()}`, { method: c.method, headers: u.auth, json: c.body(bad) });
        expect(res.status, `${c.what} ${kind}: ${res.text}`).toBe(400);
        expect(res.json.error, `${c.what} ${kind}`).toBe("VALIDATION_FAILED");
        expect(Object.keys(res.json.fields), `${c.what} ${kind}`).toContain(c.field);
        expect(await rowCounts(t.app.db), `${c.what} ${kind}: stored`).toBe(before);
        expect((await http(`${t.api}/links/${link.id}`, { headers: u.auth })).text, `${c.what} ${kind}: changed`).toBe(snapshot);
      }
    });
  }
});

describe("stored URLs are WHATWG-serialised", () => {
  // Python's urllib reads evil.example as this URL's host; a browser requests example.com/@evil.example/.
  const SENT = "https://example.com\\@evil.example/";
  const STORED = "https://example.com/@evil.example/";
  const future = () => Date.now() + 86_400_000;
  let domain: { id: string };
  beforeAll(async () => {
    domain = (await http(`${t.api}/domains`, { method: "POST", headers: u.auth, json: { name: "norm.example.com" } })).json;
  });
  const writes: [string, string, () => string, (v: string) => Record<string, unknown>][] = [
    ["POST /links url", "POST", () => "/links", (v) => ({ url: v })],
    ["POST /links expiration_url", "POST", () => "/links", (v) => ({ url: "https://example.com/", expires_at: future(), expiration_url: v })],
    ["POST /links targeting", "POST", () => "/links", (v) => ({ url: "https://example.com/", targeting: { ios: v, android: v, geo: { DE: v } } })],
    ["POST /links og_image", "POST", () => "/links", (v) => ({ url: "https://example.com/", og_image: v })],
    ["PATCH /links url and og_image", "PATCH", () => `/links/${link.id}`, (v) => ({ url: v, og_image: v })],
    ["PATCH /links targeting", "PATCH", () => `/links/${link.id}`, (v) => ({ targeting: { geo: { BR: v } } })],
    ["POST /linktrees avatar_url", "POST", () => "/linktrees", (v) => ({ slug: `norm-${Date.now().toString(36)}`, title: "x", avatar_url: v })],
    ["PATCH /linktrees avatar_url", "PATCH", () => `/linktrees/${tree.id}`, (v) => ({ avatar_url: v })],
    ["POST /linktrees/{id}/items url", "POST", () => `/linktrees/${tree.id}/items`, (v) => ({ title: "x", url: v })],
    ["PATCH /linktrees/{id}/items/{itemId} url", "PATCH", () => `/linktrees/${tree.id}/items/${item.id}`, (v) => ({ url: v })],
    ["PATCH /domains/{id} not_found_url", "PATCH", () => `/domains/${domain.id}`, (v) => ({ not_found_url: v })],
  ];

  for (const [what, method, path, body] of writes) {
    it(`${what}: a backslash URL is stored and answered as a browser would request it`, async () => {
      const res = await http(`${t.api}${path()}`, { method, headers: u.auth, json: body(SENT) });
      expect(res.status, res.text).toBeLessThan(300);
      expect(res.text).toContain(JSON.stringify(STORED));
      expect(res.text).not.toContain("\\\\@evil");
    });
  }

  it("case, default port, non-ASCII and characters outside URLs: the WHATWG form", async () => {
    for (const [sent, stored] of [
      ["HTTPS://EXAMPLE.com:443", "https://example.com/"],
      ['https://bücher.example/ä?q=<x>&r="y"#f', "https://xn--bcher-kva.example/%C3%A4?q=%3Cx%3E&r=%22y%22#f"],
      ["http://example.com/a/./b/../c", "http://example.com/a/c"],
    ]) {
      const res = await http(`${t.api}/links`, { method: "POST", headers: u.auth, json: { url: sent } });
      expect(res.status, res.text).toBe(201);
      expect(res.json.url, sent).toBe(stored);
      expect((await http(`${t.api}/links/${res.json.id}`, { headers: u.auth })).json.url).toBe(stored);
    }
  });

  it("a URL whose only difference from that form is its empty path's / reads back as it was sent, and redirects so", async () => {
    for (const sent of ["https://example.com", "https://example.com?utm_source=x", "https://example.com#top"]) {
      const res = await http(`${t.api}/links`, { method: "POST", headers: u.auth, json: { url: sent } });
      expect(res.status, res.text).toBe(201);
      expect(res.json.url, sent).toBe(sent);
      expect((await http(`${t.redirect}/${res.json.slug}`)).headers.get("location"), sent).toBe(sent);
    }
  });

  it("the redirect's Location is the stored form", async () => {
    const made = (await http(`${t.api}/links`, { method: "POST", headers: u.auth, json: { url: SENT } })).json;
    const visit = await http(`${t.redirect}/${made.slug}`);
    expect(visit.status).toBe(301);
    expect(visit.headers.get("location")).toBe(STORED);
  });

  it("the 4096-character limit holds for the stored (percent-encoded) form, and /openapi.json says so", async () => {
    const ascii = "https://example.com/" + "a".repeat(4096 - 20);
    expect((await http(`${t.api}/links`, { method: "POST", headers: u.auth, json: { url: ascii } })).status).toBe(201);
    // 400 emoji are 420 characters sent and 4,820 once percent-encoded (a 24 KB Location header at 2,000).
    const before = await rowCounts(t.app.db);
    for (const field of ["url", "og_image"]) {
      const json = { url: "https://example.com/", [field]: "https://example.com/" + "\u{1F600}".repeat(400) };
      const res = await http(`${t.api}/links`, { method: "POST", headers: u.auth, json });
      expect(res.status, res.text).toBe(400);
      expect(Object.keys(res.json.fields)).toEqual([field]);
    }
    expect(await rowCounts(t.app.db)).toBe(before);
    const doc = (await http(`${t.api}/openapi.json`)).json;
    const props = doc.paths["/links"].post.requestBody.content["application/json"].schema.properties;
    for (const name of ["url", "expiration_url", "og_image"]) expect(props[name].maxLength, name).toBe(4096);
  });

  it("a URL whose stored form is on the redirect domain is a loop", async () => {
    const r = new URL(t.redirect);
    for (const url of [`http://${r.host}\\@example.com/`, `HTTP://${r.host.toUpperCase()}/x`]) {
      const res = await http(`${t.api}/links`, { method: "POST", headers: u.auth, json: { url } });
      expect(res.status, `${url}: ${res.text}`).toBe(400);
      expect(Object.keys(res.json.fields)).toEqual(["url"]);
    }
  });
});

describe("loop check by host name", () => {
  let a: TestApp;
  beforeAll(async () => void (a = await createTestApp({ REDIRECT_URL: "https://go.test" })));
  afterAll(() => a.close());

  it("a URL on the redirect domain in any spelling (case, default port, trailing dot, other scheme) is refused", async () => {
    const me = await a.user();
    const caller = a.caller(me.auth);
    for (const url of ["https://go.test/x", "http://GO.TEST/x", "https://go.test:443/x", "https://go.test./x", "http://go.test.:80/x", "https://u@go.test/x"]) {
      await expect(caller.link.create({ url }), url).rejects.toMatchObject({ publicCode: "VALIDATION_FAILED", fields: { url: expect.any(Array) } });
    }
  });

  it("the redirect domain's subdomains and look-alikes are other hosts", async () => {
    const me = await a.user();
    const caller = a.caller(me.auth);
    for (const url of ["https://sub.go.test/x", "https://go.test.evil.example/x", "https://go.testx/"])
      await expect(caller.link.create({ url }), url).resolves.toMatchObject({ url });
  });
});
