import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { createTestServer, http } from "../harness";
import { restOperations } from "../../http/openapi";
import {
  CONTENT_TYPES,
  contentEncoding,
  expectApiAnswer,
  expectNoLeak,
  fuzzParams,
  FUZZ_SEED,
  headerValue,
  objectFor,
  pathSegment,
  queryString,
  rawBody,
  rowCounts,
  tally,
} from "./fuzz-kit";

/**
 * Fuzzing the public API: every operation of the live /openapi.json (iterated, so new
 * endpoints are covered without touching this file) gets generated bodies, query strings, path
 * ids, credentials and content types. No answer is a 5xx, every error is exactly `{error}` plus
 * `fields` on a 400, and a rejected request stores nothing.
 */
const RUNS = Number(process.env.FUZZ_RUNS) || 100;

const t = await createTestServer();
const doc = (await http(`${t.api}/openapi.json`)).json as {
  paths: Record<string, Record<string, { parameters?: { in: string; name: string }[]; requestBody?: { content: Record<string, { schema: never }> } }>>;
};
const owner = await t.user({ plan: "pro" });
const other = await t.user({ plan: "pro" });

// Real records, so generated path ids sometimes reach the handlers' deeper checks.
const link = (await http(`${t.api}/links`, { method: "POST", headers: owner.auth, json: { url: "https://example.com/a", og_title: "t" } })).json;
const foreign = (await http(`${t.api}/links`, { method: "POST", headers: other.auth, json: { url: "https://example.com/b" } })).json;
const tree = (await http(`${t.api}/linktrees`, { method: "POST", headers: owner.auth, json: { slug: "fuzz-tree", title: "T" } })).json;
const item = tree?.id
  ? (await http(`${t.api}/linktrees/${tree.id}/items`, { method: "POST", headers: owner.auth, json: { title: "i", url: "https://example.com/i" } })).json
  : undefined;
const validIds = [link?.id, foreign?.id, tree?.id, item?.id, item?.link_id].filter((x): x is string => typeof x === "string");

afterAll(async () => {
  console.log(`fuzz api: ${tally.requests} requests (seed ${FUZZ_SEED})`);
  await t.close();
});

const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
);

const credential = fc.constantFrom<"owner" | "other" | "none" | "junk" | "nobearer" | "empty" | "basic" | "spaces">(
  "owner",
  "owner",
  "owner",
  "other",
  "none",
  "junk",
  "nobearer",
  "empty",
  "basic",
  "spaces",
);
const authHeader = (c: string): Record<string, string> => {
  switch (c) {
    case "owner":
      return owner.auth;
    case "other":
      return other.auth;
    case "junk":
      return { authorization: "Bearer tok_" + "x".repeat(32) };
    case "nobearer":
      return { authorization: owner.token };
    case "empty":
      return { authorization: "" };
    case "basic":
      return { authorization: "Basic dXNlcjpwYXNz" };
    case "spaces":
      return { authorization: `Bearer  ${owner.token} ` };
    default:
      return {};
  }
};

