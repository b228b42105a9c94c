import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestServer, http, type TestServer, type TestUser } from "../../test/harness";

// Link members of the second round of rules: query forwarding, A/B variants, language targeting,
// archive and the title label, as the API writes and reads them.

let t: TestServer;
let alice: TestUser;

beforeAll(async () => {
  t = await createTestServer();
  alice = await t.user({ plan: "pro" });
});
afterAll(() => t?.close());

const post = (json: unknown) => http(`${t.api}/links`, { method: "POST", json, headers: alice.auth });
const patch = (id: string, json: unknown) => http(`${t.api}/links/${id}`, { method: "PATCH", json, headers: alice.auth });
const get = (id: string) => http(`${t.api}/links/${id}`, { headers: alice.auth });
const list = (query = "") => http(`${t.api}/links${query}`, { headers: alice.auth });
const newLink = async (json: Record<string, unknown> = {}) => {
  const r = await post({ url: "https://a.example/", ...json });
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  return r.json as Record<string, unknown> & { id: string; slug: string };
};
const AB = [
  { url: "https://a.example/", weight: 70 },
  { url: "https://b.example/", weight: 30 },
];
const slug = (name: string) => `${name}-${Math.random().toString(36).slice(2, 8)}`;

describe("new members read only when not their default", () => {
  it("a link made without them has no forward_query, variants, archived or title member", async () => {
    const l = await newLink();
    for (const name of ["forward_query", "variants", "archived", "title"]) expect(l).not.toHaveProperty(name);
    expect(l.targeting).toBeNull();
  });

  it("forward_query false, variants null and archived false on create read as absent", async () => {
    const l = await newLink({ forward_query: false, variants: null, archived: false, title: null });
    for (const name of ["forward_query", "variants", "archived", "title"]) expect(l).not.toHaveProperty(name);
  });

  it("set members read back on create, GET and in GET /links", async () => {
    const l = await newLink({ forward_query: true, variants: AB, targeting: { languages: { de: "https://de.example/" } }, title: "Spring sale" });
    expect(l).toMatchObject({ forward_query: true, variants: AB, targeting: { languages: { de: "https://de.example/" } }, title: "Spring sale" });
    expect((await get(l.id)).json).toMatchObject({ forward_query: true, variants: AB, title: "Spring sale" });
    const listed = ((await list()).json.links as { id: string }[]).find((x) => x.id === l.id);
    expect(listed).toMatchObject({ forward_query: true, variants: AB });
  });
});

describe("forward_query", () => {
  it("PATCH true then false sets and clears it", async () => {
    const l = await newLink();
    expect((await patch(l.id, { forward_query: true })).json.forward_query).toBe(true);
    expect((await patch(l.id, { forward_query: false })).json).not.toHaveProperty("forward_query");
  });

  it('a non-boolean ("true") answers 400 VALIDATION_FAILED naming forward_query', async () => {
    const r = await post({ url: "https://a.example/", forward_query: "true" });
    expect(r.status).toBe(400);
    expect(r.json.error).toBe("VALIDATION_FAILED");
    expect(r.json.fields).toHaveProperty("forward_query");
  });
});

