import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { DrizzleQueryError } from "drizzle-orm/errors";
import { PgDialect } from "drizzle-orm/pg-core";
import type { SQL } from "drizzle-orm";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../../db/client";
import { tempDataDir } from "../../../db/test-db";
import { startClickRecorder, type Visit } from "../../core/clicks";
import type { AppServices } from "../../core/services";
import { createTestApp, type TestApp } from "../harness";

/**
 * During a database outage the click writer logs one line when writes start failing
 * and one when they recover, never the rows (addresses, user agents, referers); clicks dropped
 * because the spool is unwritable are logged once per state change, with a count.
 */
let t: TestApp;
beforeAll(async () => void (t = await createTestApp()));
afterAll(() => t.close());

const UA = "Mozilla/5.0 (X11; Linux x86_64) SecretBrowser/7.7";
const IP = "203.0.113.77";
const REFERER = "https://referer.example/private-page";

/** Services over a database that fails like the real driver does (the query and its params in the error), and a captured log. */
function outageApp(dataDir: string) {
  const state = { down: false };
  const lines: { level: number; msg: string; [k: string]: unknown }[] = [];
  const raw: string[] = [];
  const dialect = new PgDialect();
  const db = new Proxy(t.app.db, {
    get(target, prop, receiver) {
      if (state.down && prop === "execute")
        return (query: SQL) => {
          const q = dialect.sqlToQuery(query);
          return Promise.reject(
            new DrizzleQueryError(q.sql, q.params, Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" })),
          );
        };
      return Reflect.get(target, prop, receiver);
    },
  }) as Db;
  const log = pino({ level: "debug" }, { write: (s: string) => void (raw.push(s), lines.push(JSON.parse(s))) });
  const app = { ...t.app, db, log, config: { ...t.app.config, dataDir } } as AppServices;
  return { app, state, lines, raw };
}

const visit = (linkId: string, i: number): Visit => ({
  linkId,
  workspaceId: "public",
  timestamp: Date.now() + i,
  userAgent: UA,
  ip: IP,
  referer: REFERER,
  rule: "url",
  edge: null,
});

const noRows = (raw: string[]) => {
  const text = raw.join("");
  for (const secret of [UA, IP, REFERER, "SecretBrowser", "json_populate_recordset"]) expect(text).not.toContain(secret);
};

describe("click writer logs during a database outage", () => {
  it("one line when writes start failing and one when they recover, never the rows", async () => {
    const { app, state, lines, raw } = outageApp(tempDataDir());
    const rec = startClickRecorder(app, { intervalMs: 1, batchSize: 10 });
    state.down = true;
    for (let i = 0; i < 25; i++) rec.recordVisit(visit("logs0001", i));
    for (let i = 0; i < 5; i++) await expect(rec.flush()).rejects.toThrow();
    expect(lines.map((l) => l.msg)).toEqual(["click writes failing; clicks wait and are retried"]);
    expect(lines[0]).toMatchObject({ code: "ECONNREFUSED" });
    state.down = false;
    await rec.flush();
    expect(lines.map((l) => l.msg)).toEqual(["click writes failing; clicks wait and are retried", "click writes recovered"]);
    noRows(raw);
    await rec.close();
  });

  it("clicks dropped while the spool is unwritable: one line when it starts, one with the count when it ends", async () => {
    const dataDir = tempDataDir();
    const { app, state, lines, raw } = outageApp(dataDir);
    // A file where the spool directory should be: spilling fails.
    writeFileSync(path.join(dataDir, "click-spool"), "");
    const rec = startClickRecorder(app, { intervalMs: 60_000, batchSize: 1000, maxBuffered: 5 });
    state.down = true;
    for (let i = 0; i < 30; i++) rec.recordVisit(visit("logs0002", i));
    const dropping = lines.filter((l) => /dropping|writable again/.test(l.msg));
    expect(dropping.map((l) => l.msg)).toEqual(["click spool unwritable; dropping clicks"]);
    rmSync(path.join(dataDir, "click-spool"));
    rec.recordVisit(visit("logs0002", 31));
    const after = lines.filter((l) => /dropping|writable again/.test(l.msg));
    expect(after.map((l) => l.msg)).toEqual(["click spool unwritable; dropping clicks", "click spool writable again"]);
    expect(after[1]).toMatchObject({ dropped: 25 });
    noRows(raw);
    state.down = false;
    await rec.close();
  });
});
