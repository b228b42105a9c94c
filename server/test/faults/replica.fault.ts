import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "../../../db/client";
import { createUserWithWorkspace, issueToken } from "../../lib/users";
import { freshPostgresDatabase, sleep, startInstance, type Instance } from "./instances";
import { installedMajors, pgBin, replicationRefusal, startPrimary, startReplica, type PgServer } from "./replica";

/**
 * DATABASE_READ_URL (docs/operations.md, Read replica). A real streaming replica (pg_basebackup -R, its own port and data
 * directory) of the machine's cluster, or, when that cluster refuses replication connections (the
 * reason is printed), of a throwaway primary started for the test. The service runs with
 * DATABASE_URL on the primary and DATABASE_READ_URL on the replica; which database answered each
 * routed read is counted in `db_reads_total{target}` on /_/metrics. Pausing the replica's replay
 * makes it stale on purpose, so a read that should go to the primary and did not would miss its row.
 */
const PG_SERVER = process.env.FAULTS_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const REDIS = process.env.FAULTS_REDIS_URL ?? "redis://127.0.0.1:6379";

const servers: PgServer[] = [];
const cleanups: (() => Promise<void> | void)[] = [];
let skip: string | null = null;
let inst: Instance, other: Instance, primaryDb: Database, replicaDb: Database, primary: PgServer | null, replica: PgServer;

const machine = await (async () => {
  const { default: postgres } = await import("postgres");
  const sql = postgres(PG_SERVER, { max: 1, onnotice: () => {} });
  try {
    const [{ v }] = await sql<{ v: number }[]>`select current_setting('server_version_num')::int as v`;
    return { major: Math.floor(v / 10000), refusal: await replicationRefusal(PG_SERVER) };
  } catch (e) {
    return { major: 0, refusal: `no PostgreSQL at ${PG_SERVER}: ${(e as Error).message}` };
  } finally {
    await sql.end();
  }
})();
const bin = machine.major ? pgBin(machine.major) : null;
if (!machine.major) skip = machine.refusal;
else if (!bin)
  skip = `no pg_basebackup/pg_ctl for PostgreSQL ${machine.major} under /usr/lib/postgresql (installed: ${installedMajors().join(", ") || "none"})`;
if (skip) console.warn(`replica.fault.ts skipped: ${skip}`);

beforeAll(async () => {
  if (skip || !bin) return;
  let source = PG_SERVER;
  if (machine.refusal) {
    console.warn(`The machine's cluster cannot feed a replica (${machine.refusal}); using a throwaway primary (initdb) instead.`);
    primary = await startPrimary(bin);
    servers.push(primary);
    source = primary.url;
  }
  // The service's database exists before the base backup, so the replica has it from the start.
  const fresh = await freshPostgresDatabase(source);
  cleanups.push(fresh.drop);
  replica = await startReplica(bin, source);
  servers.push(replica);
  const replicaUrl = new URL(fresh.url);
  replicaUrl.port = String(replica.port);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "faults-replica-"));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = { DATABASE_URL: fresh.url, DATABASE_READ_URL: replicaUrl.href, REDIS_URL: REDIS };
  inst = await startInstance({ ...env, DATA_DIR: dataDir });
  cleanups.push(async () => void (await inst.stop("SIGKILL")));
  // A second instance: a write on one, the next read on the other (marks shared through Redis).
  const otherDir = mkdtempSync(path.join(os.tmpdir(), "faults-replica-"));
  cleanups.push(() => rmSync(otherDir, { recursive: true, force: true }));
  other = await startInstance({ ...env, DATA_DIR: otherDir });
  cleanups.push(async () => void (await other.stop("SIGKILL")));
  primaryDb = await openDatabase({ databaseUrl: fresh.url, migrate: false, poolSize: 2 });
  replicaDb = await openDatabase({ databaseUrl: replicaUrl.href, migrate: false, poolSize: 1 });
  cleanups.push(
    () => primaryDb.close(),
    () => replicaDb.close(),
  );
});
afterAll(async () => {
  for (const c of cleanups.reverse()) await Promise.resolve(c()).catch(() => {});
  for (const s of servers.reverse()) s.remove();
});

/** Routed reads so far, by the database that answered them. */
async function reads(on: Instance): Promise<{ replica: number; primary: number }> {
  const text = await (await fetch(`${on.redirect}/_/metrics`)).text();
  const n = (target: string) => Number(new RegExp(`^db_reads_total\\{target="${target}"\\} (\\d+)`, "m").exec(text)?.[1] ?? 0);
  return { replica: n("replica"), primary: n("primary") };
}

