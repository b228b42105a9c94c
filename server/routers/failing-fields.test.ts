import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COUNTRY_CODES } from "../domain/countries";
import { createTestServer, http, type TestServer, type TestUser } from "../test/harness";

// docs/decisions/014-errors-list-every-failing-field.md: `fields` lists every failing field; `error` is the code of the first failing field
// that has one, in the documented order of the body's fields (path parameters first, unknown
// members last), whatever order the body sends them in.

let t: TestServer;
let alice: TestUser;
let linkId: string;
let treeId: string;
let itemId: string;
let seq = 0;
const past = Date.now() - 60_000;
const geo = (n: number) => Object.fromEntries([...COUNTRY_CODES].slice(0, n).map((c) => [c, `https://example.com/${c}`]));
const unique = (p: string) => `${p}-${Date.now().toString(36)}-${seq++}`;

beforeAll(async () => {
  t = await createTestServer({ TRUST_PROXY: "true" });
  alice = await t.user({ plan: "pro" });
  linkId = (await req("POST", "/links", { url: "https://example.com/" })).json.id;
  treeId = (await req("POST", "/linktrees", { slug: unique("ff"), title: "T" })).json.id;
  itemId = (await req("POST", `/linktrees/${treeId}/items`, { title: "I", url: "https://example.com/" })).json.id;
});
afterAll(() => t?.close());

const fill = (path: string) => path.replace("{link}", linkId).replace("{tree}", treeId).replace("{item}", itemId);
function req(method: string, path: string, json: unknown, headers: Record<string, string> = alice.auth) {
  return http(`${t.api}${fill(path)}`, { method, json, headers: { "x-forwarded-for": `10.9.${seq % 250}.${(seq++ % 250) + 1}`, ...headers } });
}

type Case = [name: string, body: Record<string, unknown>, error: string, fields: string[]];
const check =
  (method: string, path: string, headers?: () => Record<string, string>) =>
  async (_name: string, body: Record<string, unknown>, error: string, fields: string[]) => {
    const r = await req(method, path, body, headers?.());
    expect(r.status, r.text).toBe(400);
    expect(r.json.error).toBe(error);
    expect(Object.keys(r.json.fields).sort()).toEqual([...fields].sort());
  };

describe("POST /links lists every failing field", () => {
  const cases: Case[] = [
    [
      "expiration_url without expiry and 51 geo entries",
      { url: "https://example.com/", expiration_url: "https://example.com/x", targeting: { geo: geo(51) } },
      "EXPIRATION_URL_WITHOUT_EXPIRY",
      ["expiration_url", "targeting"],
    ],
    [
      "the same, targeting sent first",
      { targeting: { geo: geo(51) }, expiration_url: "https://example.com/x", url: "https://example.com/" },
      "EXPIRATION_URL_WITHOUT_EXPIRY",
      ["expiration_url", "targeting"],
    ],
    [
      "a bad tag and expiration_url without expiry",
      { url: "https://example.com/", tags: ["BAD"], expiration_url: "https://example.com/x" },
      "INVALID_TAG",
      ["expiration_url", "tags"],
    ],
    [
      "eleven tags and expiration_url without expiry",
      { url: "https://example.com/", tags: "abcdefghijk".split(""), expiration_url: "https://example.com/x" },
      "INVALID_TAG",
      ["expiration_url", "tags"],
    ],
    ["a bad url, slug and tag", { url: "nope", slug: "BAD!", tags: ["BAD"] }, "INVALID_LINK_ID", ["slug", "tags", "url"]],
    [
      "a past expiry, 51 geo entries and a short password",
      { url: "https://example.com/", expires_at: past, expiration_url: "https://example.com/x", targeting: { geo: geo(51) }, password: "x" },
      "EXPIRES_AT_IN_THE_PAST",
      ["expires_at", "password", "targeting"],
    ],
    [
      "an expiry of the wrong type and expiration_url",
      { url: "https://example.com/", expires_at: "tomorrow", expiration_url: "https://example.com/x" },
      "VALIDATION_FAILED",
      ["expires_at"],
    ],
    [
      "expires_at null and expiration_url",
      { url: "https://example.com/", expires_at: null, expiration_url: "https://example.com/x" },
      "EXPIRATION_URL_WITHOUT_EXPIRY",
      ["expiration_url", "expires_at"],
    ],
    [
      "an unknown member, a bad tag and a long og_title",
      { url: "https://example.com/", bogus: 1, tags: ["BAD"], og_title: "x".repeat(121) },
      "INVALID_TAG",
      ["bogus", "og_title", "tags"],
    ],
    [
      "no url, 51 geo entries and an og_image of the wrong type",
      { targeting: { geo: geo(51) }, og_image: 5 },
      "TOO_MANY_RULES",
      ["og_image", "targeting", "url"],
    ],
  ];
  it.each(cases)("%s", check("POST", "/links"));

  // The loop check needs the configured redirect domain, so it runs outside the schema: still listed.
  const loops = (): Case[] => [
    ["a url on the redirect domain and a bad slug", { url: `${t.redirect}/x`, slug: "BAD!" }, "INVALID_LINK_ID", ["slug", "url"]],
    ["a url on the redirect domain and 51 geo entries", { targeting: { geo: geo(51) }, url: `${t.redirect}/x` }, "TOO_MANY_RULES", ["targeting", "url"]],
    [
      "an og_image on the redirect domain and a long og_title",
      { url: "https://example.com/", og_title: "x".repeat(121), og_image: `${t.redirect}/a.png` },
      "VALIDATION_FAILED",
      ["og_image", "og_title"],
    ],
  ];
  it("lists a url on the redirect domain with the schema's failures", async () => {
    for (const c of loops()) await check("POST", "/links")(...c);
  });

  it("lists a domain that is not one of the workspace's with the schema's failures", async () => {
    await check("POST", "/links")("", { url: "https://example.com/", slug: "BAD!", domain: "unknown.example" }, "INVALID_LINK_ID", ["domain", "slug"]);
  });
});

