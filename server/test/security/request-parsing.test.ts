import { deflateSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestServer, http, type TestServer, type TestUser } from "../harness";
import { rowCounts } from "../fuzz/fuzz-kit";

/**
 * How the API reads what a caller sends, on REST and on /api/trpc alike.
 * Bodies: UTF-8 only, identity/gzip/deflate only, no `__proto__` member. Query strings: each
 * parameter once, as `name=value`. Every refusal is a 4xx in the error shape; nothing is stored.
 */
let t: TestServer;
let u: TestUser;
let link: { id: string; slug: string; url: string };

beforeAll(async () => {
  t = await createTestServer();
  u = await t.user({ plan: "pro" });
  link = (await http(`${t.api}/links`, { method: "POST", headers: u.auth, json: { url: "https://example.com/kept" } })).json;
});
afterAll(() => t?.close());

const body = JSON.stringify({ url: "https://example.com/parsed" });
/** The same create, through REST, the tRPC endpoint and a tRPC batch. */
const transports = [
  { name: "REST POST /links", url: () => `${t.api}/links`, wrap: (b: string) => b },
  { name: "POST /trpc/link.create", url: () => `${t.api}/trpc/link.create`, wrap: (b: string) => b },
  { name: "POST /trpc/link.create?batch=1", url: () => `${t.api}/trpc/link.create?batch=1`, wrap: (b: string) => `{"0":${b}}` },
];
const send = (url: string, payload: string | Uint8Array, headers: Record<string, string>) =>
  http(url, { method: "POST", headers: { ...u.auth, "content-type": "application/json", ...headers }, body: payload as BodyInit });

describe("request bodies", () => {
  it("a body in a charset other than UTF-8 answers 400 VALIDATION_FAILED naming body, never 500", async () => {
    for (const tr of transports) {
      for (const charset of ["latin1", "ISO-8859-1", "utf-16", "windows-1252"]) {
        const before = await rowCounts(t.app.db);
        const r = await send(tr.url(), tr.wrap(body), { "content-type": `application/json; charset=${charset}` });
        expect(r.status, `${tr.name} charset=${charset}: ${r.text}`).toBe(400);
        expect(r.json).toEqual({ error: "VALIDATION_FAILED", fields: { body: [expect.stringContaining("UTF-8")] } });
        expect(await rowCounts(t.app.db)).toBe(before);
      }
      for (const charset of ["utf-8", "UTF-8", '"utf-8"']) {
        const r = await send(tr.url(), tr.wrap(body), { "content-type": `application/json; charset=${charset}` });
        expect(r.status, `${tr.name} charset=${charset}: ${r.text}`).toBeLessThan(300);
      }
    }
  });

  it("an unsupported Content-Encoding answers 400 VALIDATION_FAILED naming body, never 500", async () => {
    for (const tr of transports) {
      for (const encoding of ["br", "foo", "compress", "gzip, gzip", "constructor", "__proto__"]) {
        const before = await rowCounts(t.app.db);
        const r = await send(tr.url(), tr.wrap(body), { "content-encoding": encoding });
        expect(r.status, `${tr.name} Content-Encoding: ${encoding}: ${r.text}`).toBe(400);
        expect(r.json).toEqual({ error: "VALIDATION_FAILED", fields: { body: [expect.stringContaining("Content-Encoding")] } });
        expect(await rowCounts(t.app.db)).toBe(before);
      }
    }
  });

  it("a body that is not what its Content-Encoding says answers 400 VALIDATION_FAILED naming body", async () => {
    for (const tr of transports) {
      for (const encoding of ["gzip", "deflate"]) {
        const before = await rowCounts(t.app.db);
        const r = await send(tr.url(), tr.wrap(body), { "content-encoding": encoding });
        expect(r.status, `${tr.name} Content-Encoding: ${encoding} over plain JSON: ${r.text}`).toBe(400);
        expect(r.json).toEqual({ error: "VALIDATION_FAILED", fields: { body: [expect.stringContaining(encoding)] } });
        expect(await rowCounts(t.app.db)).toBe(before);
      }
    }
  });

  it("gzip and deflate bodies are decoded, and held to 64 KiB after decoding", async () => {
    for (const tr of transports) {
      expect((await send(tr.url(), gzipSync(tr.wrap(body)), { "content-encoding": "gzip" })).status, `${tr.name} gzip`).toBeLessThan(300);
      expect((await send(tr.url(), deflateSync(tr.wrap(body)), { "content-encoding": "deflate" })).status, `${tr.name} deflate`).toBeLessThan(300);
      const bomb = gzipSync(tr.wrap(JSON.stringify({ url: "https://example.com/", og_title: " ".repeat(5_000_000) })));
      expect(bomb.length).toBeLessThan(64 * 1024);
      const r = await send(tr.url(), bomb, { "content-encoding": "gzip" });
      expect(r.status, `${tr.name} gzip bomb: ${r.text}`).toBe(413);
      expect(r.json).toEqual({ error: "PAYLOAD_TOO_LARGE" });
    }
  });

  it("a body that is not UTF-8 answers 400 VALIDATION_FAILED naming body", async () => {
    for (const tr of transports) {
      const r = await send(tr.url(), Buffer.from(`{"url":"https://example.com/\xe9"}`, "latin1"), {});
      expect(r.status, `${tr.name}: ${r.text}`).toBe(400);
      expect(r.json).toEqual({ error: "VALIDATION_FAILED", fields: { body: ["must be UTF-8 text"] } });
    }
  });

  it("a member __proto__ is rejected as an unknown field, like constructor, and never sets the input", async () => {
    const slug = `pwn${Date.now().toString(36)}`;
    for (const tr of transports) {
      for (const [raw, name, message] of [
        [`{"url":"https://example.com/p","__proto__":{"slug":"${slug}"}}`, "__proto__", "unknown field __proto__"],
        // An escaped name is the same member once parsed.
        [`{"url":"https://example.com/p","\\u005f_proto__":{"slug":"${slug}"}}`, "__proto__", "unknown field __proto__"],
        [`{"url":"https://example.com/p","targeting":{"__proto__":{"ios":"https://evil.example/"}}}`, "targeting", "unknown field targeting.__proto__"],
      ]) {
        const before = await rowCounts(t.app.db);
        const r = await send(tr.url(), tr.wrap(raw), {});
        expect(r.status, `${tr.name} ${raw}: ${r.text}`).toBe(400);
        expect(r.json.error).toBe("VALIDATION_FAILED");
        expect(Object.keys(r.json.fields)).toEqual([name]);
        expect(r.json.fields[name]).toEqual([message]);
        expect(await rowCounts(t.app.db)).toBe(before);
      }
    }
    expect((await http(`${t.api}/links?limit=100`, { headers: u.auth })).json.links.map((l: { slug: string }) => l.slug)).not.toContain(slug);
    // A PATCH through it must not change what the member hides.
    const patched = await http(`${t.api}/links/${link.id}`, {
      method: "PATCH",
      headers: { ...u.auth, "content-type": "application/json" },
      body: '{"__proto__":{"url":"https://evil.example/"}}',
    });
    expect(patched.status, patched.text).toBe(400);
    // (A literal `{ __proto__: … }` would set the prototype: compare the text.)
    expect(patched.text).toBe('{"error":"VALIDATION_FAILED","fields":{"__proto__":["unknown field __proto__"]}}');
    expect((await http(`${t.api}/links/${link.id}`, { headers: u.auth })).json.url).toBe("https://example.com/kept");
  });
});