/** Runs `read` and tells which database answered it (exactly one routed read each). */
async function answeredBy<T>(on: Instance, read: () => Promise<T>): Promise<{ value: T; by: "replica" | "primary" }> {
  const before = await reads(on);
  const value = await read();
  const after = await reads(on);
  expect(after.replica + after.primary - before.replica - before.primary, "one routed read").toBe(1);
  return { value, by: after.replica > before.replica ? "replica" : "primary" };
}

async function until(what: string, ok: () => Promise<boolean>, ms = 20_000) {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${inst.output.join("").slice(-2000)}`);
    await sleep(200);
  }
}

const caller = async () => {
  const user = await createUserWithWorkspace(primaryDb.db, { email: `r${randomBytes(5).toString("hex")}@example.com`, plan: "pro" });
  const auth = { authorization: `Bearer ${(await issueToken(primaryDb.db, user.id, "faults")).token}`, "content-type": "application/json" };
  return {
    create: async (url: string) => {
      const res = await fetch(`${inst.api}/links`, { method: "POST", headers: auth, body: JSON.stringify({ url }) });
      expect(res.status).toBe(201);
      return (await res.json()) as { id: string; slug: string };
    },
    list: (on = inst) =>
      answeredBy(on, async () => ((await (await fetch(`${on.api}/links`, { headers: auth })).json()) as { links: { id: string }[] }).links.map((l) => l.id)),
    analytics: () =>
      answeredBy(inst, async () => {
        const res = await fetch(`${inst.api}/analytics`, { headers: auth });
        expect(res.status).toBe(200);
        return ((await res.json()) as { count: number }).count;
      }),
  };
};
const onReplica = (q: string) => replicaDb.db.execute(sql.raw(q));

describe.skipIf(skip !== null)("a streaming read replica (DATABASE_READ_URL)", () => {
  it("analytics and listings are answered by the replica once it has the caller's writes", async () => {
    const me = await caller();
    const link = await me.create("https://example.com/replica");
    const visit = await fetch(`${inst.redirect}/${link.slug}`, { redirect: "manual", headers: { "user-agent": "Mozilla/5.0 Firefox/120.0" } });
    expect(visit.status).toBe(301);
    // The click is written within a second or so; then the replica replays it and the mark is passed.
    await until("analytics from the replica with the click", async () => {
      const r = await me.analytics();
      return r.by === "replica" && r.value === 1;
    });
    const listed = await me.list();
    expect(listed).toEqual({ value: [link.id], by: "replica" });
  });

  it("a read that follows the caller's own write goes to the primary while the replica has not replayed it", async () => {
    const me = await caller();
    const other = await caller();
    await me.create("https://example.com/first");
    await until("the replica caught up", async () => (await me.list()).by === "replica");
    await onReplica("select pg_wal_replay_pause()");
    try {
      const created = await me.create("https://example.com/second");
      const onlyOnPrimary = await onReplica(`select count(*)::int as n from links where id = '${created.id}'`);
      expect((onlyOnPrimary as unknown as { n: number }[])[0].n, "the paused replica lacks the new link").toBe(0);
      const mine = await me.list();
      expect(mine.by).toBe("primary");
      expect(mine.value).toContain(created.id);
      // Another workspace, with no write of its own pending, still reads from the replica.
      expect((await other.list()).by).toBe("replica");
    } finally {
      await onReplica("select pg_wal_replay_resume()");
    }
    await until("the replica replayed the write", async () => (await me.list()).by === "replica");
    expect((await me.list()).value).toHaveLength(2);
  });

  it("a read on another instance that follows the caller's write goes to the primary too (marks shared through Redis)", async () => {
    const me = await caller();
    await me.create("https://example.com/on-a");
    await until("the replica caught up", async () => (await me.list(other)).by === "replica");
    await onReplica("select pg_wal_replay_pause()");
    try {
      const created = await me.create("https://example.com/on-a-again");
      const onB = await me.list(other);
      expect(onB.by).toBe("primary");
      expect(onB.value).toContain(created.id);
    } finally {
      await onReplica("select pg_wal_replay_resume()");
    }
    await until("the replica replayed the write", async () => (await me.list(other)).by === "replica");
  });

  it("the service stays up when the replica stops: reads go to the primary, one log line says so", async () => {
    const me = await caller();
    await me.create("https://example.com/before-stop");
    await until("the replica caught up", async () => (await me.list()).by === "replica");
    replica.stop("fast");
    const analytics = await me.analytics();
    expect(analytics.by).toBe("primary");
    const listed = await me.list();
    expect(listed.by).toBe("primary");
    expect(listed.value).toHaveLength(1);
    expect((await fetch(`${inst.redirect}/_/health`)).status).toBe(200);
    await sleep(1000); // several probes fail: still one line
    const lines = inst.output.join("").split("\n");
    expect(lines.filter((l) => l.includes("read replica unavailable"))).toHaveLength(1);
  });
});
