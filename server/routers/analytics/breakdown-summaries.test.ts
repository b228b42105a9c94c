import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dropClicksBefore } from "../../core/click-pipeline/partitions";
import { insertClicks, storeClicks } from "../../core/click-pipeline/storage";
import type { ClickRecord } from "../../core/clicks";
import { clickRecord } from "../../test/click-records";
import { createTestServer, http, type TestServer, type TestUser } from "../../test/harness";
import { linksAndPage, random } from "./random-clicks.test-helper";

// A whole workspace's breakdowns by country and by day read whole UTC days from the summaries the
// click storage keeps, and the partial edge days from the clicks: on random clicks (repeat visitors
// across countries, days and links, unknown countries and visitors, a linktree page's views, a
// batch stored twice) they must equal the counts computed from the clicks themselves.
let t: TestServer;
let alice: TestUser;
beforeAll(async () => {
  t = await createTestServer();
  alice = await t.user({ plan: "pro" });
});
afterAll(() => t?.close());

const H = 3_600_000;
const D = 24 * H;
const get = (path: string) => http(`${t.api}${path}`, { headers: alice.auth });

const COUNTRIES = ["DE", "FR", "AT", null];
let seq = 0;
function clicksOf(linkIds: string[], from: number, span: number, n: number, seed: number): ClickRecord[] {
  const r = random(seed);
  return Array.from({ length: n }, () => {
    const timestamp = from + Math.floor(r() * span);
    return clickRecord(linkIds[Math.floor(r() * linkIds.length)], alice.workspaceId, timestamp, {
      ts: `${String(timestamp).padStart(13, "0")}#${String(seq++).padStart(8, "0")}`,
      country: COUNTRIES[Math.floor(r() * COUNTRIES.length)],
      platform: "Windows",
      browser: "Chrome 126",
      visitor: r() < 0.1 ? null : `v${Math.floor(r() * 12)}`,
    });
  });
}

/** Clicks and visitors (distinct visitor keys per UTC day, summed over days) per key, and of all. */
function expected(rows: ClickRecord[], keyOf: (c: ClickRecord) => string | null) {
  const out = new Map<string | null, { clicks: number; visitors: Set<string> }>();
  const all = new Set<string>();
  for (const c of rows) {
    const k = keyOf(c);
    const e = out.get(k) ?? { clicks: 0, visitors: new Set<string>() };
    e.clicks++;
    const day = Math.floor(c.timestamp / D);
    if (c.visitor) {
      e.visitors.add(`${day} ${c.visitor}`);
      all.add(`${day} ${c.visitor}`);
    }
    out.set(k, e);
  }
  return { rows: new Map([...out].map(([k, e]) => [k, { clicks: e.clicks, visitors: e.visitors.size }])), total: { clicks: rows.length, visitors: all.size } };
}

const berlinDay = (ms: number) => new Intl.DateTimeFormat("en-CA", { timeZone: "Europe/Berlin", year: "numeric", month: "2-digit", day: "2-digit" }).format(ms);

