import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestServer, http, type TestServer, type TestUser } from "../../test/harness";

let t: TestServer;
let alice: TestUser;
let bob: TestUser;
const future = () => Date.now() + 3_600_000;

beforeAll(async () => {
  t = await createTestServer();
  alice = await t.user();
  bob = await t.user();
});
afterAll(() => t?.close());

const post = (json: unknown, auth: Record<string, string> = alice.auth) => http(`${t.api}/links`, { method: "POST", json, headers: auth });
const patch = (id: string, json: unknown, auth = alice.auth) => http(`${t.api}/links/${id}`, { method: "PATCH", json, headers: auth });
const del = (id: string, auth = alice.auth) => http(`${t.api}/links/${id}`, { method: "DELETE", headers: auth });
const newLink = async (json: Record<string, unknown> = {}, auth = alice.auth) => {
  const r = await post({ url: "https://example.com/", ...json }, auth);
  expect(r.status).toBe(201);
  return r.json;
};

describe("POST /links", () => {
  it("creates a link with 201 and every field of the Link resource", async () => {
    const r = await post({ url: "https://example.com/page?utm_source=x" });
    expect(r.status).toBe(201);
    expect(r.json).toEqual({
      id: expect.stringMatching(/^[0-9a-z]{8}$/),
      slug: expect.stringMatching(/^[0-9a-z]{4}$/),
      url: "https://example.com/page?utm_source=x",
      short_url: `${t.redirect}/${r.json.slug}`,
      redirect_domain: new URL(t.redirect).host,
      tags: [],
      expires_at: null,
      expiration_url: null,
      targeting: null,
      has_password: false,
      og_title: null,
      og_description: null,
      og_image: null,
      created_at: expect.any(Number),
      updated_at: expect.any(Number),
      deleted_at: null,
    });
  });

  it("stores links created without authentication under the public workspace", async () => {
    const r = await post({ url: "https://example.com/anon" }, {});
    expect(r.status).toBe(201);
    const list = await http(`${t.api}/links`, { headers: alice.auth });
    expect(list.json.links.map((l: { id: string }) => l.id)).not.toContain(r.json.id);
  });

  it("deduplicates and sorts tags on write", async () => {
    const l = await newLink({ tags: ["b", "a", "b", "c-1"] });
    expect(l.tags).toEqual(["a", "b", "c-1"]);
  });

  it.each([
    [{ tags: ["UPPER"] }, "INVALID_TAG", "tags"],
    [{ tags: Array.from({ length: 11 }, (_, i) => `t${i}`) }, "INVALID_TAG", "tags"],
    [{ tags: ["x".repeat(25)] }, "INVALID_TAG", "tags"],
    [{ slug: "Has Space" }, "INVALID_LINK_ID", "slug"],
    [{ slug: "x".repeat(51) }, "INVALID_LINK_ID", "slug"],
    [{ expires_at: Date.now() - 1000 }, "EXPIRES_AT_IN_THE_PAST", "expires_at"],
    [{ expiration_url: "https://example.com/gone" }, "EXPIRATION_URL_WITHOUT_EXPIRY", "expiration_url"],
    [
      {
        targeting: {
          geo: Object.fromEntries(
            [...Array(51)].map((_, i) => [
              [
                "US",
                "DE",
                "FR",
                "GB",
                "BR",
                "PT",
                "ES",
                "IT",
                "NL",
                "BE",
                "JP",
                "CN",
                "IN",
                "CA",
                "MX",
                "AR",
                "CL",
                "CO",
                "PE",
                "UY",
                "PY",
                "BO",
                "EC",
                "VE",
                "CU",
                "DO",
                "PR",
                "JM",
                "HT",
                "GT",
                "HN",
                "SV",
                "NI",
                "CR",
                "PA",
                "SE",
                "NO",
                "DK",
                "FI",
                "IS",
                "IE",
                "PL",
                "CZ",
                "SK",
                "HU",
                "AT",
                "CH",
                "LI",
                "LU",
                "MC",
                "AD",
              ][i],
              "https://x.example",
            ]),
          ),
        },
      },
      "TOO_MANY_RULES",
      "targeting",
    ],
    [{ targeting: { geo: { XX: "https://x.example" } } }, "VALIDATION_FAILED", "targeting"],
    [{ password: "abc" }, "VALIDATION_FAILED", "password"],
    [{ password: "x".repeat(201) }, "VALIDATION_FAILED", "password"],
    [{ og_title: "x".repeat(121) }, "VALIDATION_FAILED", "og_title"],
    [{ og_description: "x".repeat(241) }, "VALIDATION_FAILED", "og_description"],
    [{ og_image: "data:image/png;base64,AAAA" }, "VALIDATION_FAILED", "og_image"],
    [{ url: "javascript:alert(1)" }, "VALIDATION_FAILED", "url"],
    [{ url: "/relative" }, "VALIDATION_FAILED", "url"],
    [{ url: `https://example.com/${"x".repeat(4100)}` }, "VALIDATION_FAILED", "url"],
    [{ unknown_member: 1 }, "VALIDATION_FAILED", "unknown_member"],
    [{ expires_at: "tomorrow" }, "VALIDATION_FAILED", "expires_at"],
  ])("rejects %j with 400 %s naming the field", async (extra, code, field) => {
    const r = await post({ url: "https://example.com/", ...extra });
    expect(r.status).toBe(400);
    expect(r.json.error).toBe(code);
    expect(r.json.fields[field]).toEqual(expect.arrayContaining([expect.any(String)]));
  });

  it("requires url", async () => {
    const r = await post({});
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ error: "VALIDATION_FAILED", fields: { url: expect.any(Array) } });
  });

  it("rejects a destination on the redirect domain itself (no loops)", async () => {
    const r = await post({ url: `${t.redirect}/abcd` });
    expect(r.status).toBe(400);
    expect(r.json.fields.url).toBeDefined();
  });

  it("rejects a destination on the redirect domain under another loopback name (no loops)", async () => {
    const port = new URL(t.redirect).port;
    for (const host of [`localhost:${port}`, `LOCALHOST.:${port}`, `[::1]:${port}`, `127.0.0.2:${port}`]) {
      const r = await post({ url: `http://${host}/abcd` });
      expect(r.status, host).toBe(400);
      expect(r.json.fields.url, host).toBeDefined();
    }
    // Another port of the same machine is another server.
    expect((await post({ url: `http://localhost:${Number(port) + 1}/abcd` })).status).toBe(201);
  });

  it("lists every failing field and uses the first specific code", async () => {
    const r = await post({ url: "nope", slug: "BAD!", tags: ["BAD"] });
    expect(r.status).toBe(400);
    expect(r.json.error).toBe("INVALID_LINK_ID");
    expect(Object.keys(r.json.fields).sort()).toEqual(["slug", "tags", "url"]);
  });

  it("lists a missing expiry together with the other failing fields, under its specific code", async () => {
    const r = await post({ url: "nope", expiration_url: "https://example.com/gone" });
    expect(r.status).toBe(400);
    expect(r.json.error).toBe("EXPIRATION_URL_WITHOUT_EXPIRY");
    expect(Object.keys(r.json.fields).sort()).toEqual(["expiration_url", "url"]);
  });

  it("answers 409 LINK_ID_ALREADY_IN_USE for a taken slug", async () => {
    await newLink({ slug: "taken-slug" });
    const r = await post({ url: "https://example.com/", slug: "taken-slug" }, bob.auth);
    expect(r.status).toBe(409);
    expect(r.json).toEqual({ error: "LINK_ID_ALREADY_IN_USE" });
  });

  it("upper-cases geo keys and stores empty targeting as null", async () => {
    const a = await newLink({ targeting: { geo: { de: "https://de.example" }, ios: "https://apps.apple.com/x" } });
    expect(a.targeting).toEqual({ geo: { DE: "https://de.example" }, ios: "https://apps.apple.com/x" });
    const b = await newLink({ targeting: { geo: {} } });
    expect(b.targeting).toBeNull();
  });

  it("never returns the password or its hash, only has_password", async () => {
    const l = await newLink({ password: "s3cret-pass" });
    expect(l.has_password).toBe(true);
    expect(JSON.stringify(l)).not.toContain("s3cret");
    expect(JSON.stringify(l)).not.toContain("scrypt");
  });

  it("answers 401 UNAUTHORIZED for an invalid or malformed credential", async () => {
    for (const h of [{ authorization: "tok_abc" }, { authorization: "Bearer tok_" + "A".repeat(32) }, { authorization: alice.token }]) {
      const r = await post({ url: "https://example.com/" }, h);
      expect(r.status).toBe(401);
      expect(r.json).toEqual({ error: "UNAUTHORIZED" });
    }
  });

  it("accepts application/json with a charset parameter", async () => {
    const r = await http(`${t.api}/links`, {
      method: "POST",
      body: JSON.stringify({ url: "https://example.com/cs" }),
      headers: { ...alice.auth, "content-type": "application/json; charset=utf-8" },
    });
    expect(r.status).toBe(201);
  });

  it("answers 413 PAYLOAD_TOO_LARGE for a body over 64 KiB", async () => {
    const r = await post({ url: "https://example.com/", og_title: "x".repeat(70_000) });
    expect(r.status).toBe(413);
    expect(r.json).toEqual({ error: "PAYLOAD_TOO_LARGE" });
  });

  it("answers 400 VALIDATION_FAILED with fields.body for a body that is not a JSON object", async () => {
    for (const body of ["not json", "[1,2]", "42", "null"]) {
      const r = await http(`${t.api}/links`, { method: "POST", body, headers: { ...alice.auth, "content-type": "application/json" } });
      expect(r.status).toBe(400);
      expect(r.json).toMatchObject({ error: "VALIDATION_FAILED", fields: { body: expect.any(Array) } });
    }
  });
});

