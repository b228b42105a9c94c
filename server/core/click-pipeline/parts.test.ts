import { existsSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clicks } from "../../../db/schema";
import { tempDataDir } from "../../../db/test-db";
import { createTestApp, type TestApp } from "../../test/harness";
import { enrichBatch, enrichVisit } from "./enrichment";
import { SpillFiles } from "./spill";
import { copyClicks, insertClicks, storeClicks } from "./storage";
import { fixTs, logSafeError, type ClickRecord, type Pending, type Visit } from "./types";
import { clickCounts, visit } from "./visits.test-helper";

let t: TestApp;
beforeAll(async () => void (t = await createTestApp()));
afterAll(() => t.close());

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
  const { stored, rolled } = clickCounts(() => t.app);

  it("a click stored by COPY reads back with every column as the idempotent insert stores it", async () => {
    const click = (ts: string): ClickRecord => ({
      linkId: "sto00002",
      workspaceId: "public",
      ts,
      timestamp: 1_764_000_000_123,
      country: "FR",
      region: "IDF",
      regionName: "Île-de-France",
      city: 'Paris, "centre"',
      timezone: "Europe/Paris",
      lat: 48.8566,
      lng: 2.3522,
      device: "mobile",
      platform: "iOS",
      browser: "Safari 18",
      referer: 'https://ref.example/?q="a,b"',
      rule: "variant",
      variant: 1,
      trigger: "qr",
      visitor: "abcdefghijklmnopqrstuv",
    });
    await copyClicks(t.app.database, [click("1764000000123000001")]);
    await insertClicks(t.app.db, [click("1764000000123000002")]);
    await copyClicks(t.app.database, [
      { ...click("1764000000123000003"), region: null, regionName: null, lat: null, lng: null, referer: "", variant: null, trigger: undefined, visitor: null },
    ]);
    const rows = await t.app.db.select().from(clicks).where(eq(clicks.linkId, "sto00002")).orderBy(clicks.ts);
    expect(rows).toHaveLength(3);
    const { ts: _copied, ...copied } = rows[0];
    const { ts: _inserted, ...inserted } = rows[1];
    expect(copied).toEqual(inserted);
    expect(copied).toMatchObject({
      city: 'Paris, "centre"',
      referer: 'https://ref.example/?q="a,b"',
      lat: 48.8566,
      variant: 1,
      trigger: "qr",
      visitor: "abcdefghijklmnopqrstuv",
    });
    expect(rows[2]).toMatchObject({ region: null, regionName: null, lat: null, lng: null, referer: "", variant: null, trigger: "link", visitor: null });
  });

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
