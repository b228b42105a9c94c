import nodeHttp from "node:http";
import net from "node:net";
import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { openDatabase, type Database } from "../../db/client";
import { abuseReports, links } from "../../db/schema";
import { parseConfig } from "../config";
import { linkCacheKey } from "../core/lookup";
import { createServices, type AppServices } from "../core/services";
import { startServers, type RunningServers } from "../http/server";
import { tempDataDir } from "../../db/test-db";
import { startDnsServer, type TestDnsServer } from "../routers/domains/dns-server.test-helper";
import { createTestApp, createTestServer, freePort, http, type TestServer, type TestUser } from "../test/harness";
import { PEOPLE, SEARCH, SOCIAL } from "./ua-fixtures";

// The redirect host serves every verified branded domain by the request's Host,
// with every redirect rule of the default domain, and sees a PATCH or DELETE on the next request, on a second
// instance too.
let t: TestServer;
let dns: TestDnsServer;
let alice: TestUser;

beforeAll(async () => {
  dns = await startDnsServer();
  t = await createTestServer({ DNS_SERVERS: dns.address, TRUST_PROXY: "true" });
  alice = await t.user({ plan: "pro" });
});
afterAll(async () => {
  await t?.close();
  await dns?.close();
});

type Answer = { status: number; headers: nodeHttp.IncomingHttpHeaders; text: string };
/** A request to a redirect host's port with this Host header (fetch cannot set Host). */
function visit(
  base: string,
  host: string | null,
  path: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { "user-agent": PEOPLE.windowsChrome, ...opts.headers };
    if (opts.body !== undefined) headers["content-length"] = String(Buffer.byteLength(opts.body));
    const req = nodeHttp.request({ host: u.hostname, port: u.port, path, method: opts.method ?? "GET", headers, setHost: host !== null }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    if (host !== null) req.setHeader("host", host);
    req.on("error", reject);
    req.end(opts.body);
  });
}
const at = (host: string | null, path: string, opts?: Parameters<typeof visit>[3]) => visit(t.redirect, host, path, opts);
/** HTTP/1.0 without a Host header (HTTP/1.1 requires one: Node answers 400 itself); the status code. */
const withoutHost = (path: string) =>
  new Promise<number>((resolve, reject) => {
    const u = new URL(t.redirect);
    // write, not end: a client that half-closes before the answer is aborted by node:http (httpAllowHalfOpen is off),
    // which made this flaky whenever the slug was not cached; HTTP/1.0 makes the server close after answering.
    const socket = net.connect(Number(u.port), u.hostname, () => socket.write(`GET ${path} HTTP/1.0\r\nUser-Agent: ${PEOPLE.windowsChrome}\r\n\r\n`));
    let data = "";
    socket.on("data", (d) => (data += d));
    socket.on("end", () => resolve(Number(/^HTTP\/1\.\d (\d{3})/.exec(data)?.[1])));
    socket.on("error", reject);
  });

const api = (method: string, path: string, json?: unknown) => http(`${t.api}${path}`, { method, json, headers: alice.auth });
const uniqueName = () => `go-${randomBytes(4).toString("hex")}.brand.example`;
type Domain = { id: string; name: string; verification: { name: string; value: string } };
const addDomain = async (verify = true): Promise<Domain> => {
  const d = (await api("POST", "/domains", { name: uniqueName() })).json as Domain;
  if (verify) {
    dns.txt.set(d.verification.name, [d.verification.value]);
    expect((await api("POST", `/domains/${d.id}/verify`)).json.verified).toBe(true);
  }
  return d;
};
type Link = { id: string; slug: string; short_url: string };
const newLink = async (json: Record<string, unknown>): Promise<Link> => {
  const r = await api("POST", "/links", { url: "https://dest.example/path?q=1", ...json });
  expect(r.status, r.text).toBe(201);
  return r.json;
};
const clicksOf = async (id: string) => {
  await t.app.clicks!.flush();
  return (await api("GET", `/links/${id}/analytics`)).json as { count: number; clicks: { rule: string }[] };
};
const meta = (html: string, name: string) => new RegExp(`<meta (?:property|name)="${name}" content="([^"]*)">`).exec(html)?.[1];

let shared: Domain;
beforeAll(async () => {
  shared = await addDomain();
});

