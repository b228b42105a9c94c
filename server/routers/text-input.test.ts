import { randomInt } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { toPublicError } from "../domain/errors";
import { isText } from "../lib/input";
import { createTestServer, http, type TestServer, type TestUser } from "../test/harness";
import { appRouter } from "./index";
import { signIn, uniqueEmail } from "./auth/sign-in.test-helper";

// Every text input goes through one helper (lib/input `text`): NUL is refused (PostgreSQL cannot
// store it in text) and lengths count code points.

const NUL = "\u0000";
const EMOJI = "\u{1F600}"; // one code point, two UTF-16 units
const future = () => Date.now() + 3_600_000;
const addr = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

let t: TestServer;
let alice: TestUser;
let session: Record<string, string>;
let linkId: string;
let treeId: string;
let itemId: string;
let seq = 0;
const unique = (p: string) => `${p}-${Date.now().toString(36)}-${seq++}`;

type Auth = "token" | "session" | "none";
/** Paths name the records made in beforeAll as {link}, {tree} and {item}. */
const fill = (path: string) => path.replace("{link}", linkId).replace("{tree}", treeId).replace("{item}", itemId);
const call = (method: string, path: string, json: unknown, auth: Auth = "token") =>
  http(`${t.api}${fill(path)}`, {
    method,
    json: method === "GET" || method === "DELETE" ? undefined : json,
    headers: { "x-forwarded-for": addr(), ...(auth === "token" ? alice.auth : auth === "session" ? session : {}) },
  });

beforeAll(async () => {
  t = await createTestServer({ TRUST_PROXY: "true" });
  alice = await t.user({ plan: "pro" });
  session = (await signIn(t, uniqueEmail("text"), { "x-forwarded-for": addr() })).headers;
  linkId = (await call("POST", "/links", { url: "https://example.com/", expires_at: future() })).json.id;
  treeId = (await call("POST", "/linktrees", { slug: unique("text"), title: "T" })).json.id;
  itemId = (await call("POST", `/linktrees/${treeId}/items`, { title: "I", url: "https://example.com/" })).json.id;
});
afterAll(() => t?.close());

