import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { links } from "../../../db/schema";
import type { ClickRecord } from "../../core/clicks";
import { issueToken } from "../../lib/users";
import { clickRecord, recordClicks } from "../../test/click-records";
import { createTestServer, http, type TestServer, type TestUser } from "../../test/harness";

let t: TestServer;
let alice: TestUser;
let bob: TestUser;
beforeAll(async () => {
  t = await createTestServer();
  alice = await t.user({ plan: "pro" });
  bob = await t.user({ plan: "pro" });
});
afterAll(() => t?.close());

const newLink = (u: TestUser = alice) => t.caller(u.auth).link.create({ url: "https://dest.example/" });
const get = (path: string, u: TestUser = alice) => http(`${t.api}${path}`, { headers: u.auth });

let n = 0;
const click = (linkId: string, timestamp: number, over: Partial<ClickRecord> = {}) =>
  clickRecord(linkId, alice.workspaceId, timestamp, {
    country: "DE",
    region: "BE",
    regionName: "Berlin",
    city: "Berlin",
    platform: "Windows",
    browser: "Chrome 126",
    visitor: `v${n++}`,
    ...over,
  });
const store = (rows: ClickRecord[]) => recordClicks(t.app, rows);
const H = 3_600_000;

describe("GET /analytics/breakdown", () => {
  it("rows are by clicks, most first, keys ascending on ties, null key for clicks without a value; total covers every click", async () => {
    const l = await newLink();
    const at = Date.UTC(2025, 0, 10, 12);
    await store([
      click(l.id, at, { country: "FR" }),
      click(l.id, at + 1, { country: "FR" }),
      click(l.id, at + 2, { country: "AT" }),
      click(l.id, at + 3, { country: "BE" }),
      click(l.id, at + 4, { country: null }),
      click(l.id, at + 5, { country: null }),
    ]);
    const r = await get(`/analytics/breakdown?by=country&link_id=${l.id}`);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      by: "country",
      from: null,
      to: null,
      tz: "UTC",
      total: { clicks: 6, visitors: 6 },
      rows: [
        { key: "FR", clicks: 2, visitors: 2 },
        { key: null, clicks: 2, visitors: 2 },
        { key: "AT", clicks: 1, visitors: 1 },
        { key: "BE", clicks: 1, visitors: 1 },
      ],
    });
    const limited = await get(`/analytics/breakdown?by=country&link_id=${l.id}&limit=1`);
    expect(limited.json.rows).toEqual([{ key: "FR", clicks: 2, visitors: 2 }]);
    expect(limited.json.total).toEqual({ clicks: 6, visitors: 6 });
  });

  it("visitors count distinct daily visitor keys per UTC day, summed over days; a visitor under two keys is one visitor of the total", async () => {
    const l = await newLink();
    const day1 = Date.UTC(2025, 1, 3, 10);
    const day2 = Date.UTC(2025, 1, 4, 10);
    await store([
      click(l.id, day1, { visitor: "same", device: "mobile" }),
      click(l.id, day1 + 1, { visitor: "same", device: "desktop" }),
      click(l.id, day1 + 2, { visitor: "same", device: "desktop" }),
      click(l.id, day2, { visitor: "same", device: "desktop" }),
      click(l.id, day2 + 1, { visitor: null, device: "desktop" }),
    ]);
    const r = await get(`/links/${l.id}/analytics/breakdown?by=device`);
    expect(r.json.rows).toEqual([
      { key: "desktop", clicks: 4, visitors: 2 },
      { key: "mobile", clicks: 1, visitors: 1 },
    ]);
    expect(r.json.total).toEqual({ clicks: 5, visitors: 2 });
  });

  it("by=day answers every local day of the range, zeros included, keyed by the day's start in ms; a DST day has 23 hours", async () => {
    const l = await newLink();
    await store([
      click(l.id, Date.UTC(2026, 2, 28, 23, 30)), // 00:30 CET on 29 March
      click(l.id, Date.UTC(2026, 2, 29, 22, 30)), // 00:30 CEST on 30 March
    ]);
    const from = Date.UTC(2026, 2, 27, 23); // midnight of 28 March in Berlin
    const to = Date.UTC(2026, 2, 30, 22) - 1; // end of 30 March in Berlin
    const r = await get(`/analytics/breakdown?by=day&tz=Europe/Berlin&link_id=${l.id}&from=${from}&to=${to}`);
    expect(r.status).toBe(200);
    expect(r.json.rows).toEqual([
      { key: Date.UTC(2026, 2, 27, 23), clicks: 0, visitors: 0 },
      { key: Date.UTC(2026, 2, 28, 23), clicks: 1, visitors: 1 },
      { key: Date.UTC(2026, 2, 29, 22), clicks: 1, visitors: 1 },
    ]);
    expect(r.json.rows[2].key - r.json.rows[1].key).toBe(23 * H);
    expect(r.json).toMatchObject({ by: "day", from, to, tz: "Europe/Berlin", total: { clicks: 2, visitors: 2 } });
  });

  it("by=hour answers local hours: 23 on the spring DST day and 25 on the autumn one, the repeated hour twice", async () => {
    const l = await newLink();
    // 25 October 2026: 03:00 CEST becomes 02:00 CET, so local 02:00-03:00 happens twice.
    await store([click(l.id, Date.UTC(2026, 9, 25, 0, 30)), click(l.id, Date.UTC(2026, 9, 25, 1, 30))]);
    const autumn = await get(
      `/analytics/breakdown?by=hour&tz=Europe/Berlin&link_id=${l.id}&from=${Date.UTC(2026, 9, 24, 22)}&to=${Date.UTC(2026, 9, 25, 23) - 1}`,
    );
    expect(autumn.json.rows).toHaveLength(25);
    expect(autumn.json.rows.filter((x: { clicks: number }) => x.clicks)).toEqual([
      { key: Date.UTC(2026, 9, 25, 0), clicks: 1, visitors: 1 },
      { key: Date.UTC(2026, 9, 25, 1), clicks: 1, visitors: 1 },
    ]);
    const spring = await get(`/analytics/breakdown?by=hour&tz=Europe/Berlin&from=${Date.UTC(2026, 2, 28, 23)}&to=${Date.UTC(2026, 2, 29, 22) - 1}`);
    expect(spring.json.rows).toHaveLength(23);
    const kolkata = await get(`/analytics/breakdown?by=hour&tz=Asia/Kolkata&from=${Date.UTC(2026, 0, 1, 0, 40)}&to=${Date.UTC(2026, 0, 1, 2)}`);
    // Local hours of a +05:30 zone start at half past the UTC hour; the first bucket holds `from`.
    expect(kolkata.json.rows.map((x: { key: number }) => x.key)).toEqual([Date.UTC(2026, 0, 1, 0, 30), Date.UTC(2026, 0, 1, 1, 30)]);
  });

  it("filters narrow rows and total: one value per dimension by its name, (none) for clicks without a value", async () => {
    const l = await newLink();
    const at = Date.UTC(2025, 2, 1, 8);
    await store([
      click(l.id, at, { country: "DE", device: "mobile", referer: "https://News.Example.com:8443/a?b" }),
      click(l.id, at + 1, { country: "DE", device: "mobile", referer: null }),
      click(l.id, at + 2, { country: "DE", device: "desktop", referer: "https://news.example.com/" }),
      click(l.id, at + 3, { country: "US", device: "mobile", referer: "http://other.example/" }),
      click(l.id, at + 4, { country: null, device: "mobile", platform: "iOS", variant: 1, trigger: "qr", rule: "variant" }),
      click(l.id, at + 5, { country: "FR", device: "tablet", referer: "http://[2001:DB8::1]:8080/x" }),
    ]);
    const base = `/analytics/breakdown?link_id=${l.id}`;
    // An IPv6 literal is the whole bracketed address, and filters as the row gives it.
    expect((await get(`${base}&by=referrer_domain&country=FR`)).json.rows).toEqual([{ key: "[2001:db8::1]", clicks: 1, visitors: 1 }]);
    expect((await get(`${base}&by=country&referrer_domain=${encodeURIComponent("[2001:db8::1]")}`)).json.rows).toEqual([{ key: "FR", clicks: 1, visitors: 1 }]);
    const ref = await get(`${base}&by=referrer_domain&country=DE&device=mobile`);
    expect(ref.json.rows).toEqual([
      { key: "news.example.com", clicks: 1, visitors: 1 },
      { key: null, clicks: 1, visitors: 1 },
    ]);
    expect(ref.json.total.clicks).toBe(2);
    const none = await get(`${base}&by=os&country=(none)`);
    expect(none.json.rows).toEqual([{ key: "iOS", clicks: 1, visitors: 1 }]);
    const noRef = await get(`${base}&by=country&referrer_domain=(none)`);
    expect(noRef.json.rows).toEqual([
      { key: "DE", clicks: 1, visitors: 1 },
      { key: null, clicks: 1, visitors: 1 },
    ]);
    expect((await get(`${base}&by=variant`)).json.rows).toEqual([
      { key: null, clicks: 5, visitors: 5 },
      { key: 1, clicks: 1, visitors: 1 },
    ]);
    expect((await get(`${base}&by=trigger&variant=1`)).json.rows).toEqual([{ key: "qr", clicks: 1, visitors: 1 }]);
    expect((await get(`${base}&by=rule&trigger=link`)).json.rows).toEqual([{ key: "url", clicks: 5, visitors: 5 }]);
    expect((await get(`${base}&by=link&referrer_domain=news.example.com`)).json.rows).toEqual([{ key: l.id, clicks: 2, visitors: 2 }]);
  });

  it("the range is inclusive at both ends", async () => {
    const l = await newLink();
    const at = Date.UTC(2025, 3, 1);
    await store([click(l.id, at - 1), click(l.id, at), click(l.id, at + 10), click(l.id, at + 11)]);
    const r = await get(`/links/${l.id}/analytics/breakdown?by=city&from=${at}&to=${at + 10}`);
    expect(r.json.rows).toEqual([{ key: "Berlin", clicks: 2, visitors: 2 }]);
  });

  it("with link_id it answers what GET /links/{id}/analytics/breakdown answers for that link, a linktree item's link included", async () => {
    const tree = await t.caller(alice.auth).linktree.create({ slug: `bd-${Date.now().toString(36)}`, title: "Page" });
    const item = await t.caller(alice.auth).linktree.createItem({ id: tree.id, title: "One", url: "https://dest.example/item" });
    const [itemLink] = await t.app.db
      .select({ id: links.id })
      .from(links)
      .where(eq(links.slug, item.short_url!.split("/").pop()!));
    const own = await newLink();
    const now = Date.now();
    await store([click(itemLink.id, now - H), click(own.id, now - H, { country: "FR" })]);
    for (const id of [itemLink.id, own.id]) {
      const a = await get(`/links/${id}/analytics/breakdown?by=country`);
      const b = await get(`/analytics/breakdown?by=country&link_id=${id}`);
      expect(a.status).toBe(200);
      expect(b.json).toEqual(a.json);
      expect(b.json.total.clicks).toBe(1);
    }
  });

  it("another workspace's link answers 404 on both paths", async () => {
    const theirs = await newLink(bob);
    expect((await get(`/links/${theirs.id}/analytics/breakdown?by=country`)).json).toEqual({ error: "NOT_FOUND" });
    expect((await get(`/links/${theirs.id}/analytics/breakdown?by=country`)).status).toBe(404);
    expect((await get(`/analytics/breakdown?by=country&link_id=${theirs.id}`)).status).toBe(404);
  });

  it.each([
    ["by", "?by=weekday"],
    ["by", "?from=0"],
    ["tz", "?by=day&tz=Mars/Olympus"],
    ["limit", "?by=country&limit=0"],
    ["limit", "?by=country&limit=1001"],
    ["from", "?by=country&from=yesterday"],
    ["to", "?by=country&from=10&to=5"],
    ["country", "?by=city&country=de"],
    ["device", "?by=city&device=phone"],
    ["variant", "?by=city&variant=first"],
    ["colour", "?by=city&colour=red"],
    ["country", "?by=city&country=DE&country=FR"],
  ])("a bad, unknown or repeated parameter answers 400 VALIDATION_FAILED naming %s (%s)", async (name, query) => {
    const r = await get(`/analytics/breakdown${query}`);
    expect(r.status).toBe(400);
    expect(r.json.error).toBe("VALIDATION_FAILED");
    expect(Object.keys(r.json.fields)).toContain(name);
  });

  it("a token without analytics:read answers 403 INSUFFICIENT_SCOPE", async () => {
    const { token } = await issueToken(t.app.db, alice.id, "links only", undefined, ["links:read"]);
    const r = await http(`${t.api}/analytics/breakdown?by=country`, { headers: { authorization: `Bearer ${token}` } });
    expect(r.status).toBe(403);
    expect(r.json).toEqual({ error: "INSUFFICIENT_SCOPE" });
  });

  it("without a credential the answer is 401", async () => {
    expect((await http(`${t.api}/analytics/breakdown?by=country`)).status).toBe(401);
  });
});