describe("a verified domain's links, by Host", () => {
  it("redirects /{slug} in that domain's namespace (301, no-store) and counts the click", async () => {
    const l = await newLink({ domain: shared.name, slug: `hello-${randomBytes(3).toString("hex")}` });
    const r = await at(shared.name, `/${l.slug}`);
    expect(r.status).toBe(301);
    expect(r.headers.location).toBe("https://dest.example/path?q=1");
    expect(r.headers["cache-control"]).toBe("no-store");
    expect(await clicksOf(l.id)).toMatchObject({ count: 1, clicks: [{ rule: "url" }] });
  });

  it("the Host may differ in case, carry a port or the root's trailing dot; the slug is lower-cased", async () => {
    const l = await newLink({ domain: shared.name, slug: `case-${randomBytes(3).toString("hex")}` });
    for (const host of [shared.name.toUpperCase(), `${shared.name}:443`, `${shared.name}.`]) {
      const r = await at(host, `/${l.slug.toUpperCase()}`);
      expect(r.status, host).toBe(301);
    }
  });

  it("slugs resolve in that domain's namespace only: not the default domain's, not another domain's", async () => {
    const other = await addDomain();
    const slug = `ns-${randomBytes(3).toString("hex")}`;
    await newLink({ slug, url: "https://dest.example/default" });
    await newLink({ slug, domain: other.name, url: "https://dest.example/other" });
    expect((await at(shared.name, `/${slug}`)).status).toBe(404);
    expect((await at(other.name, `/${slug}`)).headers.location).toBe("https://dest.example/other");
    expect((await at(new URL(t.redirect).host, `/${slug}`)).headers.location).toBe("https://dest.example/default");
    // …and a branded slug is not served on the default domain.
    const only = await newLink({ domain: other.name });
    expect((await at(new URL(t.redirect).host, `/${only.slug}`)).status).toBe(404);
  });

  it("an unknown slug, a path that is no slug, and / answer 302 to not_found_url when set, else 404", async () => {
    const d = await addDomain();
    for (const path of ["/", "/nope-nothing", "/a/b", "/x?y=1"]) {
      const r = await at(d.name, path);
      expect(r.status, path).toBe(404);
      expect(JSON.parse(r.text)).toEqual({ error: "NOT_FOUND" });
      const page = await at(d.name, path, { headers: { accept: "text/html" } });
      expect(page.status, path).toBe(404);
      expect(page.headers["content-type"]).toMatch(/^text\/html/);
    }
    expect((await api("PATCH", `/domains/${d.id}`, { not_found_url: "https://www.brand.example/404" })).status).toBe(200);
    for (const path of ["/", "/nope-nothing", "/a/b"]) {
      const r = await at(d.name, path);
      expect(r.status, path).toBe(302);
      expect(r.headers.location).toBe("https://www.brand.example/404");
      expect(r.headers["cache-control"]).toBe("no-store");
    }
    // A deleted link's slug is unknown again.
    const l = await newLink({ domain: d.name });
    expect((await api("DELETE", `/links/${l.id}`)).status).toBe(204);
    expect((await at(d.name, `/${l.slug}`)).headers.location).toBe("https://www.brand.example/404");
  });

  it("a Host that is no served domain answers 404: unknown, unverified, an IP address, garbage", async () => {
    const unverified = await addDomain(false);
    const l = await newLink({ slug: `nohost-${randomBytes(3).toString("hex")}` });
    for (const host of ["unknown.brand.example", unverified.name, "203.0.113.5", "[2001:db8::1]:80", "no_such host", "localhost"]) {
      expect((await at(host, `/${l.slug}`)).status, host).toBe(404);
      expect((await at(host, "/")).status, host).toBe(404);
    }
  });

  it("the default redirect domain behaves as before: its Host, no Host, and its own paths on every host", async () => {
    const l = await newLink({ slug: `def-${randomBytes(3).toString("hex")}` });
    expect((await at(new URL(t.redirect).host, `/${l.slug}`)).status).toBe(301);
    expect(await withoutHost(`/${l.slug}`)).toBe(301);
    expect((await at(new URL(t.redirect).host, "/")).status).toBe(404);
    expect((await at(shared.name, "/_/health")).status).toBe(200);
    expect((await at("anything.example", "/_/health")).status).toBe(200);
  });
});

