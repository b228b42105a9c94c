import fc from "fast-check";
import { sql } from "drizzle-orm";
import { expect } from "vitest";
import type { Db } from "../../../db/client";

/**
 * Shared pieces of the property-based fuzz tests: generators for hostile input, the answer
 * checks (never a 5xx, exact error shape), and row counts to prove a rejection stored nothing.
 *
 * Runs are deterministic (fixed seed) so CI is reproducible; FUZZ_SEED=<n> replays another seed,
 * FUZZ_SEED=random picks a fresh one. fast-check prints seed and path on failure.
 */
const envSeed = process.env.FUZZ_SEED;
export const FUZZ_SEED = envSeed === "random" ? Date.now() ^ (Math.random() * 0x7fffffff) : Number(envSeed) || 0x5eed;
export const fuzzParams = (numRuns: number): fc.Parameters<unknown> => ({ seed: FUZZ_SEED, numRuns, endOnFailure: true });

/** Strings that have broken parsers, decoders, loggers or templates somewhere. */
export const NASTY = [
  "",
  " ",
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "%",
  "%zz",
  "%E0%A4%A",
  "%C0%AF",
  "%00",
  "%2e%2e%2f",
  "../../etc/passwd",
  "\u0000",
  "\u0007\u001b[31m",
  "\r\nX-Injected: 1",
  "\u202e\u200b\ufeff",
  "\ud800",
  "𝕏🙂👩‍👩‍👧",
  "null",
  "undefined",
  "NaN",
  "-0",
  "1e309",
  "9007199254740993",
  "[]",
  "{}",
  "<script>alert(1)</script>",
  '"><img src=x onerror=alert(1)>',
  "' OR 1=1 --",
  "javascript:alert(1)",
  "data:text/html,<script>alert(1)</script>",
  "//evil.example",
  "/relative",
  "http://",
  "https://example.com/" + "a".repeat(4100),
  "x".repeat(5000),
];

export const nastyString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 20 }) },
  { weight: 1, arbitrary: fc.stringMatching(/^[0-9a-z-]{1,60}$/) },
  { weight: 1, arbitrary: fc.webUrl({ withQueryParameters: true, withFragments: true }) },
);

export const nastyNumber = fc.oneof(
  fc.integer(),
  fc.constantFrom(0, -1, 1, 2 ** 31, 2 ** 53, -(2 ** 53), 1e308, -0, 0.5, Date.now() + 86_400_000, Date.now() - 1000),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

const KEY_POOL = ["__proto__", "constructor", "prototype", "url", "slug", "id", "geo", "ios", "android", "email", "code", "name", "x", ""];

/** Own-property assignment, so `__proto__` becomes a real JSON member instead of a prototype. */
export function objectOf(entries: [string, unknown][]): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const [k, v] of entries) Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  return o;
}

/** Any JSON value, nested, with hostile keys and strings. */
export const nastyValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    nastyNumber,
    nastyString,
    fc.array(tie("value"), { maxLength: 4 }),
    fc.array(fc.tuple(fc.oneof(fc.constantFrom(...KEY_POOL), fc.string({ maxLength: 8 })), tie("value")), { maxLength: 4 }).map(objectOf),
  ),
})).value;

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  enum?: unknown[];
  maxLength?: number;
  minLength?: number;
  pattern?: string;
  format?: string;
  nullable?: boolean;
  maximum?: number;
  minimum?: number;
};

/** URL-ish values, including every form a stored URL must refuse (lib/urls `httpUrl`). */
export function urlValues(redirectBase: string): fc.Arbitrary<string> {
  const host = new URL(redirectBase).host;
  return fc.oneof(
    fc.webUrl(),
    fc.constantFrom(
      "https://example.com/ok",
      "javascript:alert(1)",
      "JaVaScRiPt:alert(1)",
      " javascript:alert(1)",
      "data:text/html,x",
      "vbscript:x",
      "file:///etc/passwd",
      "ftp://example.com/",
      "//evil.example/x",
      "/relative/path",
      "relative",
      "http://",
      "http://[::1",
      `${redirectBase}/abcd`,
      `http://${host.toUpperCase()}/x`,
      `https://${host}/`,
      "https://example.com/" + "a".repeat(4100),
    ),
  );
}