describe("a NUL character in a text field", () => {
  // [method, path, body, field named in `fields`, expected code, auth]
  const cases: [string, string, Record<string, unknown>, string, string, Auth?][] = [
    ["POST", "/links", { url: `https://example.com/${NUL}` }, "url", "VALIDATION_FAILED"],
    ["POST", "/links", { url: "https://example.com/", slug: `a${NUL}` }, "slug", "INVALID_LINK_ID"],
    ["POST", "/links", { url: "https://example.com/", tags: [`a${NUL}`] }, "tags", "INVALID_TAG"],
    [
      "POST",
      "/links",
      { url: "https://example.com/", expires_at: future(), expiration_url: `https://example.com/${NUL}` },
      "expiration_url",
      "VALIDATION_FAILED",
    ],
    ["POST", "/links", { url: "https://example.com/", targeting: { ios: `https://example.com/${NUL}` } }, "targeting", "VALIDATION_FAILED"],
    ["POST", "/links", { url: "https://example.com/", targeting: { android: `https://example.com/${NUL}` } }, "targeting", "VALIDATION_FAILED"],
    ["POST", "/links", { url: "https://example.com/", targeting: { geo: { DE: `https://example.com/${NUL}` } } }, "targeting", "VALIDATION_FAILED"],
    ["POST", "/links", { url: "https://example.com/", targeting: { geo: { [`D${NUL}`]: "https://example.com/" } } }, "targeting", "VALIDATION_FAILED"],
    ["POST", "/links", { url: "https://example.com/", password: `pass${NUL}word` }, "password", "VALIDATION_FAILED"],
    ["POST", "/links", { url: "https://example.com/", og_title: `a${NUL}` }, "og_title", "VALIDATION_FAILED"],
    ["POST", "/links", { url: "https://example.com/", og_description: `a${NUL}` }, "og_description", "VALIDATION_FAILED"],
    ["POST", "/links", { url: "https://example.com/", og_image: `https://example.com/${NUL}.png` }, "og_image", "VALIDATION_FAILED"],
    ["PATCH", "/links/{link}", { url: `https://example.com/${NUL}` }, "url", "VALIDATION_FAILED"],
    ["PATCH", "/links/{link}", { expiration_url: `https://example.com/${NUL}` }, "expiration_url", "VALIDATION_FAILED"],
    ["PATCH", "/links/{link}", { targeting: { ios: `https://example.com/${NUL}` } }, "targeting", "VALIDATION_FAILED"],
    ["PATCH", "/links/{link}", { password: `pass${NUL}word` }, "password", "VALIDATION_FAILED"],
    ["PATCH", "/links/{link}", { og_title: `a${NUL}` }, "og_title", "VALIDATION_FAILED"],
    ["PATCH", "/links/{link}", { og_description: `a${NUL}` }, "og_description", "VALIDATION_FAILED"],
    ["PATCH", "/links/{link}", { og_image: `https://example.com/${NUL}` }, "og_image", "VALIDATION_FAILED"],
    ["POST", "/linktrees", { slug: unique("nul"), title: `a${NUL}` }, "title", "VALIDATION_FAILED"],
    ["POST", "/linktrees", { slug: unique("nul"), title: "T", bio: `a${NUL}` }, "bio", "VALIDATION_FAILED"],
    ["POST", "/linktrees", { slug: unique("nul"), title: "T", avatar_url: `https://example.com/${NUL}` }, "avatar_url", "VALIDATION_FAILED"],
    ["PATCH", "/linktrees/{tree}", { title: `a${NUL}` }, "title", "VALIDATION_FAILED"],
    ["PATCH", "/linktrees/{tree}", { bio: `a${NUL}` }, "bio", "VALIDATION_FAILED"],
    ["PATCH", "/linktrees/{tree}", { avatar_url: `https://example.com/${NUL}` }, "avatar_url", "VALIDATION_FAILED"],
    ["POST", "/linktrees/{tree}/items", { title: `a${NUL}`, url: "https://example.com/" }, "title", "VALIDATION_FAILED"],
    ["POST", "/linktrees/{tree}/items", { title: "I", url: `https://example.com/${NUL}` }, "url", "VALIDATION_FAILED"],
    ["PATCH", "/linktrees/{tree}/items/{item}", { title: `a${NUL}` }, "title", "VALIDATION_FAILED"],
    ["PATCH", "/linktrees/{tree}/items/{item}", { url: `https://example.com/${NUL}` }, "url", "VALIDATION_FAILED"],
    ["POST", "/reports", { url: `abcd${NUL}`, reason: "spam" }, "url", "NOT_A_SHORT_LINK", "none"],
    ["POST", "/reports", { url: "abcd", reason: "spam", detail: `a${NUL}` }, "detail", "VALIDATION_FAILED", "none"],
    ["POST", "/reports", { url: "abcd", reason: "spam", email: `a${NUL}@example.com` }, "email", "VALIDATION_FAILED", "none"],
    ["POST", "/account/tokens", { name: `ci${NUL}` }, "name", "VALIDATION_FAILED", "session"],
    ["PATCH", "/account", { name: `A${NUL}` }, "name", "VALIDATION_FAILED", "session"],
    ["POST", "/account/email", { email: `a${NUL}@example.com` }, "email", "VALIDATION_FAILED", "session"],
    ["POST", "/auth/start", { email: `a${NUL}@example.com` }, "email", "VALIDATION_FAILED", "none"],
    ["POST", "/auth/verify", { email: "a@example.com", code: `12345${NUL}` }, "code", "INVALID_CODE", "none"],
  ];

  it.each(cases.map((c) => [`${c[0]} ${c[1]} ${c[3]}`, ...c] as const))(
    "%s answers 400 naming the field",
    async (_name, method, path, body, field, code, auth) => {
      const r = await call(method, path, body, auth);
      expect(r.status, r.text).toBe(400);
      expect(r.json.error).toBe(code);
      expect(Object.keys(r.json.fields)).toContain(field);
    },
  );

  // REST leaves %00 in a path as it is (no such id: 404); the typed client sends ids as JSON text.
  // (errors.ts gives every field named `id` the code INVALID_LINK_ID.)
  const refused = async (call: Promise<unknown>, field: string, error = "VALIDATION_FAILED") => {
    const err = await call.then(
      () => null,
      (e: unknown) => e,
    );
    expect(toPublicError(err)).toMatchObject({ status: 400, body: { error, fields: { [field]: expect.any(Array) } } });
  };
  it("in the dashboard's search or a record id sent to the typed client answers 400 naming the field", async () => {
    await refused(t.caller(alice.auth).link.dashboardList({ q: `a${NUL}` }), "q");
    await refused(t.caller(alice.auth).linktree.deleteItem({ id: treeId, itemId: NUL }), "itemId");
    await refused(t.caller(alice.auth).linktree.get({ id: NUL }), "id", "INVALID_LINK_ID");
    await refused(t.caller(session).token.revoke({ id: NUL }), "id", "INVALID_LINK_ID");
    await refused(t.caller(session).session.revoke({ id: NUL }), "id", "INVALID_LINK_ID");
  });

  it("is refused by every string input of every procedure (each goes through the text helper)", () => {
    const plain: string[] = [];
    const walk = (s: z.ZodTypeAny | undefined, where: string): void => {
      if (!s) return;
      if (s instanceof z.ZodString) {
        if (!isText(s)) plain.push(where);
      } else if (s instanceof z.ZodObject) for (const [k, v] of Object.entries(s.shape as z.ZodRawShape)) walk(v, `${where}.${k}`);
      else if (s instanceof z.ZodOptional || s instanceof z.ZodNullable) walk(s.unwrap(), where);
      else if (s instanceof z.ZodDefault) walk(s._def.innerType, where);
      else if (s instanceof z.ZodEffects) walk(s._def.schema, where);
      else if (s instanceof z.ZodArray) walk(s.element, `${where}[]`);
      else if (s instanceof z.ZodRecord) {
        walk(s.keySchema, `${where}{key}`);
        walk(s.valueSchema, `${where}{}`);
      } else if (s instanceof z.ZodUnion) s.options.forEach((o: z.ZodTypeAny, i: number) => walk(o, `${where}|${i}`));
      else if (s instanceof z.ZodPipeline) {
        walk(s._def.in, where);
        walk(s._def.out, where);
      }
    };
    const procedures = (appRouter._def as unknown as { procedures: Record<string, { _def: { inputs: z.ZodTypeAny[] } }> }).procedures;
    for (const [name, p] of Object.entries(procedures)) p._def.inputs.forEach((input) => walk(input, name));
    expect(plain).toEqual([]);
  });
});

