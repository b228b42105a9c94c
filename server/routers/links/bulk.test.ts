import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestServer, http, type TestServer, type TestUser } from "../../test/harness";

let t: TestServer;
let alice: TestUser;
const rnd = () => Math.random().toString(36).slice(2, 10);

beforeAll(async () => {
  t = await createTestServer();
  alice = await t.user();
});
afterAll(() => t?.close());

const bulk = (json: unknown, auth: Record<string, string> = alice.auth) => http(`${t.api}/links/bulk`, { method: "POST", json, headers: auth });
const single = (json: unknown, auth: Record<string, string> = alice.auth) => http(`${t.api}/links`, { method: "POST", json, headers: auth });

describe("POST /links/bulk", () => {
  it("creates every valid item in input order and reports each bad one by 0-based index, one bad item stopping no other", async () => {
    const taken = `taken-${rnd()}`;
    expect((await single({ url: "https://example.com/first", slug: taken })).status).toBe(201);
    const slugA = `a-${rnd()}`;
    const slugB = `b-${rnd()}`;
    const r = await bulk({
      links: [
        { url: "https://example.com/1", slug: slugA, tags: ["b", "a"] },
        { url: "ftp://nope" },
        { url: "https://example.com/3", slug: taken },
        { url: "https://example.com/4" },
        "not an object",
        { url: "https://example.com/6", slug: slugB, unknown: 1 },
        { url: "https://example.com/7", slug: slugB },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.json.created.map((l: { url: string }) => l.url)).toEqual(["https://example.com/1", "https://example.com/4", "https://example.com/7"]);
    expect(r.json.created[0]).toMatchObject({ slug: slugA, tags: ["a", "b"], short_url: `${t.redirect}/${slugA}` });
    expect(r.json.errors).toEqual([
      { index: 1, error: "VALIDATION_FAILED", fields: { url: ["must be an absolute http or https URL"] } },
      { index: 2, error: "LINK_ID_ALREADY_IN_USE" },
      { index: 4, error: "VALIDATION_FAILED", fields: { body: [expect.any(String)] } },
      { index: 5, error: "VALIDATION_FAILED", fields: { unknown: ["unknown field unknown"] } },
    ]);
    const list = await http(`${t.api}/links`, { headers: alice.auth });
    expect(list.json.links.map((l: { slug: string }) => l.slug)).toEqual(expect.arrayContaining([slugA, slugB]));
  });

  it("gives each item's error the same code and fields as POST /links would", async () => {
    const bodies = [
      { url: "https://example.com/", slug: "No Spaces", tags: ["UPPER"] },
      { url: "https://example.com/", expires_at: Date.now() - 1000 },
      { url: "https://example.com/", expiration_url: "https://example.com/gone" },
      { url: `${t.redirect}/loop` },
      { url: "https://example.com/", og_title: "x".repeat(121) },
    ];
    const r = await bulk({ links: bodies });
    expect(r.status).toBe(200);
    expect(r.json.created).toEqual([]);
    for (const [index, b] of bodies.entries()) {
      const one = await single(b);
      expect(one.status).toBe(400);
      expect(r.json.errors[index]).toEqual({ index, ...one.json });
    }
  });

  it.each([
    ["no links member", {}],
    ["links not an array", { links: { url: "https://example.com/" } }],
    ["0 items", { links: [] }],
    ["101 items", { links: Array.from({ length: 101 }, () => ({ url: "https://example.com/" })) }],
    ["an unknown member", { links: [{ url: "https://example.com/" }], extra: true }],
  ])("answers 400 VALIDATION_FAILED for a body with %s, creating nothing", async (_what, json) => {
    const before = (await http(`${t.api}/links`, { headers: alice.auth })).json.links.length;
    const r = await bulk(json);
    expect(r.status).toBe(400);
    expect(r.json.error).toBe("VALIDATION_FAILED");
    expect(Object.keys(r.json.fields).length).toBeGreaterThan(0);
    expect((await http(`${t.api}/links`, { headers: alice.auth })).json.links.length).toBe(before);
  });

  it("answers 400 for a body that is not a JSON object", async () => {
    const r = await http(`${t.api}/links/bulk`, { method: "POST", body: "[1,2]", headers: { ...alice.auth, "content-type": "application/json" } });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ error: "VALIDATION_FAILED", fields: { body: ["must be a JSON object"] } });
  });

  it("needs a token or a session (401 without)", async () => {
    const r = await bulk({ links: [{ url: "https://example.com/" }] }, {});
    expect(r.status).toBe(401);
    expect(r.json).toEqual({ error: "UNAUTHORIZED" });
  });

  it("counts one bulk call as one request for the rate limit, whatever the number of items", async () => {
    const bob = await t.user({ plan: "free" });
    const r1 = await bulk({ links: Array.from({ length: 100 }, (_, i) => ({ url: `https://example.com/r/${i}` })) }, bob.auth);
    expect(r1.status).toBe(200);
    expect(r1.json.created).toHaveLength(100);
    expect(r1.headers.get("ratelimit-remaining")).toBe("99");
    const r2 = await http(`${t.api}/links`, { headers: bob.auth });
    expect(r2.headers.get("ratelimit-remaining")).toBe("98");
  });

  it("is in /openapi.json with the POST /links item schema and its statuses", async () => {
    const doc = (await http(`${t.api}/openapi.json`)).json;
    const op = doc.paths["/links/bulk"].post;
    expect(Object.keys(op.responses).sort()).toEqual(["200", "400", "401", "403", "409", "413", "422", "429", "500", "503"]);
    expect(op.security).toEqual([{ bearerAuth: [] }, { sessionCookie: [] }]);
    const items = op.requestBody.content["application/json"].schema.properties.links;
    expect([items.minItems, items.maxItems]).toEqual([1, 100]);
    const single = doc.paths["/links"].post.requestBody.content["application/json"].schema;
    expect(items.items).toEqual(single);
    expect(op.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/BulkResult" });
    expect(doc.components.schemas.BulkResult.properties.errors.items.required).toEqual(["index", "error"]);
  });
});
