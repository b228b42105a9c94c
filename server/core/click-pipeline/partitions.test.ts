import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestServer, http, type TestServer, type TestUser } from "../../test/harness";
import { clickRecord, recordClicks } from "../../test/click-records";
import { clickPartitions, ensureClickPartitions, maintainClicks, monthStart } from "./partitions";

/**
 * Clicks partitioned by month (migration 0005), partitions made ahead, and
 * CLICK_RETENTION_DAYS dropping whole old months while analytics counts stay from the rollups.
 * On PGlite and on PostgreSQL (DATABASE_URL).
 */
let t: TestServer;
let alice: TestUser;
beforeAll(async () => {
  t = await createTestServer();
  alice = await t.user({ plan: "pro" });
});
afterAll(() => t?.close());

const HOUR = 3_600_000;
const MIN = 60_000;
const rows = async <T>(q: ReturnType<typeof sql>) => {
  const r = (await t.app.db.execute(q)) as unknown as { rows?: T[] } & T[];
  return r.rows ?? r;
};
const newLink = async () => {
  const r = await http(`${t.api}/links`, { method: "POST", json: { url: "https://dest.example/" }, headers: alice.auth });
  expect(r.status).toBe(201);
  return r.json as { id: string };
};
const click = (linkId: string, timestamp: number) => clickRecord(linkId, alice.workspaceId, timestamp);
const store = (linkId: string, times: number[]) =>
  recordClicks(
    t.app,
    times.map((ts) => click(linkId, ts)),
  );
/** Which table holds each click of the link, by timestamp. */
const placed = async (linkId: string) =>
  Object.fromEntries(
    (await rows<{ t: string; p: string }>(sql`select "timestamp"::text as t, tableoid::regclass::text as p from clicks where link_id = ${linkId}`)).map((r) => [
      Number(r.t),
      r.p,
    ]),
  );
const partitionOf = (ms: number) => `clicks_${new Date(ms).toISOString().slice(0, 7).replace("-", "_")}`;
const analytics = async (id: string, q = "") => {
  const r = await http(`${t.api}/links/${id}/analytics${q}`, { headers: alice.auth });
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  return r.json as { count: number; clicks: { timestamp: number }[] };
};

describe("click partitions", () => {
  it("a click is stored in its month's partition; one of a month without a partition goes to the default one and moves when the partition is made", async () => {
    const l = await newLink();
    const now = Date.now();
    const nextMonth = monthStart(now, 1) + 5 * HOUR;
    const later = monthStart(now, 12) + HOUR;
    await store(l.id, [now, nextMonth, later]);
    expect(await placed(l.id)).toEqual({ [now]: partitionOf(now), [nextMonth]: partitionOf(nextMonth), [later]: "clicks_default" });

    expect(await ensureClickPartitions(t.app.db, later)).toContain(partitionOf(later));
    expect((await placed(l.id))[later]).toBe(partitionOf(later));
    // The primary key still holds across partitions: the same click again is not stored twice.
    const [again] = (await rows<{ ts: string }>(sql`select ts from clicks where link_id = ${l.id} and "timestamp" = ${later}`)).map((r) => r.ts);
    t.app.clicks!.record({ ...click(l.id, later), ts: again });
    await t.app.clicks!.flush();
    expect((await analytics(l.id)).count).toBe(3);
  });

  describe("CLICK_RETENTION_DAYS", () => {
    const T0 = Date.UTC(2025, 0, 1, 10); // on an hour boundary, long before the retention
    const now = Date.now();
    const ranges = {
      all: "",
      day: `?from=${Date.UTC(2025, 0, 1)}&to=${Date.UTC(2025, 0, 2) - 1}`,
      hours: `?from=${T0}&to=${T0 + 3 * HOUR - 1}`,
      partial: `?from=${T0 + 30 * MIN}&to=${T0 + 90 * MIN}`,
    };
    let id: string;
    const counts = async () => {
      const out: Record<string, number> = {};
      for (const [k, q] of Object.entries(ranges)) out[k] = (await analytics(id, q)).count;
      return out;
    };
    let before: Record<string, number>;
    beforeAll(async () => {
      id = (await newLink()).id;
      await ensureClickPartitions(t.app.db, T0);
      await store(id, [T0, T0 + 10 * MIN, T0 + 40 * MIN, T0 + 70 * MIN, T0 + 130 * MIN, T0 + 24 * HOUR, now - HOUR]);
      before = await counts();
      await maintainClicks({ config: { clickRetentionDays: 90 }, db: t.app.db, log: t.app.log }, now);
    });

    it("drops whole months older than the retention, and only those; the horizon is recorded", async () => {
      expect(before).toEqual({ all: 7, day: 5, hours: 5, partial: 2 });
      const names = (await clickPartitions(t.app.db)).map((p) => p.name);
      expect(names).not.toContain(partitionOf(T0));
      expect(names).toContain(partitionOf(now));
      expect(Object.keys(await placed(id)).map(Number), "only the recent click is still stored").toEqual([now - HOUR]);
      expect((await analytics(id)).clicks.map((c) => c.timestamp)).toEqual([now - HOUR]);
      const horizon = monthStart(now - 90 * 86_400_000);
      expect((await rows<{ b: string }>(sql`select dropped_before::text as b from click_retention`)).map((r) => Number(r.b))).toEqual([horizon]);
    });

    it("counts over dropped months stay exact from the hourly rollups", async () => {
      const after = await counts();
      expect({ all: after.all, day: after.day, hours: after.hours }).toEqual({ all: before.all, day: before.day, hours: before.hours });
    });

    it("over dropped months a range bound inside an hour counts that whole hour (the hourly rollups are what is left)", async () => {
      // 10:30-11:30 was 2 clicks (10:40, 11:10); now 10:00-12:00 whole: 10:00, 10:10, 10:40, 11:10.
      expect((await counts()).partial).toBe(4);
    });

    it("a click stored late under the horizon (a replayed spool) is counted once", async () => {
      const late = T0 + 20 * MIN;
      await store(id, [late]);
      expect(await counts()).toEqual({ all: 8, day: 6, hours: 6, partial: 5 });
    });
  });

  it("without CLICK_RETENTION_DAYS nothing is dropped", async () => {
    const l = await newLink();
    const T0 = Date.UTC(2024, 11, 1, 10);
    await ensureClickPartitions(t.app.db, T0);
    await store(l.id, [T0]);
    const partitions = (await clickPartitions(t.app.db)).map((p) => p.name);
    await maintainClicks({ config: {}, db: t.app.db, log: t.app.log });
    expect((await clickPartitions(t.app.db)).map((p) => p.name)).toEqual(partitions);
    expect(await placed(l.id)).toEqual({ [T0]: partitionOf(T0) });
  });
});