describe("breakdowns from the summaries", () => {
  let stored: ClickRecord[] = [];
  let counted: ClickRecord[] = [];
  // Over the change to summer time in Berlin (2025-03-30), from and to inside a day.
  const from = Date.UTC(2025, 2, 27, 7, 13);
  const to = Date.UTC(2025, 3, 2, 17, 41);

  beforeAll(async () => {
    const { ids, page } = await linksAndPage(t, alice, 3, "sum");
    const span = to - from + 2 * D;
    const batches = [0, 1, 2, 3].map((i) => clicksOf(ids, from - D, span, 150, 17 + i));
    for (const b of batches) await storeClicks(t.app, b); // by COPY
    await storeClicks(t.app, batches[1]); // again: nothing new
    const late = clicksOf(ids, from - D, span, 60, 99);
    await insertClicks(t.app.db, [...batches[2].slice(0, 20), ...late]); // the insert: only the new ones count
    await storeClicks(t.app, clicksOf([page.id], from, to - from, 40, 5)); // a linktree page's views: left out
    // Four writers at once (separate connections on PostgreSQL), the same visitor keys and days.
    const together = [0, 1, 2, 3].map((i) => clicksOf(ids, from - D, span, 100, 40 + i));
    await Promise.all(together.map((b) => storeClicks(t.app, b)));
    stored = [...batches.flat(), ...late, ...together.flat()];
    counted = stored.filter((c) => c.timestamp >= from && c.timestamp <= to);
  });

  it("by country equals the counts of the clicks themselves", async () => {
    const r = await get(`/analytics/breakdown?by=country&from=${from}&to=${to}`);
    expect(r.status, r.text).toBe(200);
    const e = expected(counted, (c) => c.country);
    expect(r.json.total).toEqual(e.total);
    expect(
      new Map(r.json.rows.map((x: { key: string | null; clicks: number; visitors: number }) => [x.key, { clicks: x.clicks, visitors: x.visitors }])),
    ).toEqual(e.rows);
    const order = r.json.rows.map((x: { clicks: number }) => x.clicks);
    expect(order).toEqual([...order].sort((a, b) => b - a));
  });

  it("by day in Europe/Berlin (over a DST change) equals the counts of the clicks themselves", async () => {
    const r = await get(`/analytics/breakdown?by=day&tz=Europe/Berlin&from=${from}&to=${to}`);
    expect(r.status, r.text).toBe(200);
    const e = expected(counted, (c) => berlinDay(c.timestamp));
    expect(r.json.total).toEqual(e.total);
    for (const row of r.json.rows as { key: number; clicks: number; visitors: number }[]) {
      expect({ day: berlinDay(row.key), clicks: row.clicks, visitors: row.visitors }).toEqual({
        day: berlinDay(row.key),
        ...(e.rows.get(berlinDay(row.key)) ?? { clicks: 0, visitors: 0 }),
      });
    }
    expect(r.json.rows.map((x: { key: number }) => berlinDay(x.key))).toEqual([...new Set(counted.map((c) => berlinDay(c.timestamp)))].sort());
  });

  it("by day in UTC equals the counts of the clicks themselves", async () => {
    const r = await get(`/analytics/breakdown?by=day&from=${from}&to=${to}`);
    const e = expected(counted, (c) => new Date(c.timestamp).toISOString().slice(0, 10));
    expect(r.json.total).toEqual(e.total);
    for (const row of r.json.rows as { key: number; clicks: number; visitors: number }[]) {
      const k = new Date(row.key).toISOString().slice(0, 10);
      expect({ k, clicks: row.clicks, visitors: row.visitors }).toEqual({ k, ...(e.rows.get(k) ?? { clicks: 0, visitors: 0 }) });
    }
  });

  it("the visitor hour counts equal the first and last hours of the visitor sets, after batches stored in any order", async () => {
    const rows = (await t.app.db.execute(sql`
      with sets as (
        select day, 'total' as dim, '' as value, hours from click_visitor_days where workspace_id = ${alice.workspaceId}
        union all select day, 'country', country, hours from click_visitor_countries where workspace_id = ${alice.workspaceId}
      ), e as (
        select day, dim, value, h as hour, count(*) filter (where hours & ((1 << h) - 1) = 0 and hours & (1 << h) <> 0) as firsts,
          count(*) filter (where hours >> (h + 1) = 0 and hours & (1 << h) <> 0) as lasts
        from sets cross join generate_series(0, 23) h group by 1, 2, 3, 4
      )
      select count(*) as wrong, (select count(*) from e where firsts > 0) as checked from e
      full join (select * from click_visitor_hours where workspace_id = ${alice.workspaceId}) h using (day, dim, value, hour)
      where coalesce(e.firsts, 0) <> coalesce(h.firsts, 0) or coalesce(e.lasts, 0) <> coalesce(h.lasts, 0)`)) as unknown as
      { rows: { wrong: unknown; checked: unknown }[] } | { wrong: unknown; checked: unknown }[];
    const [r] = Array.isArray(rows) ? rows : rows.rows;
    expect(Number(r.checked)).toBeGreaterThan(50);
    expect(Number(r.wrong)).toBe(0);
  });

  it("ranges cut on whole hours, inside hours and on midnight equal the counts of the clicks themselves", async () => {
    const cuts: [number, number][] = [
      [Date.UTC(2025, 2, 27, 9), Date.UTC(2025, 3, 2, 15)],
      [Date.UTC(2025, 2, 27, 0), Date.UTC(2025, 3, 2, 0)],
      [Date.UTC(2025, 2, 27, 23, 59), Date.UTC(2025, 2, 29, 0, 1)],
      [Date.UTC(2025, 2, 28, 0, 30), Date.UTC(2025, 2, 30, 23, 30)],
    ];
    for (const [lo, hi] of cuts) {
      const inRange = stored.filter((c) => c.timestamp >= lo && c.timestamp <= hi);
      const r = await get(`/analytics/breakdown?by=country&from=${lo}&to=${hi}`);
      const e = expected(inRange, (c) => c.country);
      expect({ lo, hi, total: r.json.total }).toEqual({ lo, hi, total: e.total });
      expect(
        new Map(r.json.rows.map((x: { key: string | null; clicks: number; visitors: number }) => [x.key, { clicks: x.clicks, visitors: x.visitors }])),
      ).toEqual(e.rows);
    }
  });

  it("by day in zones whose midnight is another UTC hour, or moves across DST, equals the counts of the clicks themselves", async () => {
    for (const tz of ["Europe/London", "America/New_York", "Asia/Tokyo", "Asia/Kolkata", "Antarctica/Troll"]) {
      const local = (ms: number) => new Intl.DateTimeFormat("en-CA", { timeZone: tz, year: "numeric", month: "2-digit", day: "2-digit" }).format(ms);
      const r = await get(`/analytics/breakdown?by=day&tz=${tz}&from=${from}&to=${to}`);
      expect(r.status, r.text).toBe(200);
      const e = expected(counted, (c) => local(c.timestamp));
      expect({ tz, total: r.json.total }).toEqual({ tz, total: e.total });
      for (const row of r.json.rows as { key: number; clicks: number; visitors: number }[]) {
        expect({ tz, day: local(row.key), clicks: row.clicks, visitors: row.visitors }).toEqual({
          tz,
          day: local(row.key),
          ...(e.rows.get(local(row.key)) ?? { clicks: 0, visitors: 0 }),
        });
      }
    }
  });

  it("whole days are read from the summaries, not the clicks", async () => {
    const hour = Date.UTC(2025, 2, 29, 10);
    await t.app.db.execute(sql`insert into click_hour_countries (workspace_id, hour, country, clicks) values (${alice.workspaceId}, ${hour}, 'ZZ', 1000)`);
    const r = await get(`/analytics/breakdown?by=country&from=${from}&to=${to}`);
    await t.app.db.execute(sql`delete from click_hour_countries where workspace_id = ${alice.workspaceId} and country = 'ZZ'`);
    expect(r.json.total.clicks).toBe(counted.length + 1000);
  });

  it("retention drops the summaries of the dropped months with their clicks", async () => {
    // Everything before April (the month holding the cutoff) goes.
    await dropClicksBefore(t.app.db, Date.UTC(2025, 3, 15));
    const kept = counted.filter((c) => c.timestamp >= Date.UTC(2025, 3, 1));
    const r = await get(`/analytics/breakdown?by=country&from=${from}&to=${to}`);
    expect(r.json.total).toEqual(expected(kept, (c) => c.country).total);
    const byDay = await get(`/analytics/breakdown?by=day&from=${from}&to=${to}`);
    expect(byDay.json.total).toEqual(expected(kept, (c) => c.country).total);
  });
});