describe("every redirect rule of the default domain on a branded domain", () => {
  it("expiry: 302 to expiration_url, or 404; counted either way", async () => {
    const withUrl = await newLink({ domain: shared.name, expires_at: Date.now() + 60_000, expiration_url: "https://dest.example/over" });
    const without = await newLink({ domain: shared.name, expires_at: Date.now() + 60_000 });
    for (const l of [withUrl, without]) {
      await t.app.db
        .update(links)
        .set({ expiresAt: Date.now() - 1 })
        .where(eq(links.id, l.id));
      await t.app.invalidateSlugs([linkCacheKey(shared.id, l.slug)]);
    }
    const a = await at(shared.name, `/${withUrl.slug}`);
    expect(a.status).toBe(302);
    expect(a.headers.location).toBe("https://dest.example/over");
    expect((await at(shared.name, `/${without.slug}`)).status).toBe(404);
    expect((await clicksOf(withUrl.id)).clicks.map((c) => c.rule)).toEqual(["expiration_url"]);
    expect((await clicksOf(without.id)).clicks.map((c) => c.rule)).toEqual(["expired_404"]);
  });

  it("targeting: the system rule, then the country rule (GeoIP), else url", async () => {
    const l = await newLink({ domain: shared.name, targeting: { ios: "https://apps.example/ios", geo: { GB: "https://dest.example/gb" } } });
    const gb = { "x-forwarded-for": "81.2.69.160" }; // GB in the shipped GeoIP database
    expect((await at(shared.name, `/${l.slug}`, { headers: { "user-agent": PEOPLE.iphoneSafari, ...gb } })).headers.location).toBe("https://apps.example/ios");
    expect((await at(shared.name, `/${l.slug}`, { headers: gb })).headers.location).toBe("https://dest.example/gb");
    expect((await at(shared.name, `/${l.slug}`, { headers: { "x-forwarded-for": "192.168.1.20" } })).headers.location).toBe("https://dest.example/path?q=1");
    expect((await clicksOf(l.id)).clicks.map((c) => c.rule).sort()).toEqual(["geo", "ios", "url"]);
  });

  it("password: the form, then a POST with the right password redirects (302) and counts; a wrong one does not", async () => {
    const l = await newLink({ domain: shared.name, password: "open sesame" });
    const form = await at(shared.name, `/${l.slug}`);
    expect(form.status).toBe(200);
    expect(form.text).toContain(`action="/${l.slug}"`);
    const post = (password: string, host = shared.name) =>
      at(host, `/${l.slug}`, {
        method: "POST",
        body: new URLSearchParams({ password }).toString(),
        headers: { "content-type": "application/x-www-form-urlencoded" },
      });
    expect((await post("wrong")).status).toBe(401);
    const ok = await post("open sesame");
    expect(ok.status).toBe(302);
    expect(ok.headers.location).toBe("https://dest.example/path?q=1");
    expect((await clicksOf(l.id)).count).toBe(1);
    // The same slug posted to the default domain or an unknown host is not this link.
    expect((await post("open sesame", new URL(t.redirect).host)).status).toBe(404);
    expect((await post("open sesame", "unknown.brand.example")).status).toBe(404);
  });

  it("share cards: crawlers get the card with the branded og:url; people the 301", async () => {
    const l = await newLink({ domain: shared.name, og_title: "Brand launch", og_description: "On our own domain" });
    const card = await at(shared.name, `/${l.slug}`, { headers: { "user-agent": SOCIAL.facebookexternalhit } });
    expect(card.status).toBe(200);
    expect(meta(card.text, "og:url")).toBe(`https://${shared.name}/${l.slug}`);
    expect(meta(card.text, "og:title")).toBe("Brand launch");
    expect(meta(card.text, "og:image")).toBe(`${t.redirect}/_/og/${l.id}.png`);
    expect((await at(shared.name, `/${l.slug}`)).status).toBe(301);
  });

  it("HEAD, bots and crawlers are answered but not counted", async () => {
    const l = await newLink({ domain: shared.name, og_title: "Card" });
    const head = await at(shared.name, `/${l.slug}`, { method: "HEAD" });
    expect(head.status).toBe(301);
    expect(head.text).toBe("");
    expect((await at(shared.name, `/${l.slug}`, { headers: { "user-agent": SEARCH.Googlebot } })).status).toBe(301);
    expect((await at(shared.name, `/${l.slug}`, { headers: { "user-agent": SOCIAL.Twitterbot } })).status).toBe(200);
    expect((await at(shared.name, `/${l.slug}`, { headers: { "user-agent": "curl/8.5.0" } })).status).toBe(301);
    expect((await clicksOf(l.id)).count).toBe(0);
  });

  it("linktrees stay on the default domain: a linktree's slug is no page on a branded domain", async () => {
    const slug = `tree-${randomBytes(3).toString("hex")}`;
    const tree = await api("POST", "/linktrees", { slug, title: "Tree" });
    expect(tree.status).toBe(201);
    await api("PATCH", `/linktrees/${tree.json.id}`, { published: true });
    expect((await at(shared.name, `/${slug}`)).status).toBe(404);
    const linked = await api("POST", "/links", { url: "https://dest.example/", domain: shared.name, slug });
    expect(linked.status).toBe(201); // its own namespace: the default domain's linktree slug is free there
  });
});

