import net from "node:net";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { createTestServer, http } from "../harness";
import { expectNoLeak, fuzzParams, FUZZ_SEED, headerValue, nastyString, tally } from "./fuzz-kit";

/**
 * Fuzzing the redirect host: GET/HEAD/POST /{slug} with generated slugs, broken
 * percent-encoding, huge/unicode/control characters, hostile headers (edge headers trusted,
 * EDGE_HEADERS=cloudfront, so their parsing is fuzzed too) and form bodies of every type.
 * Never a 5xx, never a stack; every redirect goes to an absolute http(s) URL off this host.
 */
const RUNS = Number(process.env.FUZZ_RUNS) || 300;

const t = await createTestServer({ EDGE_HEADERS: "cloudfront" });
const owner = await t.user({ plan: "pro" });
const make = async (body: Record<string, unknown>) =>
  (await http(`${t.api}/links`, { method: "POST", headers: owner.auth, json: { url: "https://example.com/dest", ...body } })).json;
const fixtures = [
  await make({}),
  await make({ slug: "pw-link", password: "s3cret-pass" }),
  await make({ og_title: "<script>alert(1)</script>", og_description: '"><img src=x onerror=alert(1)>' }),
  await make({
    targeting: { ios: "https://example.com/ios", android: "https://example.com/android", geo: { BR: "https://example.com/br", US: "https://example.com/us" } },
  }),
  await make({ expires_at: Date.now() + 60_000, expiration_url: "https://example.com/expired" }),
];
const slugs = fixtures.map((l) => l?.slug).filter((s): s is string => typeof s === "string");
const ids = fixtures.map((l) => l?.id).filter((s): s is string => typeof s === "string");

afterAll(async () => {
  console.log(`fuzz redirect: ${tally.requests} requests (seed ${FUZZ_SEED})`);
  await t.close();
});

const USER_AGENTS = [
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1",
  "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36",
  "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
  "Twitterbot/1.0",
  "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
  "curl/8.0",
  "",
];

const slugPath = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(...slugs).chain((s) => fc.constantFrom(s, s.toUpperCase(), `${s}/`, `${s}?x=1`, `${s}#frag`, `${s}%20`, `${s}/extra`)),
  },
  { weight: 2, arbitrary: fc.stringMatching(/^[0-9A-Za-z-]{1,52}$/) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "",
      "%",
      "%zz",
      "%E0%A4%A",
      "%C0%AF",
      "a%00b",
      "%2e%2e/%2e%2e/etc/passwd",
      "__proto__",
      "constructor",
      "_",
      "_/",
      "_/health",
      "_/og/",
      `_/og/${ids[0]}.png`,
      `_/og/${ids[2]}.png`,
      "_/og/zzzzzzzz.png",
      "_/og/../../x.png",
      "_/metrics",
      "a".repeat(5000),
      "/double",
      "é",
      "%F0%9F%99%82",
    ),
  },
  { weight: 2, arbitrary: nastyString.map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, ""))) },
);

const cloudfront = fc.dictionary(
  fc.constantFrom(
    "cloudfront-viewer-country",
    "cloudfront-viewer-country-region",
    "cloudfront-viewer-country-region-name",
    "cloudfront-viewer-time-zone",
    "cloudfront-viewer-latitude",
    "cloudfront-viewer-longitude",
    "cloudfront-viewer-city",
    "cloudfront-is-mobile-viewer",
    "cloudfront-is-tablet-viewer",
    "cloudfront-is-ios-viewer",
    "cloudfront-is-android-viewer",
    "x-forwarded-for",
    "referer",
    "accept-language",
    "cookie",
  ),
  fc.oneof(fc.constantFrom("BR", "US", "us", "ZZ", "true", "false", "-91.5", "1e400", "NaN", "", "America/Sao_Paulo", "1.2.3.4, 10.0.0.1"), headerValue),
  { maxKeys: 5 },
);

const formBody = fc.oneof(
  fc.constantFrom(
    "password=s3cret-pass",
    "password=wrong",
    "password=",
    "password[]=a&password[]=b",
    "password=%zz",
    "password=" + "x".repeat(10_000),
    "",
    "a=1&".repeat(100),
  ),
  headerValue.map((s) => `password=${encodeURIComponent(s)}`),
  fc.constant(JSON.stringify({ password: "s3cret-pass" })),
  fc.uint8Array({ maxLength: 64 }),
);