/** A value for one schema node: usually plausible (to get past the first checks), sometimes hostile. */
export function valueFor(schema: Schema | undefined, ctx: { redirect: string; name?: string }, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 4) return nastyValue;
  const alts = schema.anyOf ?? schema.oneOf;
  if (alts?.length) return fc.oneof(...alts.map((s) => valueFor(s, ctx, depth + 1)));
  if (schema.allOf?.length) return valueFor(schema.allOf[0], ctx, depth + 1);
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  const plausible: fc.Arbitrary<unknown>[] = [];
  if (schema.enum) plausible.push(fc.constantFrom(...schema.enum));
  for (const type of types) {
    switch (type) {
      case "string": {
        if (schema.format === "uri" || /url|image|ios|android/.test(ctx.name ?? "")) plausible.push(urlValues(ctx.redirect));
        else if (schema.pattern) plausible.push(fc.stringMatching(new RegExp(schema.pattern)));
        if (schema.format === "email" || ctx.name === "email") plausible.push(fc.emailAddress());
        const max = schema.maxLength ?? 60;
        plausible.push(fc.string({ minLength: Math.max(0, (schema.minLength ?? 0) - 1), maxLength: Math.min(max + 2, 400) }));
        break;
      }
      case "integer":
      case "number":
        plausible.push(nastyNumber, fc.constantFrom(Date.now() + 86_400_000, 0, 1, 2));
        break;
      case "boolean":
        plausible.push(fc.boolean());
        break;
      case "null":
        plausible.push(fc.constant(null));
        break;
      case "array":
        plausible.push(fc.array(valueFor(schema.items, ctx, depth + 1), { maxLength: 12 }));
        break;
      case "object":
        plausible.push(objectFor(schema, ctx, depth + 1));
        break;
    }
  }
  if (schema.nullable) plausible.push(fc.constant(null));
  if (!plausible.length) return nastyValue;
  return fc.oneof({ weight: 4, arbitrary: fc.oneof(...plausible) }, { weight: 1, arbitrary: nastyValue });
}

/** An object for an object schema: a random subset of its members, plus stray and hostile keys. */
export function objectFor(schema: Schema, ctx: { redirect: string }, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  const props = Object.entries(schema.properties ?? {});
  const known = props.map(([name, s]) =>
    fc.option(
      valueFor(s, { ...ctx, name }, depth).map((v) => [name, v] as [string, unknown]),
      { nil: undefined, freq: 2 },
    ),
  );
  const extraValue = typeof schema.additionalProperties === "object" ? valueFor(schema.additionalProperties, ctx, depth) : nastyValue;
  const extraKey = fc.oneof(fc.constantFrom("US", "BR", "gb", "ZZ", "__proto__", "constructor"), fc.string({ maxLength: 6 }));
  const extras = fc.array(fc.tuple(extraKey, extraValue), { maxLength: schema.additionalProperties ? 6 : 1 });
  return fc.tuple(fc.tuple(...known), extras).map(([k, e]) => objectOf([...k.filter((x): x is [string, unknown] => !!x), ...e]));
}

export const CONTENT_TYPES = [
  undefined,
  "application/json",
  "application/json; charset=utf-8",
  "application/json; charset=utf-16",
  "application/json; charset=latin1",
  'application/json; charset="UTF-8"',
  "APPLICATION/JSON",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/xml",
  "application/merge-patch+json",
  "*/*",
  "garbage",
];

/** Content-Encoding: mostly none, else ones the API decodes (over bodies that are not encoded) or does not know. */
export const contentEncoding = fc.oneof(
  { weight: 6, arbitrary: fc.constant(undefined) },
  { weight: 2, arbitrary: fc.constantFrom("gzip", "deflate", "identity", "br", "foo", "gzip, br", "GZIP", "") },
);

/** A raw body: the JSON of a generated object most of the time, else something that is not one. */
export function rawBody(obj: fc.Arbitrary<unknown>): fc.Arbitrary<string | Uint8Array | undefined> {
  return fc.oneof(
    { weight: 6, arbitrary: obj.map((o) => JSON.stringify(o)) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        "",
        " ",
        "null",
        "[]",
        "[{}]",
        "123",
        '"str"',
        "true",
        "{",
        '{"url":',
        '{"__proto__":{"polluted":true}}',
        '{"constructor":{"prototype":{"polluted":true}}}',
        "url=https%3A%2F%2Fexample.com",
        '{"url":"https://example.com","url":"javascript:alert(1)"}',
        "\u0000\u0001",
        '{"a":' + "[".repeat(5000) + "]".repeat(5000) + "}",
        JSON.stringify({ url: "https://example.com/", pad: "x".repeat(70_000) }),
      ),
    },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }) },
    { weight: 1, arbitrary: nastyValue.map((v) => JSON.stringify(v) ?? "") },
  );
}

