import { readFileSync } from "node:fs";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertClicks, storeClicks } from "../../core/click-pipeline/storage";
import type { ClickRecord } from "../../core/clicks";
import { clickRecord } from "../../test/click-records";
import { createTestServer, type TestServer, type TestUser } from "../../test/harness";
import { linksAndPage, random } from "./random-clicks.test-helper";
import { TOP_DIMENSIONS, type TopDimension } from "./top-values.schema";

// The analytics page's rankings (analytics.top) read whole UTC days of a workspace from per-day
// counts and the rest from the clicks: every ranking must equal the clicks the breakdown procedure
// counts for the same selection, whatever the range, filters and way the clicks were stored.
let t: TestServer;
let alice: TestUser;
let ids: string[] = [];
const H = 3_600_000;
const D = 24 * H;
const from = Date.UTC(2025, 5, 10, 9, 17);
const to = Date.UTC(2025, 5, 16, 14, 3);

const pick = <T>(r: () => number, xs: T[]) => xs[Math.floor(r() * xs.length)];

let seq = 0;
function clicksOf(linkIds: string[], start: number, span: number, n: number, seed: number): ClickRecord[] {
  const r = random(seed);
  return Array.from({ length: n }, () => {
    const timestamp = start + Math.floor(r() * span);
    const country = pick(r, ["DE", "FR", "US", null]);
    return clickRecord(pick(r, linkIds), alice.workspaceId, timestamp, {
      ts: `${String(timestamp).padStart(13, "0")}#${String(seq++).padStart(8, "0")}`,
      country,
      // Springfield from two countries: its label is the country of most of its clicks.
      city: pick(r, ["Springfield", "Springfield", "Berlin", "Zürich", null]),
      device: pick(r, ["desktop", "mobile", "tablet"] as const),
      platform: pick(r, ["Windows", "iOS", null]),
      browser: pick(r, ["Chrome 126", "Firefox 128", null]),
      referer: pick(r, [null, "https://News.example:8443/a", "https://user@blog.example/x", "not a url"]),
      rule: pick(r, ["url", "geo", "ios"] as const),
      trigger: pick(r, ["link", "qr"] as const),
      visitor: `v${Math.floor(r() * 9)}`,
    });
  });
}

beforeAll(async () => {
  t = await createTestServer();
  alice = await t.user({ plan: "pro" });
  const { ids: linkIds, page } = await linksAndPage(t, alice, 4, "top");
  ids = linkIds;
  const span = to - from + 2 * D;
  const batches = [0, 1, 2].map((i) => clicksOf(ids, from - D, span, 200, 7 + i));
  for (const b of batches) await storeClicks(t.app, b); // by COPY
  await storeClicks(t.app, batches[0]); // again: nothing new
  await insertClicks(t.app.db, [...batches[1].slice(0, 30), ...clicksOf(ids, from - D, span, 80, 50)]); // the insert: only the new ones count
  await storeClicks(t.app, clicksOf([page.id], from, to - from, 40, 3)); // a linktree page's views: left out
  await storeClicks(t.app, [...clicksOf(ids, from - D, span, 60, 80), ...clicksOf([page.id], from - D, span, 30, 81)]); // and among a batch of clicks
  await Promise.all([0, 1, 2].map((i) => storeClicks(t.app, clicksOf(ids, from - D, span, 100, 60 + i))));
});
afterAll(() => t?.close());

const BY: Record<TopDimension, string> = {
  link: "link",
  country: "country",
  city: "city",
  device: "device",
  os: "os",
  browser: "browser",
  referrer_domain: "referrer_domain",
  rule: "rule",
  trigger: "trigger",
};

/** Each ranking of analytics.top against the breakdown by the same attribute over the same selection. */
async function compare(selection: Record<string, string>, limit = 3) {
  const top = await t.caller(alice.auth).analytics.top({ ...selection, limit } as never);
  for (const dim of TOP_DIMENSIONS) {
    const b = await t.caller(alice.auth).analytics.breakdown({ ...selection, by: BY[dim], limit: String(limit) } as never);
    expect(top.clicks, `${dim} total`).toBe(b.total.clicks);
    expect(
      top.top[dim].map((r) => [r.key, r.clicks]),
      `${dim} of ${JSON.stringify(selection)}`,
    ).toEqual(b.rows.map((r) => [r.key, r.clicks]));
  }
  return top;
}

