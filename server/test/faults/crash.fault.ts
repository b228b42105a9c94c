import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../../db/client";
import { links } from "../../../db/schema";
import { newLinkId } from "../../lib/ids";
import { clickTallies, freshPostgresDatabase, redirectLoad, sleep, startInstance, total } from "./instances";

/**
 * Issue 16.1: kill -9 under redirect load loses no click. Every redirect answered before the
 * kill has its click stored after a restart on the same data (the write-ahead spool is replayed
 * at start), exactly once: no more than answered, rollups counting each once. On the embedded
 * database and on PostgreSQL (FAULTS_PG_URL, default the machine's server).
 */
const PG_SERVER = process.env.FAULTS_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const LINKS = 200;
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

describe.each(["pglite", "postgres"] as const)("crash on %s", (driver) => {
  it("kill -9 mid-load: after a restart on the same data, stored clicks equal answered redirects, per link, exactly", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "faults-crash-"));
    let databaseUrl: string | undefined;
    if (driver === "postgres") {
      const db = await freshPostgresDatabase(PG_SERVER);
      cleanups.push(db.drop);
      databaseUrl = db.url;
    }
    const where = databaseUrl ? { databaseUrl } : { pgliteDir: path.join(dataDir, "pglite") };
    // The links, written before the server starts (the embedded database has one process at a time).
    const now = Date.now();
    const made = Array.from({ length: LINKS }, (_, i) => ({
      id: newLinkId(),
      workspaceId: "public",
      slug: `crash-${i}`,
      url: `https://example.com/c/${i}`,
      createdAt: now,
      updatedAt: now,
    }));
    const setup = await openDatabase({ ...where, poolSize: 1 });
    await setup.db.insert(links).values(made);
    await setup.close();

    const env = { DATA_DIR: dataDir, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) };
    const first = await startInstance(env);
    cleanups.push(async () => void (await first.stop("SIGKILL")));
    const load = redirectLoad(
      () => first.redirect,
      made.map((l) => l.slug),
      32,
    );
    await sleep(4000);
    first.proc.kill("SIGKILL");
    const code = await first.exited;
    const result = await load.stop();
    expect(code).toBe(null); // killed, no chance to flush
    expect(total(result.answered)).toBeGreaterThan(500);

    // Restart on the same data: the spool is replayed at start; a graceful stop writes the rest.
    const second = await startInstance(env);
    expect(await second.stop()).toBe(0);
    const tallies = await clickTallies(where);
    const replayed = second.output.join("").match(/"clicks":(\d+),"msg":"replaying clicks/g)?.length ?? 0;
    let answered = 0;
    let stored = 0;
    let rolled = 0;
    const wrong: string[] = [];
    for (const l of made) {
      const a = result.answered.get(l.slug) ?? 0;
      const s = tallies.clicks.get(l.id) ?? 0;
      const r = tallies.rollups.get(l.id) ?? 0;
      answered += a;
      stored += s;
      rolled += r;
      if (s !== a || r !== s) wrong.push(`${l.slug}: answered ${a}, stored ${s}, rollups ${r}`);
    }
    console.log(
      `crash ${driver}: answered ${answered}, stored ${stored}, rollups ${rolled}; spool segments replayed ${replayed}; connection errors ${result.errors}; other statuses ${JSON.stringify([...result.other])}`,
    );
    expect(wrong, "every answered redirect stored once, counted once").toEqual([]);
    expect(stored).toBe(answered);
  });
});
