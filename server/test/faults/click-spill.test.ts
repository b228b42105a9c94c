import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../../db/client";
import { tempDataDir } from "../../../db/test-db";
import { startClickRecorder, type Visit } from "../../core/clicks";
import type { AppServices } from "../../core/services";
import { createTestApp, type TestApp } from "../harness";

/**
 * In process: while the database is away, clicks wait in a bounded buffer that
 * spills to DATA_DIR beyond its memory bound, and every one is written once it is back.
 * (The process-level outage test with a real PostgreSQL stop is outage.fault.ts.)
 */
let t: TestApp;
beforeAll(async () => void (t = await createTestApp()));
afterAll(() => t.close());

/** The app's services over a database handle that can be switched off. */
function flakyApp(dataDir: string) {
  const state = { down: false };
  const unavailable = () => Promise.reject(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }));
  const db = new Proxy(t.app.db, {
    get(target, prop, receiver) {
      if (state.down && (prop === "transaction" || prop === "insert" || prop === "execute")) return unavailable;
      return Reflect.get(target, prop, receiver);
    },
  }) as Db;
  const app = { ...t.app, db, config: { ...t.app.config, dataDir } } as AppServices;
  return { app, state };
}

const visit = (linkId: string, i: number): Visit => ({
  linkId,
  workspaceId: "public",
  timestamp: Date.now() + i,
  userAgent: "Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0",
  ip: "127.0.0.1",
  referer: null,
  rule: "url",
  edge: null,
});

const stored = async (linkId: string) => {
  const r = (await t.app.db.execute(sql`select count(*)::int as n from clicks where link_id = ${linkId}`)) as unknown as { rows?: { n: number }[] } & {
    n: number;
  }[];
  return Number((r.rows ?? r)[0].n);
};
const rollup = async (linkId: string) => {
  const r = (await t.app.db.execute(sql`select coalesce(sum(count), 0)::int as n from click_rollups where link_id = ${linkId}`)) as unknown as {
    rows?: { n: number }[];
  } & { n: number }[];
  return Number((r.rows ?? r)[0].n);
};
const spoolFiles = (dataDir: string) => (existsSync(path.join(dataDir, "click-spool")) ? readdirSync(path.join(dataDir, "click-spool")) : []);

describe("click buffer during a database outage", () => {
  it("beyond the memory bound clicks spill to DATA_DIR/click-spool; all are written once the database is back", async () => {
    const dataDir = tempDataDir();
    const { app, state } = flakyApp(dataDir);
    const rec = startClickRecorder(app, { maxBuffered: 10, batchSize: 4, intervalMs: 5 });
    state.down = true;
    for (let i = 0; i < 57; i++) rec.recordVisit(visit("spill001", i));
    await expect(rec.flush()).rejects.toThrow();
    expect(rec.buffered).toBe(57);
    expect(spoolFiles(dataDir).length, "spilled files").toBeGreaterThanOrEqual(4);
    expect(await stored("spill001")).toBe(0);

    state.down = false;
    await rec.flush();
    expect(await stored("spill001")).toBe(57);
    expect(await rollup("spill001"), "rollups count each click once").toBe(57);
    expect(rec.buffered).toBe(0);
    expect(spoolFiles(dataDir), "spill files removed once written").toEqual([]);
    await rec.close();
  });

  it("clicks arriving while a batch is being written are neither lost nor written twice", async () => {
    const dataDir = tempDataDir();
    const { app } = flakyApp(dataDir);
    const rec = startClickRecorder(app, { maxBuffered: 5, batchSize: 3, intervalMs: 1 });
    for (let i = 0; i < 200; i++) {
      rec.recordVisit(visit("spill002", i));
      if (i % 7 === 0) await new Promise((r) => setImmediate(r));
    }
    await rec.flush();
    expect(await stored("spill002")).toBe(200);
    expect(await rollup("spill002")).toBe(200);
    expect(spoolFiles(dataDir)).toEqual([]);
    await rec.close();
  });

  it("a stop while the database is away spools the clicks; the next start writes them", async () => {
    const dataDir = tempDataDir();
    const first = flakyApp(dataDir);
    const rec = startClickRecorder(first.app, { maxBuffered: 8, batchSize: 5, intervalMs: 5 });
    first.state.down = true;
    for (let i = 0; i < 30; i++) rec.recordVisit(visit("spill003", i));
    await rec.close();
    expect(spoolFiles(dataDir).length).toBeGreaterThan(0);
    expect(await stored("spill003")).toBe(0);

    const second = flakyApp(dataDir);
    const again = startClickRecorder(second.app, { maxBuffered: 8, batchSize: 5, intervalMs: 5 });
    expect(again.buffered).toBeGreaterThanOrEqual(0);
    await again.flush();
    expect(await stored("spill003")).toBe(30);
    expect(await rollup("spill003")).toBe(30);
    expect(spoolFiles(dataDir)).toEqual([]);
    await again.close();
  });
});
