import { existsSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { count, eq, sum } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clickRollups, clicks } from "../../../db/schema";
import { tempDataDir } from "../../../db/test-db";
import { PEOPLE } from "../../redirect/ua-fixtures";
import { createTestApp, type TestApp } from "../../test/harness";
import { enrichBatch, enrichVisit } from "./enrichment";
import { SpillFiles } from "./spill";
import { storeClicks } from "./storage";
import { fixTs, logSafeError, type Pending, type Visit } from "./types";

let t: TestApp;
beforeAll(async () => void (t = await createTestApp()));
afterAll(() => t.close());

const visit = (linkId: string, i = 0, over: Partial<Visit> = {}): Visit => ({
  linkId,
  workspaceId: "public",
  timestamp: Date.now() + i,
  userAgent: PEOPLE.macSafari,
  ip: "127.0.0.1",
  referer: null,
  rule: "url",
  edge: null,
  ...over,
});
const pending = (v: Visit): Pending => ({ kind: "visit", visit: v });

describe("click enrichment", () => {
  it("an edge that says iOS wins over a Mac user agent (iPadOS asking for the desktop site)", async () => {
    const edge = {
      os: "ios" as const,
      device: "tablet" as const,
      country: "FR",
      region: null,
      regionName: null,
      city: null,
      timezone: null,
      lat: null,
      lng: null,
    };
    const c = await enrichVisit(visit("enr00001", 0, { edge }), "cloudfront");
    expect(c).toMatchObject({ platform: "iOS", device: "tablet", country: "FR", browser: "Safari 18" });
  });

  it("a batch keeps its order and each visit's fixed ts (a retried batch inserts the same keys)", async () => {
    const batch = [pending(visit("enr00002", 0)), pending(visit("enr00002", 1))].map(fixTs);
    const rows = await enrichBatch(batch, "none");
    expect(rows.map((r) => r.ts)).toEqual(batch.map((p) => (p.kind === "visit" ? p.ts : undefined)));
    expect(rows.every((r) => r.country === null)).toBe(true); // a private address has no location
  });
});

describe("click storage", () => {
  const stored = async (linkId: string) => Number((await t.app.db.select({ n: count() }).from(clicks).where(eq(clicks.linkId, linkId)))[0].n);
  const rolled = async (linkId: string) =>
    Number(
      (
        await t.app.db
          .select({ n: sum(clickRollups.count) })
          .from(clickRollups)
          .where(eq(clickRollups.linkId, linkId))
      )[0].n ?? 0,
    );

  it("a batch stored twice (COPY refused, then the idempotent insert) is stored and rolled up once", async () => {
    const rows = await Promise.all([0, 1, 2].map((i) => enrichVisit(visit("sto00001", i), "none")));
    await storeClicks(t.app, rows);
    await storeClicks(t.app, rows);
    expect(await stored("sto00001")).toBe(3);
    expect(await rolled("sto00001")).toBe(3);
  });
});

describe("click spill files", () => {
  it("spilled clicks are found again by the next start, oldest first, and a file goes only when done", () => {
    const dir = path.join(tempDataDir(), "click-spool");
    const first = new SpillFiles(dir);
    first.write([pending(visit("spl00001", 0)), pending(visit("spl00001", 1))]);
    first.write([pending(visit("spl00002", 0))]);
    expect(first.count).toBe(3);

    const again = new SpillFiles(dir);
    expect([again.length, again.count]).toEqual([2, 3]);
    const taken = again.take()!;
    expect(taken.batch.map((p) => (p.kind === "visit" ? p.visit.linkId : ""))).toEqual(["spl00001", "spl00001"]);
    // Every spilled visit carries its key, so the write after a restart inserts the same rows.
    expect(taken.batch.every((p) => p.kind === "visit" && typeof p.ts === "string")).toBe(true);
    expect(again.count).toBe(1);
    again.putBack(taken.from); // a failed write: first again
    expect(again.take()!.from.file).toBe(taken.from.file);
    again.done(taken.from);
    expect(existsSync(taken.from.file)).toBe(false);
    expect(readdirSync(dir)).toHaveLength(1);
  });

  it("a file that is no spill file is ignored", () => {
    const dir = path.join(tempDataDir(), "click-spool");
    new SpillFiles(dir).write([pending(visit("spl00003"))]);
    writeFileSync(path.join(dir, "notes.txt"), "x");
    expect(new SpillFiles(dir).count).toBe(1);
  });
});

describe("log-safe errors", () => {
  it("a failed write is logged by its driver code and message, never the query's parameters", () => {
    const driver = Object.assign(new Error("connection refused"), { code: "ECONNREFUSED" });
    const drizzle = Object.assign(new Error("Failed query: insert … params: 1.2.3.4"), { params: ["1.2.3.4"], cause: driver });
    expect(logSafeError(drizzle)).toEqual({ code: "ECONNREFUSED", error: "connection refused" });
    expect(logSafeError(Object.assign(new Error("x"), { params: ["secret"] }))).toEqual({ error: "query failed" });
  });
});