describe("GET /links", () => {
  it("lists the caller's links newest first, without other workspaces' links", async () => {
    const a = await newLink();
    const b = await newLink();
    const mine = await http(`${t.api}/links`, { headers: alice.auth });
    expect(mine.status).toBe(200);
    const ids = mine.json.links.map((l: { id: string }) => l.id);
    expect(ids.indexOf(b.id)).toBeLessThan(ids.indexOf(a.id));
    const theirs = await http(`${t.api}/links`, { headers: bob.auth });
    expect(theirs.json.links.map((l: { id: string }) => l.id)).not.toContain(a.id);
  });

  it("requires a credential (401)", async () => {
    const r = await http(`${t.api}/links`);
    expect(r.status).toBe(401);
    expect(r.json).toEqual({ error: "UNAUTHORIZED" });
  });
});

describe("PATCH /links/{id}", () => {
  it("leaves omitted fields, clears null ones and sets given ones", async () => {
    const l = await newLink({ tags: ["a"], og_title: "T", og_description: "D" });
    const r = await patch(l.id, { og_title: null, og_description: "New" });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ tags: ["a"], og_title: null, og_description: "New", url: l.url });
    expect(r.json.updated_at).toBeGreaterThan(l.updated_at);
    expect((await patch(l.id, { tags: [] })).json.tags).toEqual([]);
  });

  it("requires at least one property", async () => {
    const l = await newLink();
    const r = await patch(l.id, {});
    expect(r.status).toBe(400);
    expect(r.json.error).toBe("VALIDATION_FAILED");
  });

  it("accepts expiration_url when an expiry is already stored, and clears it with expires_at null", async () => {
    const l = await newLink({ expires_at: future() });
    const a = await patch(l.id, { expiration_url: "https://example.com/expired" });
    expect(a.status).toBe(200);
    expect(a.json.expiration_url).toBe("https://example.com/expired");
    const b = await patch(l.id, { expires_at: null });
    expect(b.json).toMatchObject({ expires_at: null, expiration_url: null });
  });

  it("answers 400 EXPIRATION_URL_WITHOUT_EXPIRY with no expiry stored or sent", async () => {
    const l = await newLink();
    const r = await patch(l.id, { expiration_url: "https://example.com/x" });
    expect(r.status).toBe(400);
    expect(r.json.error).toBe("EXPIRATION_URL_WITHOUT_EXPIRY");
  });

  it("sets and clears a password", async () => {
    const l = await newLink();
    expect((await patch(l.id, { password: "hunter22" })).json.has_password).toBe(true);
    expect((await patch(l.id, { password: null })).json.has_password).toBe(false);
  });

  it("answers 409 LINK_ID_ALREADY_IN_USE when renaming to a taken slug", async () => {
    await newLink({ slug: "rename-target" });
    const l = await newLink();
    const r = await patch(l.id, { slug: "rename-target" });
    expect(r.status).toBe(409);
    expect(r.json.error).toBe("LINK_ID_ALREADY_IN_USE");
  });

  it("answers 404 for another workspace's link and 400 INVALID_LINK_ID for a malformed id", async () => {
    const l = await newLink();
    expect((await patch(l.id, { url: "https://x.example" }, bob.auth)).status).toBe(404);
    const bad = await patch("NOT-AN-ID", { url: "https://x.example" });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toBe("INVALID_LINK_ID");
  });
});