function checkRedirectAnswer(res: { status: number; headers: Headers; text: string }, what: string) {
  // A share-card image whose render is still under way after the wait bound is the one 5xx allowed:
  // 503 with Retry-After (a busy machine starves the render thread).
  const busyImage = /^\w+ \/_\/og\//.test(what) && res.status === 503 && Number(res.headers.get("retry-after")) > 0;
  if (!busyImage) expect(res.status, `${what} → ${res.status} ${res.text.slice(0, 200)}`).toBeLessThan(500);
  expectNoLeak(res.text, what);
  if (res.status === 301 || res.status === 302) {
    const location = res.headers.get("location") ?? "";
    const target = new URL(location); // throws when not absolute
    expect(["http:", "https:"], `${what}: Location ${location}`).toContain(target.protocol);
    expect(target.host, `${what}: redirect loop to ${location}`).not.toBe(new URL(t.redirect).host);
  }
}

describe("fuzz: the redirect host", () => {
  it("the fixture links exist", () => expect(slugs).toHaveLength(fixtures.length));

  it("GET/HEAD/POST /{slug}: no 5xx, no stack, every redirect absolute and off this host", async () => {
    const request = fc.record({
      method: fc.constantFrom("GET", "GET", "HEAD", "POST"),
      path: slugPath,
      ua: fc.oneof(fc.constantFrom(...USER_AGENTS), headerValue),
      headers: cloudfront,
      body: formBody,
      contentType: fc.constantFrom(
        "application/x-www-form-urlencoded",
        "application/x-www-form-urlencoded; charset=iso-8859-1",
        "application/json",
        "multipart/form-data; boundary=z",
        "text/plain",
        "application/x-www-form-urlencoded; charset=utf-7",
        undefined,
      ),
    });
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const headers: Record<string, string> = { ...r.headers, "user-agent": r.ua };
        if (r.method === "POST" && r.contentType) headers["content-type"] = r.contentType;
        const what = `${r.method} /${r.path.slice(0, 120)} ua=${r.ua.slice(0, 40)} ${JSON.stringify(r.headers).slice(0, 200)}`;
        const res = await http(`${t.redirect}/${r.path}`, { method: r.method, headers, body: r.method === "POST" ? (r.body as BodyInit) : undefined });
        tally.requests++;
        checkRedirectAnswer(res, what);
      }),
      fuzzParams(RUNS * 2),
    );
  }, 180_000); // share-card renders wait their bound each on a machine busy with other tests

  it("raw request targets with control characters and broken escapes never get a 5xx", async () => {
    const target = fc.oneof(
      fc.uint8Array({ minLength: 1, maxLength: 40 }).map(
        (b) =>
          "/" +
          Buffer.from(b)
            .toString("latin1")
            .replace(/[ \r\n]/g, ""),
      ),
      fc.constantFrom("/%", "/%zz", "/\u0001", "/a\u007fb", "/\u00ff", "*", "http://evil.example/x", "//evil.example", "/?%", "/" + "%41".repeat(3000)),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("GET", "HEAD", "POST"), target, async (method, path) => {
        const status = await rawRequest(
          new URL(t.redirect).port,
          `${method} ${path} HTTP/1.1\r\nHost: ${new URL(t.redirect).host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
        );
        tally.requests++;
        // 0 = the parser closed the connection without an answer, which is not a failure of ours.
        expect(status, `${method} ${JSON.stringify(path)}`).toBeLessThan(500);
      }),
      fuzzParams(RUNS),
    );
  });
});

/** Sends raw bytes, returns the answer's status (0 when the connection closed without one). */
function rawRequest(port: string, request: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), "127.0.0.1");
    let data = "";
    socket.setTimeout(5000, () => socket.destroy(new Error("raw request timed out")));
    socket.on("data", (d) => (data += d.toString("latin1")));
    socket.on("error", reject);
    socket.on("close", () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0)));
    socket.end(Buffer.from(request, "latin1"));
  });
}