describe("a lone surrogate in a text field", () => {
  // JSON.stringify writes a lone surrogate as its `\ud800` escape: the body is the JSON text a client sends.
  const HIGH = "\ud800";
  const LOW = "\udc00";
  const cases: [string, string, Record<string, unknown>, string, string, Auth?][] = [
    ["POST", "/links", { url: "https://example.com/", og_title: `x${HIGH}y` }, "og_title", "VALIDATION_FAILED"],
    ["POST", "/links", { url: "https://example.com/", og_description: `x${LOW}` }, "og_description", "VALIDATION_FAILED"],
    ["POST", "/links", { url: `https://example.com/${HIGH}` }, "url", "VALIDATION_FAILED"],
    ["POST", "/links", { url: "https://example.com/", tags: [`a${HIGH}`] }, "tags", "INVALID_TAG"],
    ["POST", "/links", { url: "https://example.com/", password: `pass${LOW}${HIGH}word` }, "password", "VALIDATION_FAILED"],
    ["PATCH", "/links/{link}", { og_title: `${HIGH}` }, "og_title", "VALIDATION_FAILED"],
    ["POST", "/linktrees", { slug: unique("sur"), title: `a${HIGH}` }, "title", "VALIDATION_FAILED"],
    ["PATCH", "/linktrees/{tree}", { bio: `a${LOW}b` }, "bio", "VALIDATION_FAILED"],
    ["POST", "/linktrees/{tree}/items", { title: `a${HIGH}`, url: "https://example.com/" }, "title", "VALIDATION_FAILED"],
    ["POST", "/reports", { url: "abcd", reason: "spam", detail: `a${HIGH}` }, "detail", "VALIDATION_FAILED", "none"],
    ["PATCH", "/account", { name: `A${HIGH}` }, "name", "VALIDATION_FAILED", "session"],
  ];

  it.each(cases.map((c) => [`${c[0]} ${c[1]} ${c[3]}`, ...c] as const))(
    "%s answers 400 naming the member, nothing stored",
    async (_name, method, path, body, field, code, auth) => {
      const before = (await call("GET", "/links/{link}", undefined)).text;
      const r = await call(method, path, body, auth);
      expect(r.status, r.text).toBe(400);
      expect(r.json.error).toBe(code);
      expect(Object.keys(r.json.fields)).toContain(field);
      expect((await call("GET", "/links/{link}", undefined)).text).toBe(before);
    },
  );

  it("a whole surrogate pair (an emoji) is stored as sent", async () => {
    const r = await call("POST", "/links", { url: "https://example.com/", og_title: `x${EMOJI}y` });
    expect(r.status, r.text).toBe(201);
    expect(r.json.og_title).toBe(`x${EMOJI}y`);
  });
});

