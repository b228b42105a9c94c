import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, createTestServer, http, type TestApp, type TestServer, type TestUser } from "../harness";
import { rowCounts } from "../fuzz/fuzz-kit";

/**
 * Issue 8.5 / decisions §3: every stored URL field (url, expiration_url, targeting ios/android/geo,
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
