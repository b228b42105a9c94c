import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { clickTallies, freshPostgresDatabase, postJson, redirectLoad, sleep, startInstance, total } from "./instances";

/**
 * SIGTERM under redirect load. Every redirect that was answered has its click stored
 * after a restart on the same data, and API requests in flight at the signal finish. On the
 * embedded database and on PostgreSQL (FAULTS_PG_URL, default the machine's server).
 */
const PG_SERVER = process.env.FAULTS_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

describe.each(["pglite", "postgres"] as const)("graceful stop on %s", (driver) => {
  it("SIGTERM mid-load: exit 0, in-flight API requests finish, every answered redirect's click is stored", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "faults-graceful-"));
    let databaseUrl: string | undefined;
    if (driver === "postgres") {
      const db = await freshPostgresDatabase(PG_SERVER);
      cleanups.push(db.drop);
      databaseUrl = db.url;
    }
    const env = { DATA_DIR: dataDir, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) };
    const first = await startInstance(env);
    cleanups.push(async () => void (await first.stop("SIGKILL")));

    const links: { id: string; slug: string }[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await postJson(`${first.api}/links`, { url: `https://example.com/g${i}` });
      expect(r.status, r.body).toBe(201);
      links.push(JSON.parse(r.body));
    }
    const load = redirectLoad(
      () => first.redirect,
      links.map((l) => l.slug),
    );
    await sleep(2000);

    // Slow API requests (scrypt) in flight when the signal arrives.
    const inflight = Array.from({ length: 4 }, (_, i) => postJson(`${first.api}/links`, { url: `https://example.com/api${i}`, password: `pass-${i}-word` }));
    await sleep(60);
    first.proc.kill("SIGTERM");
    const code = await first.exited;
    const api = await Promise.all(inflight);
    const result = await load.stop();
    expect(code, first.output.join("").slice(-2000)).toBe(0);
    expect(
      api.map((r) => r.status),
      "in-flight API requests finish",
    ).toEqual([201, 201, 201, 201]);
    expect(total(result.answered)).toBeGreaterThan(50);

    // Restart on the same data (a spool left by the stop is written at start), stop again, count.
    const second = await startInstance(env);
    expect(await second.stop()).toBe(0);
    const tallies = await clickTallies(databaseUrl ? { databaseUrl } : { pgliteDir: path.join(dataDir, "pglite") });
    const stored = tallies.clicks;
    const figures = links.map((l) => ({
      slug: l.slug,
      sent: result.sent.get(l.slug) ?? 0,
      answered: result.answered.get(l.slug) ?? 0,
      stored: stored.get(l.id) ?? 0,
      rollup: tallies.rollups.get(l.id) ?? 0,
    }));
    console.log(`graceful ${driver}: ${JSON.stringify(figures)}; connection errors ${result.errors}; other statuses ${JSON.stringify([...result.other])}`);
    for (const f of figures) {
      expect(f.stored, `${f.slug}: every answered redirect is stored`).toBeGreaterThanOrEqual(f.answered);
      expect(f.stored, `${f.slug}: no click stored twice`).toBeLessThanOrEqual(f.sent);
      expect(f.rollup, `${f.slug}: hourly rollups count each stored click once`).toBe(f.stored);
    }
  });
});