/** A path segment: a valid id, a well-formed unknown one, or something hostile (raw or encoded). */
export function pathSegment(valid: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: valid.length ? fc.constantFrom(...valid) : fc.constant("abcdefgh") },
    { weight: 2, arbitrary: fc.stringMatching(/^[0-9a-z]{8}$/) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "%",
        "%zz",
        "%E0%A4%A",
        "%C0%AF",
        "%00",
        "%2F",
        "..",
        "%2e%2e",
        "ABCDEFGH",
        "abcdefg",
        "abcdefghi",
        "__proto__",
        "constructor",
      ),
    },
    { weight: 2, arbitrary: nastyString.map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, "")) || "x") },
  );
}

/** A query string: the declared names and stray ones, repeated keys, raw broken escapes. */
export function queryString(names: string[]): fc.Arbitrary<string> {
  const name = fc.oneof(fc.constantFrom(...(names.length ? names : ["x"]), "__proto__", "from[]", "to[gte]"), fc.string({ maxLength: 6 }));
  const value = fc.oneof(
    fc.constantFrom("0", "1", String(Date.now()), "-1", "1.5", "1e3", "abc", "", "%", "%zz", "%E0%A4%A", "9".repeat(40), "true", "null"),
    nastyString.map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, ""))),
  );
  return fc
    .array(fc.tuple(name, value), { maxLength: 4 })
    .map((pairs) => (pairs.length ? "?" + pairs.map(([k, v]) => `${encodeURIComponent(k)}=${v}`).join("&") : ""));
}

/** Header values fetch accepts (latin-1, no CR/LF/NUL): hostile strings squeezed into that. */
export const headerValue = nastyString.map((s) => s.replace(/[^\x20-\x7e\x80-\xff\t]/g, "?").slice(0, 2000));

/** Checks an API answer: never a 5xx, and errors exactly `{error}` (+ `fields` on a 400). */
export function expectApiAnswer(res: { status: number; headers: Headers; text: string; json: unknown }, method: string, what: string) {
  expect(res.status, `${what} → ${res.status} ${res.text.slice(0, 300)}`).toBeLessThan(500);
  // /trpc speaks the tRPC protocol to @trpc/client (its own error envelope), not the REST shapes.
  if (res.status < 400 || method === "HEAD" || / \/trpc\b/.test(what)) return;
  expect(res.headers.get("content-type") ?? "", `${what}: error content type`).toMatch(/^application\/json/);
  const body = res.json as Record<string, unknown> | undefined;
  expect(body && typeof body === "object" && !Array.isArray(body), `${what}: error body is an object: ${res.text.slice(0, 200)}`).toBe(true);
  const keys = Object.keys(body!).sort();
  expect(keys, `${what}: error body keys ${res.text.slice(0, 200)}`).toEqual(res.status === 400 ? ["error", "fields"] : ["error"]);
  expect(typeof body!.error, what).toBe("string");
  expect(body!.error as string, what).toMatch(/^[A-Z_]+$/);
  if (res.status === 404) expect(body!.error, what).toBe("NOT_FOUND");
  if (res.status === 400) {
    const fields = body!.fields as Record<string, unknown>;
    expect(fields && typeof fields === "object" && !Array.isArray(fields), `${what}: fields is an object`).toBe(true);
    for (const [k, v] of Object.entries(fields)) {
      expect(Array.isArray(v) && v.every((m) => typeof m === "string"), `${what}: fields.${k} is an array of strings: ${JSON.stringify(v)}`).toBe(true);
    }
  }
}

/** No stack trace, SQL or internal path in a body shown to a caller. */
export function expectNoLeak(text: string, what: string) {
  expect(text, `${what}: leaks internals`).not.toMatch(
    /\n\s+at [\w.<>]+ \(|node_modules|URIError|TypeError|ReferenceError|SELECT |INSERT INTO|syntax error at/,
  );
}

/** Rows of every table a request could write that matters here, as one comparable string. */
export async function rowCounts(db: Db): Promise<string> {
  const rows = (await db.execute(
    sql`select (select count(*) from links) as links, (select count(*) from linktrees) as linktrees, (select count(*) from linktree_items) as items, (select count(*) from abuse_reports) as reports, (select count(*) from api_tokens) as tokens`,
  )) as unknown as { rows?: Record<string, unknown>[] } & Record<string, unknown>[];
  const row = (rows.rows ?? rows)[0];
  return JSON.stringify(row, (_k, v) => (typeof v === "bigint" ? Number(v) : v));
}

/** Global tally, printed by each file (the figure the issue asks for). */
export const tally = { requests: 0 };