describe("variants", () => {
  it.each([
    ["one variant", [{ url: "https://a.example/", weight: 100 }]],
    ["six variants", [1, 2, 3, 4, 5, 6].map((i) => ({ url: i === 1 ? "https://a.example/" : `https://v${i}.example/`, weight: i === 1 ? 50 : 10 }))],
    [
      "weights summing to 90",
      [
        { url: "https://a.example/", weight: 60 },
        { url: "https://b.example/", weight: 30 },
      ],
    ],
    [
      "a weight of 0",
      [
        { url: "https://a.example/", weight: 100 },
        { url: "https://b.example/", weight: 0 },
      ],
    ],
    [
      "a fractional weight",
      [
        { url: "https://a.example/", weight: 50.5 },
        { url: "https://b.example/", weight: 49.5 },
      ],
    ],
    [
      "a URL that is not http(s)",
      [
        { url: "https://a.example/", weight: 50 },
        { url: "ftp://b.example/", weight: 50 },
      ],
    ],
    [
      "an unknown member",
      [
        { url: "https://a.example/", weight: 50, name: "x" },
        { url: "https://b.example/", weight: 50 },
      ],
    ],
  ])("%s answers 400 VALIDATION_FAILED naming variants and stores nothing", async (_name, variants) => {
    const s = slug("bad-variants");
    const r = await post({ url: "https://a.example/", slug: s, variants });
    expect(r.status).toBe(400);
    expect(r.json.error).toBe("VALIDATION_FAILED");
    expect(Object.keys(r.json.fields)).toEqual(["variants"]);
    expect((await list(`?slug=${s}`)).json.links).toEqual([]);
  });

  it("url that is none of the variants' URLs answers 400 naming variants", async () => {
    const r = await post({ url: "https://c.example/", variants: AB });
    expect(r.status).toBe(400);
    expect(r.json.fields).toHaveProperty("variants");
  });

  it("a variant URL on the redirect domain answers 400 naming variants", async () => {
    const r = await post({ url: "https://a.example/", variants: [AB[0], { url: `${t.redirect}/x`, weight: 30 }] });
    expect(r.status).toBe(400);
    expect(r.json.fields).toHaveProperty("variants");
  });

  it("PATCH null removes them", async () => {
    const l = await newLink({ variants: AB });
    const r = await patch(l.id, { variants: null });
    expect(r.status).toBe(200);
    expect(r.json).not.toHaveProperty("variants");
  });

  it("PATCH of url alone must keep it one of the stored variants' URLs (400 naming url)", async () => {
    const l = await newLink({ variants: AB });
    const r = await patch(l.id, { url: "https://c.example/" });
    expect(r.status).toBe(400);
    expect(r.json.fields).toHaveProperty("url");
    expect((await patch(l.id, { url: "https://b.example/" })).status).toBe(200);
  });

  it("PATCH of variants alone must include the stored url (400 naming variants)", async () => {
    const l = await newLink({ url: "https://c.example/" });
    const r = await patch(l.id, { variants: AB });
    expect(r.status).toBe(400);
    expect(r.json.fields).toHaveProperty("variants");
    expect((await get(l.id)).json).not.toHaveProperty("variants");
  });
});

describe("targeting.languages", () => {
  it("keys are lower-cased on write and geo, ios and android stay beside them", async () => {
    const l = await newLink({ targeting: { languages: { DE: "https://de.example/", pt: "https://pt.example/" }, geo: { br: "https://br.example/" } } });
    expect(l.targeting).toEqual({ languages: { de: "https://de.example/", pt: "https://pt.example/" }, geo: { BR: "https://br.example/" } });
  });

  it("21 languages answer 400 TOO_MANY_RULES naming targeting", async () => {
    const codes = "aa ab af ak am an ar as av ay az ba be bg bi bm bn bo br bs ca".split(" ");
    expect(codes).toHaveLength(21);
    const r = await post({ url: "https://a.example/", targeting: { languages: Object.fromEntries(codes.map((c) => [c, `https://${c}.example/`])) } });
    expect(r.status).toBe(400);
    expect(r.json.error).toBe("TOO_MANY_RULES");
    expect(r.json.fields).toHaveProperty("targeting");
  });

  it("20 languages are accepted (geo keeps its own limit)", async () => {
    const codes = "aa ab af ak am an ar as av ay az ba be bg bi bm bn bo br bs".split(" ");
    const r = await post({ url: "https://a.example/", targeting: { languages: Object.fromEntries(codes.map((c) => [c, `https://${c}.example/`])) } });
    expect(r.status).toBe(201);
  });

  it.each(["de-DE", "e", "deut", "d1", ""])("key %j answers 400 VALIDATION_FAILED naming targeting", async (key) => {
    const r = await post({ url: "https://a.example/", targeting: { languages: { [key]: "https://x.example/" } } });
    expect(r.status).toBe(400);
    expect(r.json.error).toBe("VALIDATION_FAILED");
    expect(r.json.fields).toHaveProperty("targeting");
  });

  it("a language URL that is not http(s) or is on the redirect domain answers 400 naming targeting", async () => {
    for (const url of ["javascript:alert(1)", `${t.redirect}/loop`]) {
      const r = await post({ url: "https://a.example/", targeting: { languages: { de: url } } });
      expect(r.status).toBe(400);
      expect(r.json.fields).toHaveProperty("targeting");
    }
  });
});