describe("DELETE /links/{id}", () => {
  it("answers 204 with no body, frees the slug, keeps the record, and answers 204 again", async () => {
    const l = await newLink({ slug: "delete-me" });
    const r = await del(l.id);
    expect(r.status).toBe(204);
    expect(r.text).toBe("");
    expect(r.headers.get("content-type")).toBeNull();
    expect((await del(l.id)).status).toBe(204);
    const got = await http(`${t.api}/links/${l.id}`, { headers: alice.auth });
    expect(got.json.deleted_at).toEqual(expect.any(Number));
    const list = await http(`${t.api}/links`, { headers: alice.auth });
    expect(list.json.links.map((x: { id: string }) => x.id)).not.toContain(l.id);
    const again = await post({ url: "https://example.com/", slug: "delete-me" });
    expect(again.status).toBe(201);
  });

  it("answers 404 NOT_FOUND for an unknown link and for another workspace's link", async () => {
    expect((await del("zzzzzzzz")).json).toEqual({ error: "NOT_FOUND" });
    const l = await newLink();
    const r = await del(l.id, bob.auth);
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ error: "NOT_FOUND" });
  });
});

describe("transport", () => {
  it("answers 404 NOT_FOUND for an unknown path and 405 METHOD_NOT_ALLOWED for a wrong method", async () => {
    expect((await http(`${t.api}/nothing-here`)).json).toEqual({ error: "NOT_FOUND" });
    const r = await http(`${t.api}/links`, { method: "PUT", headers: alice.auth });
    expect(r.status).toBe(405);
    expect(r.json).toEqual({ error: "METHOD_NOT_ALLOWED" });
  });

  it("sends RateLimit headers on token answers", async () => {
    const r = await http(`${t.api}/links`, { headers: alice.auth });
    expect(r.headers.get("ratelimit-limit")).toBe("100");
    expect(Number(r.headers.get("ratelimit-remaining"))).toBeLessThan(100);
    expect(Number(r.headers.get("ratelimit-reset"))).toBeGreaterThan(0);
  });
});