describe("changes are seen on the next request", () => {
  it("PATCH and DELETE of a branded link", async () => {
    const l = await newLink({ domain: shared.name });
    expect((await at(shared.name, `/${l.slug}`)).headers.location).toBe("https://dest.example/path?q=1");
    await api("PATCH", `/links/${l.id}`, { url: "https://dest.example/new" });
    expect((await at(shared.name, `/${l.slug}`)).headers.location).toBe("https://dest.example/new");
    await api("PATCH", `/links/${l.id}`, { slug: `${l.slug}-b` });
    expect((await at(shared.name, `/${l.slug}`)).status).toBe(404);
    expect((await at(shared.name, `/${l.slug}-b`)).status).toBe(301);
    await api("DELETE", `/links/${l.id}`);
    expect((await at(shared.name, `/${l.slug}-b`)).status).toBe(404);
  });

  it("a link moved between domains", async () => {
    const other = await addDomain();
    const l = await newLink({ domain: shared.name });
    expect((await at(shared.name, `/${l.slug}`)).status).toBe(301);
    expect((await at(other.name, `/${l.slug}`)).status).toBe(404);
    expect((await api("PATCH", `/links/${l.id}`, { domain: other.name })).status).toBe(200);
    expect((await at(shared.name, `/${l.slug}`)).status).toBe(404);
    expect((await at(other.name, `/${l.slug}`)).status).toBe(301);
  });

  it("a domain verified, given a not_found_url, and deleted", async () => {
    const d = await addDomain(false);
    expect((await at(d.name, "/")).status).toBe(404); // the miss is cached now
    dns.txt.set(d.verification.name, [d.verification.value]);
    await api("POST", `/domains/${d.id}/verify`);
    await api("PATCH", `/domains/${d.id}`, { not_found_url: "https://www.brand.example/" });
    expect((await at(d.name, "/")).status).toBe(302);
    expect((await api("DELETE", `/domains/${d.id}`)).status).toBe(204);
    expect((await at(d.name, "/")).status).toBe(404);
  });
});

describe("a second instance on the same database", () => {
  let second: { app: AppServices; servers: RunningServers; redirect: string; database: Database; own: boolean };
  beforeAll(async () => {
    const [appPort, redirectPort] = [await freePort(), await freePort()];
    const redirect = `http://127.0.0.1:${redirectPort}`;
    const config = parseConfig({
      APP_URL: `http://127.0.0.1:${appPort}`,
      REDIRECT_URL: redirect,
      DATA_DIR: tempDataDir(),
      LOG_LEVEL: "silent",
      DNS_SERVERS: dns.address,
    });
    // PostgreSQL: a connection of its own, as another process has. PGlite: one process, one client.
    const own = t.app.database.driver === "postgres";
    const database = own ? await openDatabase({ databaseUrl: t.app.database.url!, migrate: false, poolSize: 2 }) : t.app.database;
    const app = await createServices(config, database, { rateLimitPrefix: `b${randomBytes(4).toString("hex")}` });
    const servers = await startServers(app, { remix: false });
    second = { app, servers, redirect, database, own };
  });
  afterAll(async () => {
    await second?.servers.close();
    await second?.app.clicks?.close();
    await second?.app.limits.close();
    if (second?.own) await second.database.close();
  });
  const there = (host: string, path: string) => visit(second.redirect, host, path);

  it("sees a branded link's PATCH and DELETE made on the first on its next request", async () => {
    const l = await newLink({ domain: shared.name });
    expect((await there(shared.name, `/${l.slug}`)).headers.location).toBe("https://dest.example/path?q=1"); // cached there now
    await api("PATCH", `/links/${l.id}`, { url: "https://dest.example/patched" });
    // The change arrives within milliseconds; the long bound only keeps a busy machine from failing it.
    await vi.waitFor(async () => expect((await there(shared.name, `/${l.slug}`)).headers.location).toBe("https://dest.example/patched"), { timeout: 20_000 });
    await api("DELETE", `/links/${l.id}`);
    await vi.waitFor(async () => expect((await there(shared.name, `/${l.slug}`)).status).toBe(404), { timeout: 20_000 });
  });

  it("sees a domain verified, changed and deleted on the first on its next request", async () => {
    const d = await addDomain(false);
    expect((await there(d.name, "/")).status).toBe(404); // a cached miss there
    dns.txt.set(d.verification.name, [d.verification.value]);
    await api("POST", `/domains/${d.id}/verify`);
    await api("PATCH", `/domains/${d.id}`, { not_found_url: "https://www.brand.example/gone" });
    await vi.waitFor(async () => expect((await there(d.name, "/")).headers.location).toBe("https://www.brand.example/gone"), { timeout: 20_000 });
    await api("DELETE", `/domains/${d.id}`);
    await vi.waitFor(async () => expect((await there(d.name, "/")).status).toBe(404), { timeout: 20_000 });
  });
});

