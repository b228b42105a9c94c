import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { restOperations } from "../../http/openapi";
import { createTestServer, http, type TestUser } from "../harness";
import {
  CONTENT_TYPES,
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
 * Fuzzing the internal paths (sign-in, tokens, sessions, account, admin review):
 * they are not in /openapi.json, so they are taken from the router's REST operations marked
 * internal. Same properties as the public API.
 */
const RUNS = Number(process.env.FUZZ_RUNS) || 100;

const t = await createTestServer();
const internal = restOperations().filter((o) => o.meta.internal);

/** Every member any internal body has, so generated bodies reach the real checks. */
const bodySchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    email: { type: "string", format: "email", maxLength: 200 },
    code: { type: "string", pattern: "^\\d{6}$" },
    name: { type: "string", maxLength: 100 },
    avatar_url: { type: "string", format: "uri" },
    status: { type: "string", enum: ["open", "dismissed", "link_deleted"] },
  },
};

type Signed = TestUser & { session: string; other: string };
let me: Signed;
async function signIn(): Promise<Signed> {
  const u = await t.user({ isAdmin: true });
  const s = await t.app.lucia.createSession(u.id, { createdAt: Date.now() });
  const s2 = await t.app.lucia.createSession(u.id, { createdAt: Date.now() });
  return { ...u, session: s.id, other: s2.id };
}
me = await signIn();
const link = (await http(`${t.api}/links`, { method: "POST", headers: me.auth, json: { url: "https://example.com/r" } })).json;
await http(`${t.api}/reports`, { method: "POST", json: { url: link.short_url, reason: "spam" } });
const reportIds = (await t.app.db.execute(`select id from abuse_reports` as never)) as unknown as { rows?: { id: string }[] } & { id: string }[];
const tokenRow = (await t.app.db.execute(`select id from api_tokens` as never)) as unknown as { rows?: { id: string }[] } & { id: string }[];
const validIds = [...(reportIds.rows ?? reportIds), ...(tokenRow.rows ?? tokenRow)].map((r) => r.id).concat(me.other);

afterAll(async () => {
  console.log(`fuzz internal: ${tally.requests} requests (seed ${FUZZ_SEED})`);
  await t.close();
});

const credential = fc.constantFrom("session", "session", "session", "session+origin", "session+evil", "token", "none", "junkcookie", "brokencookie");
function headersFor(c: string): Record<string, string> {
  switch (c) {
    case "session":
      return { cookie: `app_session=${me.session}` };
    case "session+origin":
      return { cookie: `app_session=${me.session}`, origin: t.appUrl };
    case "session+evil":
      return { cookie: `app_session=${me.session}`, origin: "https://evil.example" };
    case "token":
      return me.auth;
    case "junkcookie":
      return { cookie: "app_session=" + "z".repeat(40) };
    case "brokencookie":
      return { cookie: 'app_session="%zz; =; ;;app_session' };
    default:
      return {};
  }
}

describe("fuzz: the internal paths (sign-in, tokens, sessions, account, admin review)", () => {
  it("the router has the internal operations", () => {
    expect(internal.map((o) => `${o.method} ${o.path}`)).toEqual(
      expect.arrayContaining(["POST /auth/start", "POST /auth/verify", "POST /account/tokens", "DELETE /account/sessions/{id}"]),
    );
  });

  for (const op of internal) {
    const pathParams = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    const hasBody = op.method !== "GET";
    it(`${op.method} ${op.path}: bad input never gives a 5xx, errors are {error, fields}, rejections store nothing`, async () => {
      const request = fc.record({
        ids: fc.tuple(...pathParams.map(() => pathSegment(validIds)), fc.constant("")),
        query: queryString(["status"]),
        body: hasBody ? rawBody(objectFor(bodySchema as never, { redirect: t.redirect })) : fc.constant(undefined),
        contentType: fc.constantFrom(...CONTENT_TYPES),
        credential,
        ua: fc.option(headerValue, { nil: undefined }),
      });
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          // Logout and account deletion end the session the next runs use: sign in again.
          const { session } = await t.app.lucia.validateSession(me.session);
          if (!session) me = await signIn();
          let url = op.path;
          pathParams.forEach((name, i) => (url = url.replace(`{${name}}`, r.ids[i])));
          const headers: Record<string, string> = headersFor(r.credential);
          if (r.contentType && r.body !== undefined) headers["content-type"] = r.contentType;
          if (r.ua !== undefined) headers["user-agent"] = r.ua;
          const before = await rowCounts(t.app.db);
          const what = `${op.method} ${url}${r.query} [${r.credential}, ${r.contentType}] body=${typeof r.body === "string" ? r.body.slice(0, 200) : r.body}`;
          const res = await http(`${t.api}${url}${r.query}`, { method: op.method, headers, body: r.body as BodyInit | undefined });
          tally.requests++;
          expectApiAnswer(res, op.method, what);
          expectNoLeak(res.text, what);
          if (res.status >= 400) expect(await rowCounts(t.app.db), `${what}: rejected (${res.status}) but stored something`).toBe(before);
        }),
        fuzzParams(RUNS),
      );
    });
  }
});