describe("generated slugs", () => {
  it("are 4 characters and unique under concurrency", async () => {
    const results = await Promise.all(Array.from({ length: 40 }, () => post({ url: "https://example.com/c" }, bob.auth)));
    const slugs = results.map((r) => r.json.slug);
    expect(results.every((r) => r.status === 201)).toBe(true);
    expect(slugs.every((s) => /^[0-9a-z]{4}$/.test(s))).toBe(true);
    expect(new Set(slugs).size).toBe(slugs.length);
  });
});

describe("title: a label for people, optional, never a share card", () => {
  it("is absent on read when unset, so a link made without it reads exactly as before", async () => {
    const l = await newLink();
    expect(l).not.toHaveProperty("title");
    expect((await http(`${t.api}/links/${l.id}`, { headers: alice.auth })).json).not.toHaveProperty("title");
  });

  it("is set on create, changed and cleared by PATCH, and leaves the share-card members alone", async () => {
    const l = await newLink({ title: "Spring campaign — landing" });
    expect(l).toMatchObject({ title: "Spring campaign — landing", og_title: null });
    const listed = (await http(`${t.api}/links`, { headers: alice.auth })).json.links.find((x: { id: string }) => x.id === l.id);
    expect(listed.title).toBe("Spring campaign — landing");
    const changed = await patch(l.id, { title: "Renamed" });
    expect(changed.status).toBe(200);
    expect(changed.json).toMatchObject({ title: "Renamed", og_title: null });
    expect((await patch(l.id, { og_title: "Card" })).json).toMatchObject({ title: "Renamed", og_title: "Card" });
    const cleared = await patch(l.id, { title: null });
    expect(cleared.json).not.toHaveProperty("title");
    expect(cleared.json.og_title).toBe("Card");
    // An empty title is no title.
    expect((await patch(l.id, { title: "" })).json).not.toHaveProperty("title");
  });

  it("is at most 200 characters: 400 VALIDATION_FAILED naming title", async () => {
    expect((await post({ url: "https://example.com/", title: "x".repeat(200) })).status).toBe(201);
    const r = await post({ url: "https://example.com/", title: "x".repeat(201) });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ error: "VALIDATION_FAILED", fields: { title: ["at most 200 characters"] } });
    const l = await newLink();
    const p = await patch(l.id, { title: 42 });
    expect(p.status).toBe(400);
    expect(p.json).toMatchObject({ error: "VALIDATION_FAILED", fields: { title: expect.any(Array) } });
  });

  it("goes in through POST /links/bulk", async () => {
    const r = await http(`${t.api}/links/bulk`, {
      method: "POST",
      json: { links: [{ url: "https://example.com/b1", title: "Bulk one" }, { url: "https://example.com/b2" }] },
      headers: alice.auth,
    });
    expect(r.status).toBe(200);
    expect(r.json.created[0].title).toBe("Bulk one");
    expect(r.json.created[1]).not.toHaveProperty("title");
  });

  it("is matched by the dashboard search q", async () => {
    const word = `label${Math.random().toString(36).slice(2, 8)}`;
    const l = await newLink({ title: `The ${word.toUpperCase()} page` });
    await newLink({ og_title: "unrelated" });
    const found = await t.caller(alice.auth).link.dashboardList({ q: word });
    expect(found.links.map((x) => x.id)).toEqual([l.id]);
    expect(found.links[0].title).toBe(`The ${word.toUpperCase()} page`);
  });

  it("is described, optional, in /openapi.json", async () => {
    const doc = (await http(`${t.api}/openapi.json`)).json;
    const create = doc.paths["/links"].post.requestBody.content["application/json"].schema;
    expect(create.properties.title).toMatchObject({ type: "string", maxLength: 200 });
    expect(create.required).not.toContain("title");
  });
});
