import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../../db/client";
import { links } from "../../../db/schema";
import { newLinkId } from "../../lib/ids";
import { clickTallies, freshPostgresDatabase, redirectLoad, sleep, startInstance, total } from "./instances";

/**
 * PostgreSQL ends every connection of the server's database (a failover, an operator's
 * pg_terminate_backend) ten times, 2 s apart, under counted-visit load on 12 keep-alive
 * connections. The process keeps serving throughout (no driver error may end it), and every
 * redirect it answered is a stored click once it is over. On the machine's PostgreSQL
 * (FAULTS_PG_URL), a database of its own.
 */
const PG_SERVER = process.env.FAULTS_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const TERMINATIONS = 10;
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

describe("PostgreSQL connections terminated under click load", () => {
  it("ten terminations 2 s apart: the process survives and serves, and every answered redirect is stored after", async () => {
    const db = await freshPostgresDatabase(PG_SERVER);
    cleanups.push(db.drop);
    const dbName = new URL(db.url).pathname.slice(1);
    const now = Date.now();
    const made = Array.from({ length: 50 }, (_, i) => ({
      id: newLinkId(),
      workspaceId: "public",
      slug: `term-${i}`,
      url: `https://example.com/t/${i}`,
      createdAt: now,
      updatedAt: now,
    }));
    const setup = await openDatabase({ databaseUrl: db.url, poolSize: 1 });
    await setup.db.insert(links).values(made);
    await setup.close();

    const inst = await startInstance({ DATA_DIR: mkdtempSync(path.join(os.tmpdir(), "faults-term-")), DATABASE_URL: db.url });
    cleanups.push(async () => void (await inst.stop("SIGKILL")));
    const load = redirectLoad(
      () => inst.redirect,
      made.map((l) => l.slug),
      12,
    );
    const { default: postgres } = await import("postgres");
    const admin = postgres(PG_SERVER, { max: 1, onnotice: () => {} });
    cleanups.push(() => admin.end());
    await sleep(1500);
    let terminated = 0;
    for (let i = 0; i < TERMINATIONS; i++) {
      const rows = await admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${dbName} and pid <> pg_backend_pid()`;
      terminated += rows.length;
      await sleep(2000);
      expect(inst.proc.exitCode, `alive after termination ${i + 1}:\n${inst.output.join("").slice(-3000)}`).toBe(null);
    }
    await sleep(1000);
    const result = await load.stop();
    // The API answers again once the database is reachable.
    let api = 0;
    for (let i = 0; i < 20 && api !== 200; i++) {
      api = (await fetch(`${inst.api}/links`)).status;
      if (api !== 200 && api !== 401) await sleep(500);
      else break;
    }
    expect(inst.proc.exitCode, "alive at the end").toBe(null);
    // A graceful stop writes what is still buffered.
    expect(await inst.stop(), inst.output.join("").slice(-3000)).toBe(0);
    const tallies = await clickTallies({ databaseUrl: db.url });
    let answered = 0;
    let stored = 0;
    const lost: string[] = [];
    for (const l of made) {
      const a = result.answered.get(l.slug) ?? 0;
      const s = tallies.clicks.get(l.id) ?? 0;
      answered += a;
      stored += s;
      if (s < a || s > (result.sent.get(l.slug) ?? 0)) lost.push(`${l.slug}: answered ${a}, stored ${s}, sent ${result.sent.get(l.slug)}`);
    }
    const driverErrors = inst.output
      .join("")
      .split("\n")
      .filter((l) => l.includes('"msg":"database driver error"')).length;
    console.log(
      `terminations ${TERMINATIONS} (${terminated} backends): answered ${answered}, stored ${stored}; other statuses ${JSON.stringify([...result.other])}; connection errors ${result.errors}; driver errors survived ${driverErrors}`,
    );
    expect(terminated, "backends were terminated").toBeGreaterThanOrEqual(TERMINATIONS);
    expect(total(result.answered)).toBeGreaterThan(1000);
    expect(result.other.get(500) ?? 0, "no 500 for a redirect").toBe(0);
    expect(lost, "every answered redirect stored, none beyond those sent").toEqual([]);
  });
});
