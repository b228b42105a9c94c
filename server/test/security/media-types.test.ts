import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OpenAPIV3 } from "openapi-types";
import { createTestServer, http, type TestServer, type TestUser } from "../harness";
import { rowCounts } from "../fuzz/fuzz-kit";

/**
 * REST bodies are JSON only: a body sent as text/plain, a form, or with no Content-Type at all is
 * not a JSON body: refused with 400 VALIDATION_FAILED naming `body`, and stores nothing (text/plain and forms are what a browser
 * posts from any site without a preflight). A request with no body needs no Content-Type.
 */
let t: TestServer;
let u: TestUser;
let link: { id: string };
let tree: { id: string };

beforeAll(async () => {
  t = await createTestServer();
  u = await t.user({ plan: "pro" });
  link = (await http(`${t.api}/links`, { method: "POST", headers: u.auth, json: { url: "https://example.com/kept" } })).json;
  tree = (await http(`${t.api}/linktrees`, { method: "POST", headers: u.auth, json: { slug: "media-tree", title: "T" } })).json;
});
afterAll(() => t?.close());

const writes = () => [
  { name: "POST /links", method: "POST", path: "/links", body: { url: "https://example.com/typed" } },
  { name: "PATCH /links/{id}", method: "PATCH", path: `/links/${link.id}`, body: { url: "https://example.com/typed" } },
  { name: "POST /linktrees", method: "POST", path: "/linktrees", body: { slug: "typed-tree", title: "T" } },
  { name: "POST /linktrees/{id}/items", method: "POST", path: `/linktrees/${tree.id}/items`, body: { title: "i", url: "https://example.com/i" } },
  { name: "POST /reports", method: "POST", path: "/reports", body: { url: "abcd", reason: "spam" } },
];

describe("request media types", () => {
  it("a JSON body sent as anything but application/json answers 400 VALIDATION_FAILED naming body, and stores nothing", async () => {
    expect(link.id && tree.id).toBeTruthy();
    const types: (string | undefined)[] = [
      "text/plain",
      "text/plain;charset=UTF-8",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "text/json",
      undefined,
    ];
    for (const w of writes()) {
      for (const type of types) {
        const before = await rowCounts(t.app.db);
        const snapshot = (await http(`${t.api}/links/${link.id}`, { headers: u.auth })).text;
        // A Uint8Array body makes fetch send no Content-Type of its own.
        const headers: Record<string, string> = { ...u.auth, ...(type ? { "content-type": type } : {}) };
        const r = await http(`${t.api}${w.path}`, { method: w.method, headers, body: new TextEncoder().encode(JSON.stringify(w.body)) });
        expect(r.status, `${w.name} Content-Type ${type}: ${r.text}`).toBe(400);
        expect(r.json).toEqual({ error: "VALIDATION_FAILED", fields: { body: [expect.stringContaining("application/json")] } });
        expect(await rowCounts(t.app.db), `${w.name} ${type}: stored`).toBe(before);
        expect((await http(`${t.api}/links/${link.id}`, { headers: u.auth })).text, `${w.name} ${type}: changed`).toBe(snapshot);
      }
    }
  });

  it("application/json in any case and with charset=utf-8 is read", async () => {
    for (const type of ["application/json", "Application/JSON", "application/json; charset=utf-8"]) {
      const r = await http(`${t.api}/links`, {
        method: "POST",
        headers: { ...u.auth, "content-type": type },
        body: JSON.stringify({ url: "https://example.com/j" }),
      });
      expect(r.status, `${type}: ${r.text}`).toBe(201);
    }
  });

  it("a request with no body and no Content-Type on a body-less operation keeps working", async () => {
    const made = (await http(`${t.api}/links`, { method: "POST", headers: u.auth, json: { url: "https://example.com/gone" } })).json;
    expect((await http(`${t.api}/links/${made.id}`, { method: "DELETE", headers: u.auth })).status).toBe(204);
    // No such domain: the answer is the domain's 404, not a complaint about the request's type.
    const verify = await http(`${t.api}/domains/zzzzzzzz/verify`, { method: "POST", headers: u.auth });
    expect(verify.status, verify.text).toBe(404);
    // So does an empty body declared as text/plain: there is nothing to read.
    const empty = await http(`${t.api}/domains/zzzzzzzz/verify`, { method: "POST", headers: { ...u.auth, "content-type": "text/plain" }, body: "" });
    expect(empty.status, empty.text).toBe(404);
  });

  it("/openapi.json declares 400 on every operation with a body, and on GET /links", async () => {
    const doc = (await http(`${t.api}/openapi.json`)).json as OpenAPIV3.Document;
    let withBody = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item as Record<string, OpenAPIV3.OperationObject>)) {
        if (!op.requestBody) continue;
        withBody++;
        expect(Object.keys(op.responses), `${method} ${path}`).toContain("400");
      }
    }
    expect(withBody).toBeGreaterThan(5);
    expect(Object.keys(doc.paths["/links"]!.get!.responses)).toContain("400");
    // A repeated query parameter is that 400.
    const repeated = await http(`${t.api}/links?tag=a&tag=b`, { headers: u.auth });
    expect(repeated.status).toBe(400);
  });
});