describe("fuzz: every operation of /openapi.json", () => {
  it("the document lists the operations to fuzz", () => {
    expect(operations.length).toBeGreaterThan(10);
    expect(validIds.length).toBeGreaterThanOrEqual(3);
  });

  for (const { path, method, op } of operations) {
    const pathParams = (op.parameters ?? []).filter((p) => p.in === "path").map((p) => p.name);
    const queryParams = (op.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name);
    const bodySchema = op.requestBody?.content?.["application/json"]?.schema;
    const hasBody = method !== "GET" && method !== "HEAD";

    it(`${method} ${path}: bad input never gives a 5xx, errors are {error, fields}, rejections store nothing`, async () => {
      const request = fc.record({
        ids: fc.tuple(...pathParams.map(() => pathSegment(validIds)), fc.constant("")),
        query: queryString(queryParams),
        body: hasBody ? rawBody(bodySchema ? objectFor(bodySchema, { redirect: t.redirect }) : fc.constant({})) : fc.constant(undefined),
        contentType: fc.constantFrom(...CONTENT_TYPES),
        encoding: contentEncoding,
        credential,
        requestId: fc.option(headerValue, { nil: undefined }),
        accept: fc.option(headerValue, { nil: undefined }),
      });
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          let url = path;
          pathParams.forEach((name, i) => (url = url.replace(`{${name}}`, r.ids[i])));
          const headers: Record<string, string> = { ...authHeader(r.credential) };
          if (r.contentType && r.body !== undefined) headers["content-type"] = r.contentType;
          if (r.encoding !== undefined && r.body !== undefined) headers["content-encoding"] = r.encoding;
          if (r.requestId !== undefined) headers["x-request-id"] = r.requestId;
          if (r.accept !== undefined) headers.accept = r.accept;
          const before = await rowCounts(t.app.db);
          const what = `${method} ${url}${r.query} [${r.credential}, ${r.contentType}, ${r.encoding}] body=${typeof r.body === "string" ? r.body.slice(0, 200) : r.body}`;
          const res = await http(`${t.api}${url}${r.query}`, { method, headers, body: r.body as BodyInit | undefined });
          tally.requests++;
          expectApiAnswer(res, method, what);
          expectNoLeak(res.text, what);
          if (res.status >= 400) expect(await rowCounts(t.app.db), `${what}: rejected (${res.status}) but stored something`).toBe(before);
        }),
        fuzzParams(RUNS),
      );
    });
  }

  // The typed-client endpoint reads bodies too: the same hostile bodies, charsets and encodings.
  it("POST /trpc/{procedure}: bad bodies, charsets and encodings never give a 5xx, rejections store nothing", async () => {
    const procedures = restOperations().map((o) => o.procedurePath);
    const request = fc.record({
      procedure: fc.constantFrom(...procedures),
      batch: fc.boolean(),
      body: rawBody(fc.constantFrom({}, { url: "https://example.com/t" }, { slug: "t", title: "T" })),
      contentType: fc.constantFrom(...CONTENT_TYPES),
      encoding: contentEncoding,
      credential,
    });
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const headers: Record<string, string> = { ...authHeader(r.credential) };
        if (r.contentType) headers["content-type"] = r.contentType;
        if (r.encoding !== undefined) headers["content-encoding"] = r.encoding;
        const body = r.batch && typeof r.body === "string" ? `{"0":${r.body || "null"}}` : r.body;
        const url = `/trpc/${r.procedure}${r.batch ? "?batch=1" : ""}`;
        const what = `POST ${url} [${r.credential}, ${r.contentType}, ${r.encoding}] body=${typeof body === "string" ? body.slice(0, 200) : body}`;
        const before = await rowCounts(t.app.db);
        const res = await http(`${t.api}${url}`, { method: "POST", headers, body: body as BodyInit | undefined });
        tally.requests++;
        expectApiAnswer(res, "POST", what);
        expectNoLeak(res.text, what);
        if (res.status >= 400) expect(await rowCounts(t.app.db), `${what}: rejected (${res.status}) but stored something`).toBe(before);
      }),
      fuzzParams(RUNS),
    );
  });

  it("unknown paths and methods answer 404/405 with the error shape", async () => {
    const methods = fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD");
    const paths = fc.oneof(
      fc.constantFrom("/", "/link", "/links/", "/links//analytics", "/links/abcdefgh/x", "/%", "/%zz", "/__proto__", "/openapi.json/x", "/trpc", "/_/health"),
      pathSegment(validIds).map((s) => `/${s}/${s}`),
    );
    await fc.assert(
      fc.asyncProperty(methods, paths, async (method, p) => {
        const res = await http(`${t.api}${p}`, { method, headers: owner.auth });
        tally.requests++;
        expectApiAnswer(res, method, `${method} ${p}`);
        expectNoLeak(res.text, `${method} ${p}`);
      }),
      fuzzParams(RUNS),
    );
  });
});
