import http from "node:http";
import type { AddressInfo } from "node:net";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { linkHealth, webhookDeliveries, webhooks, type links } from "../../../db/schema";
import { createProber } from "../../core/health-probe";
import { newId } from "../../lib/ids";
import { issueToken } from "../../lib/users";
import { createTestServer, http as call, type TestServer, type TestUser } from "../../test/harness";
import { insertLink } from "../links/links.service";
import { checkLink, destinationsOf } from "./health.service";

/** Destinations: `/ok` answers 200, `/gone` 410, `/down` 503, `/flip` whatever `flip` says. */
let dest: http.Server;
let base = "";
let flip = 200;
const hits: string[] = [];

let t: TestServer;
const fast = createProber({ hostIntervalMs: 0, timeoutMs: 2000 });

beforeAll(async () => {
  dest = http.createServer((req, res) => {
    hits.push(req.url ?? "");
    const path = (req.url ?? "/").split("?")[0];
    const status = path === "/gone" ? 410 : path === "/down" ? 503 : path === "/flip" ? flip : 200;
    res.writeHead(status).end();
  });
  await new Promise<void>((r) => dest.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(dest.address() as AddressInfo).port}`;
  t = await createTestServer({ WEBHOOK_ALLOW_PRIVATE: "true" });
});
afterAll(async () => {
  await t?.close();
  dest.closeAllConnections();
  await new Promise<void>((r) => dest.close(() => r()));
});

const put = (u: TestUser, over: Partial<typeof links.$inferInsert> = {}) => insertLink(t.app.db, { workspaceId: u.workspaceId, url: `${base}/ok`, ...over });
const health = (u: TestUser, id: string) => call(`${t.api}/links/${id}/health`, { headers: u.auth });
const checkNow = (u: TestUser, id: string) => call(`${t.api}/links/${id}/health/check`, { method: "POST", headers: u.auth });

async function subscribe(u: TestUser, events: string[]) {
  const now = Date.now();
  await t.app.db.insert(webhooks).values({
    id: newId(),
    workspaceId: u.workspaceId,
    url: "https://hooks.invalid/in",
    events,
    secret: "whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3R0ZXN0",
    createdAt: now,
    updatedAt: now,
  });
}
const brokenEvents = (u: TestUser) =>
  t.app.db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.workspaceId, u.workspaceId), eq(webhookDeliveries.event, "link.broken")));

describe("destination health", () => {
  it("the destinations are the url, every targeting URL and every variant, each once", () => {
    expect(
      destinationsOf({
        url: "https://a.example/",
        targeting: { ios: "https://ios.example/", android: "https://a.example/", geo: { DE: "https://de.example/" }, languages: { pt: "https://pt.example/" } },
        variants: [
          { url: "https://a.example/", weight: 50 },
          { url: "https://b.example/", weight: 50 },
        ],
      }),
    ).toEqual(["https://a.example/", "https://ios.example/", "https://de.example/", "https://pt.example/", "https://b.example/"]);
  });

  it("a link never checked answers unknown with nulls and no destinations", async () => {
    const u = await t.user();
    const link = await put(u);
    const r = await health(u, link.id);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ status: "unknown", checked_at: null, http_status: null, error: null, destinations: [] });
  });

  it("another workspace's link answers 404 NOT_FOUND, and a malformed id 400 naming id", async () => {
    const [a, b] = [await t.user(), await t.user()];
    const link = await put(a);
    expect(await health(b, link.id)).toMatchObject({ status: 404, json: { error: "NOT_FOUND" } });
    expect(await checkNow(b, link.id)).toMatchObject({ status: 404, json: { error: "NOT_FOUND" } });
    const bad = await health(a, "NOPE");
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.json.fields)).toEqual(["id"]);
  });

  it("checking now answers the result of every destination and stores it", async () => {
    const u = await t.user();
    const link = await put(u, { targeting: { ios: `${base}/ok?ios` } });
    const before = Date.now();
    const r = await checkNow(u, link.id);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: "ok", http_status: 200, error: null });
    expect(r.json.checked_at).toBeGreaterThanOrEqual(before);
    expect(r.json.destinations).toEqual([
      { url: `${base}/ok`, status: "ok", http_status: 200 },
      { url: `${base}/ok?ios`, status: "ok", http_status: 200 },
    ]);
    expect((await health(u, link.id)).json).toEqual(r.json);
  });

  it("one failure leaves the status as it was", async () => {
    const u = await t.user();
    const link = await put(u, { url: `${base}/flip` });
    flip = 200;
    expect((await checkLink(t.app, link, fast)).status).toBe("ok");
    flip = 404;
    const once = await checkLink(t.app, link, fast);
    expect(once).toMatchObject({ status: "ok", http_status: 404, error: "HTTP 404" });
    expect(once.destinations).toEqual([{ url: `${base}/flip`, status: "failed", http_status: 404 }]);
    const fresh = await put(u, { url: `${base}/gone` });
    expect((await checkLink(t.app, fresh, fast)).status).toBe("unknown");
  });

  it("two failures in a row make the link broken and send one link.broken event; a success of every destination makes it ok again", async () => {
    const u = await t.user();
    await subscribe(u, ["link.broken"]);
    const link = await put(u, {
      url: `${base}/ok`,
      variants: [
        { url: `${base}/ok`, weight: 50 },
        { url: `${base}/down`, weight: 50 },
      ],
    });
    expect((await checkLink(t.app, link, fast)).status).toBe("unknown");
    expect(await brokenEvents(u)).toHaveLength(0);
    const second = await checkLink(t.app, link, fast);
    expect(second).toMatchObject({ status: "broken", http_status: 503, error: "HTTP 503" });
    const events = await brokenEvents(u);
    expect(events).toHaveLength(1);
    expect(events[0].payload).toMatchObject({ type: "link.broken", data: { id: link.id, url: `${base}/ok` } });
    // Still broken: no second event.
    expect((await checkLink(t.app, link, fast)).status).toBe("broken");
    expect(await brokenEvents(u)).toHaveLength(1);
    expect((await health(u, link.id)).json.status).toBe("broken");
    // The failing variant is replaced by a working one: every destination succeeds.
    const [row] = await t.app.db.select().from(linkHealth).where(eq(linkHealth.linkId, link.id));
    expect(row.failures).toBe(3);
    const mended = {
      ...link,
      variants: [
        { url: `${base}/ok`, weight: 50 },
        { url: `${base}/ok?2`, weight: 50 },
      ],
    };
    expect((await checkLink(t.app, mended, fast)).status).toBe("ok");
  });

  it("failures of different destinations in two checks are not two in a row", async () => {
    const u = await t.user();
    const link = await put(u, { url: `${base}/flip`, targeting: { android: `${base}/gone?x` } });
    flip = 500;
    await checkLink(t.app, { ...link, targeting: { android: `${base}/ok?x` } }, fast);
    flip = 200;
    expect((await checkLink(t.app, link, fast)).status).toBe("unknown");
  });

  it("GET /links?health=broken, ok and unknown list the links in that state", async () => {
    const u = await t.user();
    const broken = await put(u, { url: `${base}/gone` });
    const ok = await put(u, { url: `${base}/ok` });
    const unknown = await put(u, { url: `${base}/ok?never` });
    await checkLink(t.app, broken, fast);
    await checkLink(t.app, broken, fast);
    await checkLink(t.app, ok, fast);
    const list = async (h: string) => (await call(`${t.api}/links?health=${h}`, { headers: u.auth })).json.links.map((l: { id: string }) => l.id);
    expect(await list("broken")).toEqual([broken.id]);
    expect(await list("ok")).toEqual([ok.id]);
    expect(await list("unknown")).toEqual([unknown.id]);
    const bad = await call(`${t.api}/links?health=sick`, { headers: u.auth });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.json.fields)).toEqual(["health"]);
  });

  it("health pages like the other filters, and its cursor is refused without the same health", async () => {
    const u = await t.user();
    const a = await put(u, { url: `${base}/gone?a`, createdAt: 1000, updatedAt: 1000 });
    const b = await put(u, { url: `${base}/gone?b`, createdAt: 2000, updatedAt: 2000 });
    await put(u);
    for (const l of [a, b, a, b]) await checkLink(t.app, l, fast);
    const first = await call(`${t.api}/links?health=broken&limit=1`, { headers: u.auth });
    expect(first.json.links.map((l: { id: string }) => l.id)).toEqual([b.id]);
    const second = await call(`${t.api}/links?health=broken&limit=1&cursor=${first.json.next_cursor}`, { headers: u.auth });
    expect(second.json).toMatchObject({ links: [{ id: a.id }], next_cursor: null });
    const other = await call(`${t.api}/links?limit=1&cursor=${first.json.next_cursor}`, { headers: u.auth });
    expect(other.status).toBe(400);
    expect(Object.keys(other.json.fields)).toEqual(["cursor"]);
  });

  it("an unknown body member or query parameter answers 400 naming it, and nothing is checked", async () => {
    const u = await t.user();
    const link = await put(u);
    const body = await call(`${t.api}/links/${link.id}/health/check`, { method: "POST", headers: u.auth, json: { force: true } });
    expect(body.status).toBe(400);
    expect(body.json).toMatchObject({ error: "VALIDATION_FAILED", fields: { force: expect.any(Array) } });
    const query = await call(`${t.api}/links/${link.id}/health?verbose=1`, { headers: u.auth });
    expect(query.status).toBe(400);
    expect(query.json.fields).toHaveProperty("verbose");
    expect(await t.app.db.select().from(linkHealth).where(eq(linkHealth.linkId, link.id))).toEqual([]);
  });

  it("a deleted link is not checked on request (404) but its last health stays readable", async () => {
    const u = await t.user();
    const link = await put(u);
    await checkLink(t.app, link, fast);
    await call(`${t.api}/links/${link.id}`, { method: "DELETE", headers: u.auth });
    expect((await checkNow(u, link.id)).status).toBe(404);
    expect((await health(u, link.id)).json.status).toBe("ok");
  });

  it("a token with links:read only reads health but cannot check now (403 INSUFFICIENT_SCOPE, nothing stored)", async () => {
    const u = await t.user({ plan: "pro" });
    const link = await put(u);
    const { token } = await issueToken(t.app.db, u.id, "read only", u.workspaceId, ["links:read"]);
    const ro = { authorization: `Bearer ${token}` };
    expect((await health({ ...u, auth: ro }, link.id)).status).toBe(200);
    expect(await checkNow({ ...u, auth: ro }, link.id)).toMatchObject({ status: 403, json: { error: "INSUFFICIENT_SCOPE" } });
    expect(await t.app.db.select().from(linkHealth).where(eq(linkHealth.linkId, link.id))).toEqual([]);
  });
});

describe("destination health without private addresses allowed", () => {
  let p: TestServer;
  beforeAll(async () => {
    p = await createTestServer();
  });
  afterAll(() => p?.close());

  it("a destination on a loopback address is never contacted: unknown, with the reason", async () => {
    const u = await p.user();
    const link = await insertLink(p.app.db, { workspaceId: u.workspaceId, url: `${base}/ok?private` });
    hits.length = 0;
    const r = await call(`${p.api}/links/${link.id}/health/check`, { method: "POST", headers: u.auth });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: "unknown", http_status: null, error: expect.stringMatching(/private or local/) });
    expect(r.json.destinations).toEqual([{ url: `${base}/ok?private`, status: "unknown", http_status: null }]);
    expect(hits).toEqual([]);
  });

  it("at most 10 checks on request a minute per workspace, then 429 RATE_LIMITED with Retry-After", async () => {
    const [u, other] = [await p.user(), await p.user()];
    const link = await insertLink(p.app.db, { workspaceId: u.workspaceId, url: `${base}/ok` });
    for (let i = 0; i < 10; i++) expect((await call(`${p.api}/links/${link.id}/health/check`, { method: "POST", headers: u.auth })).status).toBe(200);
    const over = await call(`${p.api}/links/${link.id}/health/check`, { method: "POST", headers: u.auth });
    expect(over.status).toBe(429);
    expect(over.json).toEqual({ error: "RATE_LIMITED" });
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);
    const theirs = await insertLink(p.app.db, { workspaceId: other.workspaceId, url: `${base}/ok` });
    expect((await call(`${p.api}/links/${theirs.id}/health/check`, { method: "POST", headers: other.auth })).status).toBe(200);
  });
});