describe("query parameters", () => {
  it("a bracketed or repeated query parameter answers 400 VALIDATION_FAILED naming it", async () => {
    const cases: [string, string][] = [
      ["/analytics?link_id[]=zzzzzzzz", "link_id"],
      [`/analytics?link_id[]=${link.id}`, "link_id"],
      ["/analytics?link_id[0]=zzzzzzzz", "link_id"],
      ["/analytics?from[]=", "from"],
      ["/analytics?to[]=", "to"],
      ["/analytics?from[gte]=1", "from"],
      ["/analytics?from=1&from=2", "from"],
      [`/analytics?link_id=${link.id}&link_id=zzzzzzzz`, "link_id"],
      [`/links/${link.id}/analytics?from[]=`, "from"],
      [`/links/${link.id}/analytics?to=1&to=2`, "to"],
      ["/links?x[]=1", "x"],
    ];
    for (const [path, name] of cases) {
      const r = await http(`${t.api}${path}`, { headers: u.auth });
      expect(r.status, `${path}: ${r.text}`).toBe(400);
      expect(r.json.error, path).toBe("VALIDATION_FAILED");
      expect(Object.keys(r.json.fields), path).toEqual([name]);
    }
    // Every failing parameter is named.
    const both = await http(`${t.api}/analytics?from[]=&to=1&to=2`, { headers: u.auth });
    expect(Object.keys(both.json.fields).sort()).toEqual(["from", "to"]);
    // Given once, plainly, they still work.
    expect((await http(`${t.api}/analytics?link_id=${link.id}&from=1`, { headers: u.auth })).status).toBe(200);
  });
});

describe("members named like a path parameter", () => {
  it("a body member or query parameter called like the path's own parameter answers 400 VALIDATION_FAILED naming it, and changes nothing", async () => {
    const other = (await http(`${t.api}/links`, { method: "POST", headers: u.auth, json: { url: "https://example.com/other" } })).json;
    const patched = await http(`${t.api}/links/${link.id}`, { method: "PATCH", headers: u.auth, json: { id: other.id, tags: ["shadow"] } });
    expect(patched.status, patched.text).toBe(400);
    expect(patched.json).toEqual({ error: "VALIDATION_FAILED", fields: { id: ["unknown field id"] } });
    expect((await http(`${t.api}/links/${link.id}`, { headers: u.auth })).json.tags).toEqual([]);
    expect((await http(`${t.api}/links/${other.id}`, { headers: u.auth })).json.tags).toEqual([]);
    for (const path of [
      `/links/${link.id}?id=${other.id}`,
      `/links/${link.id}/analytics?id=${other.id}`,
      `/links/${link.id}/analytics/breakdown?by=day&id=x`,
    ]) {
      const r = await http(`${t.api}${path}`, { headers: u.auth });
      expect(r.status, `${path}: ${r.text}`).toBe(400);
      expect(r.json.fields, path).toEqual({ id: ["unknown field id"] });
    }
  });
});