describe("analytics.top", () => {
  it("every ranking over a range cut inside days equals the breakdown's clicks", async () => {
    const top = await compare({ from: String(from), to: String(to) });
    expect(top.clicks).toBeGreaterThan(300);
  });

  it("every ranking over whole UTC days, and over an open range, equals the breakdown's clicks", async () => {
    await compare({ from: String(Date.UTC(2025, 5, 11)), to: String(Date.UTC(2025, 5, 15) - 1) });
    await compare({});
    await compare({ from: String(from) }, 100);
  });

  it("every ranking equals the breakdown's clicks whether a partial day is read from its clicks or as the whole day less the rest", async () => {
    // Short edges (read from the clicks), then two partial days without a whole one between (one of each kind).
    await compare({ from: String(Date.UTC(2025, 5, 10, 20, 5)), to: String(Date.UTC(2025, 5, 14, 3, 30)) });
    await compare({ from: String(Date.UTC(2025, 5, 12, 15)), to: String(Date.UTC(2025, 5, 13, 16)) });
    await compare({ from: String(Date.UTC(2025, 5, 12, 1)), to: String(Date.UTC(2025, 5, 12, 23)) });
  });

  it("every ranking of a filtered selection (an attribute, none of one, or one link) equals the breakdown's clicks", async () => {
    await compare({ from: String(from), to: String(to), country: "DE" });
    await compare({ from: String(from), to: String(to), referrer_domain: "(none)", device: "mobile" });
    await compare({ from: String(from), to: String(to), link_id: ids[1] });
  });

  it("a range inside one hour, and one with no clicks, are counted from the clicks", async () => {
    await compare({ from: String(from + H), to: String(from + H + 20 * 60_000) });
    const none = await compare({ from: String(Date.UTC(2020, 0, 1)), to: String(Date.UTC(2020, 0, 3)) });
    expect(none.clicks).toBe(0);
  });

  it("a link reads as its slug, and a city with the country most of its clicks came from", async () => {
    const top = await t.caller(alice.auth).analytics.top({ from: String(from), to: String(to), limit: 10 });
    const slugs = new Map((await t.caller(alice.auth).link.list({})).links.map((l) => [l.id, l.slug]));
    for (const r of top.top.link) expect(r.slug).toBe(slugs.get(r.key!));
    for (const r of top.top.city.filter((x) => x.key !== null)) {
      const countries = await t.caller(alice.auth).analytics.breakdown({ from: String(from), to: String(to), by: "country", city: r.key!, limit: "1" });
      expect(r.country, r.key!).toBe(countries.rows[0].key);
    }
  });

  it("a link of another workspace is a 404, and a limit over 100 names the field", async () => {
    const bob = await t.user({ plan: "pro" });
    await expect(t.caller(bob.auth).analytics.top({ link_id: ids[0], limit: 10 })).rejects.toMatchObject({ publicCode: "NOT_FOUND" });
    await expect(t.caller(alice.auth).analytics.top({ limit: 101 })).rejects.toThrow(/limit/);
  });
});

describe("the migration that added the per-day counts", () => {
  it("fills them from the clicks already stored exactly as the click storage keeps them", async () => {
    const file = readFileSync("db/migrations/0020_day_values.sql", "utf8");
    const backfill = file.split("--> statement-breakpoint").find((s) => /INSERT INTO "click_day_values"/.test(s))!;
    const rowsOf = async () =>
      (await t.app.db.execute(sql`select workspace_id, day, dim, value, detail, clicks from click_day_values order by 1, 2, 3, 4, 5`)) as unknown as
        { rows: unknown[] } | unknown[];
    const list = (r: { rows: unknown[] } | unknown[]) => (Array.isArray(r) ? r : r.rows);
    const kept = list(await rowsOf());
    expect(kept.length).toBeGreaterThan(50);
    await t.app.db.transaction(async (tx) => {
      await tx.execute(sql`delete from click_day_values`);
      await tx.execute(sql.raw(backfill));
    });
    expect(list(await rowsOf())).toEqual(kept);
  });
});