describe("length limits count characters (code points), not UTF-16 units", () => {
  const emoji = (n: number) => EMOJI.repeat(n);

  // [what, method, path, body, expected status, field named when refused, auth]
  const cases: [string, string, string, () => Record<string, unknown>, number, string?, Auth?][] = [
    ["og_title of 120 emoji", "POST", "/links", () => ({ url: "https://example.com/", og_title: emoji(120) }), 201],
    ["og_title of 121 emoji", "POST", "/links", () => ({ url: "https://example.com/", og_title: emoji(121) }), 400, "og_title"],
    ["og_description of 240 emoji", "POST", "/links", () => ({ url: "https://example.com/", og_description: emoji(240) }), 201],
    ["password of 2 emoji", "POST", "/links", () => ({ url: "https://example.com/", password: emoji(2) }), 400, "password"],
    ["password of 4 emoji", "POST", "/links", () => ({ url: "https://example.com/", password: emoji(4) }), 201],
    ["password of 200 emoji", "PATCH", "/links/{link}", () => ({ password: emoji(200) }), 200],
    // A URL's limit holds for its stored, percent-encoded form: an emoji is 12 characters there.
    ["url of 339 emoji (4,088 characters encoded)", "POST", "/links", () => ({ url: `https://example.com/${emoji(339)}` }), 201],
    ["url of 340 emoji (4,100 characters encoded)", "POST", "/links", () => ({ url: `https://example.com/${emoji(340)}` }), 400, "url"],
    ["linktree title of 100 emoji and bio of 300", "POST", "/linktrees", () => ({ slug: unique("len"), title: emoji(100), bio: emoji(300) }), 201],
    ["linktree title of 101 emoji", "PATCH", "/linktrees/{tree}", () => ({ title: emoji(101) }), 400, "title"],
    ["item title of 100 emoji", "POST", "/linktrees/{tree}/items", () => ({ title: emoji(100), url: "https://example.com/" }), 201],
    ["report detail of 1000 emoji", "POST", "/reports", () => ({ url: "abcd", reason: "spam", detail: emoji(1000) }), 200, undefined, "none"],
    ["report detail of 1001 emoji", "POST", "/reports", () => ({ url: "abcd", reason: "spam", detail: emoji(1001) }), 400, "detail", "none"],
    ["account name of 100 emoji", "PATCH", "/account", () => ({ name: emoji(100) }), 200, undefined, "session"],
    ["token name of 100 emoji", "POST", "/account/tokens", () => ({ name: emoji(100) }), 201, undefined, "session"],
  ];

  it.each(cases)("%s", async (_what, method, path, body, status, field, auth) => {
    const r = await call(method, path, body(), auth);
    expect(r.status, r.text).toBe(status);
    if (field) expect(Object.keys(r.json.fields)).toEqual([field]);
  });

  it("stores the 120-emoji og_title as sent", async () => {
    const r = await call("POST", "/links", { url: "https://example.com/", og_title: emoji(120) });
    expect(r.json.og_title).toBe(emoji(120));
  });
});
