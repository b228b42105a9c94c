import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../../db/client";
import { links } from "../../../db/schema";
import { newLinkId } from "../../lib/ids";
import { clickTallies, freshPostgresDatabase, redirectLoad, sleep, startInstance, total } from "./instances";

/**
 * kill -9 under redirect load loses no click. Every redirect answered before the
 * kill has its click stored after a restart on the same data (the write-ahead spool is replayed
 * at start), exactly once, rollups counting each once. A click is spooled before its answer is
 * sent, so a request the kill cut off between the two (spooled, its answer lost with the process
 * or reset on the wire) may be stored too: a link's stored clicks lie between its answered
 * redirects and those plus its requests cut off, never below (a lost click) or above (a click
 * nobody asked for). On the embedded database and on PostgreSQL (FAULTS_PG_URL, default the
 * machine's server).
 */
const PG_SERVER = process.env.FAULTS_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const LINKS = 200;
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

describe.each(["pglite", "postgres"] as const)("crash on %s", (driver) => {
  it("kill -9 mid-load: after a restart on the same data, every answered redirect is a stored click counted once, and no click is stored beyond the requests the kill cut off", async () => {
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
      const cut = result.cutOff.get(l.slug) ?? 0;
      const s = tallies.clicks.get(l.id) ?? 0;
      const r = tallies.rollups.get(l.id) ?? 0;
      answered += a;
      stored += s;
      rolled += r;
      if (s < a || s > a + cut || r !== s) wrong.push(`${l.slug}: answered ${a}, cut off ${cut}, stored ${s}, rollups ${r}`);
    }
    console.log(
      `crash ${driver}: answered ${answered}, stored ${stored}, rollups ${rolled}; cut off ${total(result.cutOff)}; spool segments replayed ${replayed}; connection errors ${result.errors}; other statuses ${JSON.stringify([...result.other])}`,
    );
    expect(wrong, "every answered redirect stored once, counted once; no click beyond the requests the kill cut off").toEqual([]);
    expect(stored).toBeGreaterThanOrEqual(answered);
    expect(stored - answered).toBeLessThanOrEqual(total(result.cutOff));
  });
});