describe("archive", () => {
  it("archived: true reads back; GET /links hides it except with status=archived; live and expired leave it out", async () => {
    const l = await newLink({ slug: slug("arch") });
    const r = await patch(l.id, { archived: true });
    expect(r.status).toBe(200);
    expect(r.json.archived).toBe(true);
    const ids = async (q: string) => ((await list(q)).json.links as { id: string }[]).map((x) => x.id);
    expect(await ids("")).not.toContain(l.id);
    expect(await ids("?status=live")).not.toContain(l.id);
    expect(await ids("?status=expired")).not.toContain(l.id);
    expect(await ids("?status=archived")).toEqual(expect.arrayContaining([l.id]));
    expect(await ids("?status=archived&limit=10")).toContain(l.id);
  });

  it("an archived link's slug stays taken: creating it again answers 409 LINK_ID_ALREADY_IN_USE", async () => {
    const l = await newLink({ slug: slug("kept"), archived: true });
    expect(l.archived).toBe(true);
    const r = await post({ url: "https://other.example/", slug: l.slug });
    expect(r.status).toBe(409);
    expect(r.json.error).toBe("LINK_ID_ALREADY_IN_USE");
  });

  it("archived: false puts it back in the list", async () => {
    const l = await newLink({ archived: true });
    const r = await patch(l.id, { archived: false });
    expect(r.json).not.toHaveProperty("archived");
    expect(((await list()).json.links as { id: string }[]).map((x) => x.id)).toContain(l.id);
    expect(((await list("?status=archived")).json.links as { id: string }[]).map((x) => x.id)).not.toContain(l.id);
  });

  it("the dashboard's list hides archived links except under the Archived filter", async () => {
    const l = await newLink({ archived: true });
    const ids = async (status?: "archived" | "active") =>
      ((await t.caller(alice.auth).link.dashboardList(status ? { status } : {})).links as { id: string }[]).map((x) => x.id);
    expect(await ids()).not.toContain(l.id);
    expect(await ids("active")).not.toContain(l.id);
    expect(await ids("archived")).toContain(l.id);
  });

  it("archived: 1 answers 400 VALIDATION_FAILED naming archived", async () => {
    const r = await post({ url: "https://a.example/", archived: 1 });
    expect(r.status).toBe(400);
    expect(r.json.fields).toHaveProperty("archived");
  });
});

describe("title", () => {
  it("is a string or null of at most 200 characters", async () => {
    const l = await newLink({ title: "x".repeat(200) });
    expect(l.title).toHaveLength(200);
    const r = await post({ url: "https://a.example/", title: "x".repeat(201) });
    expect(r.status).toBe(400);
    expect(r.json.fields).toHaveProperty("title");
    expect((await patch(l.id, { title: null })).json).not.toHaveProperty("title");
  });
});

describe("POST /links/bulk", () => {
  it("items take the new members, and a bad one is reported by index", async () => {
    const r = await http(`${t.api}/links/bulk`, {
      method: "POST",
      headers: alice.auth,
      json: {
        links: [
          { url: "https://a.example/", variants: AB, forward_query: true },
          { url: "https://z.example/", variants: AB },
        ],
      },
    });
    expect(r.status).toBe(200);
    expect(r.json.created).toHaveLength(1);
    expect(r.json.created[0]).toMatchObject({ variants: AB, forward_query: true });
    expect(r.json.errors).toEqual([{ index: 1, error: "VALIDATION_FAILED", fields: { variants: [expect.any(String)] } }]);
  });
});