describe("PATCH /links/{id} lists every failing field", () => {
  const cases: Case[] = [
    [
      "expires_at null with expiration_url and 51 geo entries",
      { expires_at: null, expiration_url: "https://example.com/x", targeting: { geo: geo(51) } },
      "EXPIRATION_URL_WITHOUT_EXPIRY",
      ["expiration_url", "targeting"],
    ],
    [
      "a bad tag with expires_at null and expiration_url",
      { expiration_url: "https://example.com/x", expires_at: null, tags: ["BAD"] },
      "INVALID_TAG",
      ["expiration_url", "tags"],
    ],
    [
      "a bad slug, a past expiry and a short password",
      { password: "x", expires_at: past, slug: "BAD!" },
      "INVALID_LINK_ID",
      ["expires_at", "password", "slug"],
    ],
    [
      "a long og_description and a bad og_image",
      { og_description: "x".repeat(241), og_image: "ftp://example.com/a.png" },
      "VALIDATION_FAILED",
      ["og_description", "og_image"],
    ],
    ["an unknown member and 51 geo entries", { bogus: true, targeting: { geo: geo(51) } }, "TOO_MANY_RULES", ["bogus", "targeting"]],
    ["no member", {}, "VALIDATION_FAILED", ["body"]],
  ];
  it.each(cases)("%s", check("PATCH", "/links/{link}"));

  // Whether the link has an expiry stored needs the database: still listed with the schema's failures.
  it.each<Case>([
    [
      "expiration_url on a link with no expiry stored, and eleven tags",
      { expiration_url: "https://example.com/x", tags: "abcdefghijk".split("") },
      "INVALID_TAG",
      ["expiration_url", "tags"],
    ],
    [
      "expiration_url on a link with no expiry stored, and a short password",
      { password: "x", expiration_url: "https://example.com/x" },
      "EXPIRATION_URL_WITHOUT_EXPIRY",
      ["expiration_url", "password"],
    ],
    ["expiration_url on a link with no expiry stored, alone", { expiration_url: "https://example.com/x" }, "EXPIRATION_URL_WITHOUT_EXPIRY", ["expiration_url"]],
  ])("%s", check("PATCH", "/links/{link}"));

  it("lists a domain that is not one of the workspace's with the schema's failures", async () => {
    await check("PATCH", "/links/{link}")("", { domain: "unknown.example", og_title: "x".repeat(121) }, "VALIDATION_FAILED", ["domain", "og_title"]);
  });

  it("lists a url on the redirect domain with the schema's failures", async () => {
    await check("PATCH", "/links/{link}")("", { url: `${t.redirect}/x`, og_title: "x".repeat(121) }, "VALIDATION_FAILED", ["og_title", "url"]);
  });

  it("names a malformed path id first, with the body's failures", async () => {
    const r = await req("PATCH", "/links/NOT-AN-ID", { expires_at: past, og_title: "x".repeat(121) });
    expect(r.status).toBe(400);
    expect(r.json.error).toBe("INVALID_LINK_ID");
    expect(Object.keys(r.json.fields).sort()).toEqual(["expires_at", "id", "og_title"]);
  });
});