describe("one port for every origin", () => {
  it("a branded Host reaches the redirect host, not the dashboard, when they share a port", async () => {
    const port = await freePort();
    const s = await createTestApp({ APP_URL: `http://app.localhost:${port}`, REDIRECT_URL: `http://go.localhost:${port}`, DNS_SERVERS: dns.address });
    const running = await startServers(s.app, { remix: false });
    try {
      const u = await s.user();
      const d = await s.caller(u.auth).domain.create({ name: uniqueName() });
      dns.txt.set(d.verification.name, [d.verification.value]);
      await s.caller(u.auth).domain.verify({ id: d.id });
      const l = await s.caller(u.auth).link.create({ url: "https://dest.example/shared", domain: d.name });
      const base = `http://127.0.0.1:${port}`;
      expect((await visit(base, d.name, `/${l.slug}`)).headers.location).toBe("https://dest.example/shared");
      expect((await visit(base, "unknown.brand.example", "/api/links")).status).toBe(404);
      expect((await visit(base, `app.localhost:${port}`, "/api/links")).status).toBe(401);
    } finally {
      await running.close();
      await s.close();
    }
  });
});

describe("GET /_/tls/ask (Caddy on-demand TLS)", () => {
  it("200 for a verified domain, in any case as the redirect host serves it, 404 otherwise", async () => {
    const unverified = await addDomain(false);
    const ask = (q: string) => at("127.0.0.1", `/_/tls/ask${q}`);
    const ok = await ask(`?domain=${shared.name}`);
    expect(ok.status).toBe(200);
    expect(ok.headers["cache-control"]).toBe("no-store");
    expect((await ask(`?domain=${shared.name.toUpperCase()}`)).status).toBe(200);
    for (const q of [
      `?domain=${unverified.name}`,
      "?domain=unknown.brand.example",
      `?domain=${shared.name}.`,
      `?domain=${shared.name}:443`,
      "",
      "?domain=",
      "?domain=203.0.113.1",
    ]) {
      expect((await ask(q)).status, q).toBe(404);
    }
    expect((await ask(`?domain[]=${shared.name}`)).status).toBe(404);
  });
});

describe("POST /reports on branded domains", () => {
  const report = (url: string) =>
    http(`${t.api}/reports`, {
      method: "POST",
      json: { url, reason: "phishing" },
      headers: { "x-forwarded-for": `10.9.${randomBytes(1)[0]}.${randomBytes(1)[0]}` },
    });

  it("accepts a short link on a verified domain and stores the report for that domain's link", async () => {
    const slug = `rep-${randomBytes(3).toString("hex")}`;
    const def = await newLink({ slug });
    const l = await newLink({ domain: shared.name, slug });
    for (const url of [`https://${shared.name}/${slug}`, `${shared.name}/${slug.toUpperCase()}/`, `http://${shared.name}/${slug}?utm=x`]) {
      const r = await report(url);
      expect(r.status, url).toBe(200);
      expect(r.json).toEqual({ ok: true });
    }
    expect(await t.app.db.select().from(abuseReports).where(eq(abuseReports.linkId, l.id))).toHaveLength(3);
    expect(await t.app.db.select().from(abuseReports).where(eq(abuseReports.linkId, def.id))).toHaveLength(0);
  });

  it("NOT_A_SHORT_LINK only for URLs on no served domain (unknown or unverified)", async () => {
    const unverified = await addDomain(false);
    for (const url of [`https://${unverified.name}/abcd`, "https://unknown.brand.example/abcd", "https://203.0.113.1/abcd"]) {
      const r = await report(url);
      expect(r.status, url).toBe(400);
      expect(r.json.error).toBe("NOT_A_SHORT_LINK");
      expect(r.json.fields).toHaveProperty("url");
    }
    expect((await report(`https://${shared.name}/no-such-slug`)).status).toBe(200);
  });
});