describe("linktrees list every failing field", () => {
  const create: Case[] = [
    ["a bad slug, an empty title and a long bio", { slug: "BAD!", title: "", bio: "x".repeat(301) }, "INVALID_LINK_ID", ["bio", "slug", "title"]],
    ["no slug, a long title and an unknown member", { title: "x".repeat(101), bogus: 1 }, "INVALID_LINK_ID", ["bogus", "slug", "title"]],
    [
      "a bad avatar_url and a bio of the wrong type",
      { slug: unique("ff"), title: "T", avatar_url: "nope", bio: 5 },
      "VALIDATION_FAILED",
      ["avatar_url", "bio"],
    ],
  ];
  it.each(create)("POST /linktrees: %s", check("POST", "/linktrees"));

  const update: Case[] = [
    ["an empty title and published of the wrong type", { title: "", published: "yes" }, "VALIDATION_FAILED", ["published", "title"]],
    ["a bad slug and a bad avatar_url", { avatar_url: "nope", slug: "BAD!" }, "INVALID_LINK_ID", ["avatar_url", "slug"]],
    ["no member", {}, "VALIDATION_FAILED", ["body"]],
  ];
  it.each(update)("PATCH /linktrees/{id}: %s", check("PATCH", "/linktrees/{tree}"));
});

describe("linktree items list every failing field", () => {
  const create: Case[] = [
    [
      "an empty title, a bad url and a position of the wrong type",
      { title: "", url: "nope", position: "1" },
      "VALIDATION_FAILED",
      ["position", "title", "url"],
    ],
    ["no title, no url and an unknown member", { bogus: 1 }, "VALIDATION_FAILED", ["bogus", "title", "url"]],
  ];
  it.each(create)("POST /linktrees/{id}/items: %s", check("POST", "/linktrees/{tree}/items"));

  it("POST /linktrees/{id}/items: a url on the redirect domain and an empty title", async () => {
    await check("POST", "/linktrees/{tree}/items")("", { title: "", url: `${t.redirect}/x` }, "VALIDATION_FAILED", ["title", "url"]);
  });

  const update: Case[] = [
    ["a long title and active of the wrong type", { title: "x".repeat(501), active: "no" }, "VALIDATION_FAILED", ["active", "title"]],
    ["a bad url and a fractional position", { url: "nope", position: 1.5 }, "VALIDATION_FAILED", ["position", "url"]],
    ["no member", {}, "VALIDATION_FAILED", ["body"]],
  ];
  it.each(update)("PATCH /linktrees/{id}/items/{itemId}: %s", check("PATCH", "/linktrees/{tree}/items/{item}"));
});

describe("POST /reports lists every failing field", () => {
  const cases: Case[] = [
    [
      "a bad reason, a long detail and a bad e-mail with a url that is no short link",
      { url: "https://", reason: "bad", detail: "x".repeat(1001), email: "nope" },
      "NOT_A_SHORT_LINK",
      ["detail", "email", "reason", "url"],
    ],
    ["a bad reason first, then a url that is no short link", { reason: "bad", url: "not a link" }, "NOT_A_SHORT_LINK", ["reason", "url"]],
    ["a bad reason and an unknown member", { url: "abcd", reason: "bad", bogus: 1 }, "VALIDATION_FAILED", ["bogus", "reason"]],
    ["no url and no reason", {}, "VALIDATION_FAILED", ["reason", "url"]],
    // The host is checked against the served domains (the database knows the branded ones): still listed.
    [
      "a well-formed url on a host not served here and a bad reason",
      { url: "https://elsewhere.example/abcd", reason: "bad" },
      "NOT_A_SHORT_LINK",
      ["reason", "url"],
    ],
    [
      "a well-formed url on a host not served here and a bad e-mail",
      { email: "nope", url: "https://elsewhere.example/abcd", reason: "spam" },
      "NOT_A_SHORT_LINK",
      ["email", "url"],
    ],
  ];
  it.each(cases)(
    "%s",
    check("POST", "/reports", () => ({})),
  );
});

describe("POST /links/bulk lists every failing field of an item", () => {
  it("an item with a url on the redirect domain and a bad slug lists both", async () => {
    const r = await req("POST", "/links/bulk", { links: [{ url: "https://example.com/ok" }, { url: `${t.redirect}/x`, slug: "BAD!" }] });
    expect(r.status, r.text).toBe(200);
    expect(r.json.created).toHaveLength(1);
    expect(r.json.errors).toHaveLength(1);
    expect(r.json.errors[0].index).toBe(1);
    expect(r.json.errors[0].error).toBe("INVALID_LINK_ID");
    expect(Object.keys(r.json.errors[0].fields).sort()).toEqual(["slug", "url"]);
  });
});
