import { sql } from "drizzle-orm";
import { Redis } from "ioredis";
import { Counter } from "prom-client";
import { openDatabase, withTimeout, type Database, type Db } from "../../db/client";
import { AppError } from "../domain/errors";
import type { Logger } from "../lib/log";
import type { Metrics } from "../lib/metrics";

/**
 * Where analytics and listing reads go (DATABASE_READ_URL): a streaming replica, except
 *
 * - while the replica is down or not yet probed: the primary, at once (one log line per change);
 * - for a workspace whose own write the replica has not replayed yet: the primary.
 *
 * Read-your-writes by WAL position, not a sticky time window: a window is either long (most reads
 * go to the primary after any write) or wrong when the replica lags longer than it (a paused or
 * busy replica lags minutes). So a write marks its workspace `pending` before it runs and, once it
 * has answered, records the primary's `pg_current_wal_lsn()` (at or past its commit); a read of
 * that workspace goes to the primary while a write is pending or the replica's
 * `pg_last_wal_replay_lsn()` (probed every PROBE_MS, so only ever older: a stale figure errs
 * towards the primary) is behind the mark. Marks live in memory and, with REDIS_URL, in Redis, so
 * a write on one instance is seen by the next read on another. Every mark expires after MARK_TTL_MS
 * (a write whose end was never reported, a crashed instance); a Redis that fails sends the read to
 * the primary.
 */
export type ReadRouting = {
  /** True when DATABASE_READ_URL is set. */
  readonly hasReplica: boolean;
  /** Runs a read for `workspaceId` on the replica or the primary; a replica error retries it on the primary. */
  run<T>(workspaceId: string | null, read: (db: Db) => Promise<T>): Promise<T>;
  /** Marks a write by `workspaceId` as pending; call the returned function once it has answered. */
  writeStarted(workspaceId: string): Promise<() => void>;
  close(): Promise<void>;
};

export const PROBE_MS = 250;
export const MARK_TTL_MS = 60_000;
const REDIS_TIMEOUT_MS = 300;

// pending -= 1 (never below 0), lsn = max(lsn, ARGV[1]), expiry renewed.
const FINISH_LUA = `
local p = tonumber(redis.call('HGET', KEYS[1], 'pending') or '0')
if p > 0 then redis.call('HINCRBY', KEYS[1], 'pending', -1) end
local l = tonumber(redis.call('HGET', KEYS[1], 'lsn') or '-1')
if tonumber(ARGV[1]) > l then redis.call('HSET', KEYS[1], 'lsn', ARGV[1]) end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

type Mark = { pending: number; lsn: number; until: number };
type LsnRow = { lsn: string | null };

const firstRow = (r: unknown) => ((r as { rows?: LsnRow[] }).rows ?? (r as LsnRow[]))[0];

export async function createReadRouting(opts: {
  primary: Database;
  replicaUrl?: string;
  redisUrl?: string;
  log: Logger;
  metrics: Metrics;
}): Promise<ReadRouting> {
  const { primary, log } = opts;
  const reads = new Counter({
    name: "db_reads_total",
    help: "Analytics and listing reads by the database that answered them",
    labelNames: ["target"],
    registers: [opts.metrics.registry],
  });
  const onPrimary = <T>(read: (db: Db) => Promise<T>) => (reads.inc({ target: "primary" }), read(primary.db));
  if (!opts.replicaUrl) {
    return { hasReplica: false, run: (_w, read) => onPrimary(read), writeStarted: async () => () => {}, close: async () => {} };
  }

  const replica = await openDatabase({ databaseUrl: opts.replicaUrl, migrate: false, poolSize: 5 });
  const redis = opts.redisUrl
    ? new Redis(opts.redisUrl, {
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
        commandTimeout: REDIS_TIMEOUT_MS,
        socketTimeout: REDIS_TIMEOUT_MS,
        connectTimeout: 1000,
      })
    : undefined;
  redis?.on("error", () => {}); // a failing Redis sends reads to the primary (see needsPrimary)
  const key = (ws: string) => `ryw:${ws}`;
  const marks = new Map<string, Mark>();

  // The replica's replay position; -1 while it is down or not yet probed.
  let replayed = -1;
  let up: boolean | undefined; // undefined: not probed yet, so the first state is logged too
  const setUp = (now: boolean, err?: unknown) => {
    if (now === up) return;
    up = now;
    if (now) log.info("read replica up: analytics and listings read from it");
    else log.warn({ err }, "read replica unavailable: analytics and listings read from the primary");
  };
  let probing: Promise<void> | undefined;
  const probe = () =>
    (probing ??= (async () => {
      try {
        const row = firstRow(await withTimeout(replica.db.execute(sql`select pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0')::text as lsn`), 1000));
        // Null: not in recovery (a primary named as its own replica), so it has everything.
        replayed = row?.lsn == null ? Infinity : Number(row.lsn);
        setUp(true);
      } catch (e) {
        replayed = -1;
        setUp(false, e);
      } finally {
        probing = undefined;
      }
    })());
  await probe();
  const timer = setInterval(() => void probe(), PROBE_MS);
  timer.unref();

  const localMark = (ws: string) => {
    const now = Date.now();
    let m = marks.get(ws);
    if (!m || m.until < now) marks.set(ws, (m = { pending: 0, lsn: -1, until: 0 }));
    m.until = now + MARK_TTL_MS;
    return m;
  };
  const behind = (pending: number, lsn: number) => pending > 0 || lsn > replayed;

  async function needsPrimary(ws: string): Promise<boolean> {
    if (!up) return true;
    const m = marks.get(ws);
    if (m && m.until >= Date.now() && behind(m.pending, m.lsn)) return true;
    if (!redis) return false;
    try {
      const [pending, lsn] = await redis.hmget(key(ws), "pending", "lsn");
      return behind(Number(pending ?? 0), Number(lsn ?? -1));
    } catch {
      return true; // another instance's write may be unseen
    }
  }

  return {
    hasReplica: true,
    async run(ws, read) {
      if (ws === null || (await needsPrimary(ws))) return onPrimary(read);
      try {
        const result = await read(replica.db);
        reads.inc({ target: "replica" });
        return result;
      } catch (e) {
        if (e instanceof AppError) throw e; // the answer, not a failure of the replica
        replayed = -1;
        setUp(false, e);
        return onPrimary(read);
      }
    },
    async writeStarted(ws) {
      localMark(ws).pending++;
      try {
        await redis?.multi().hincrby(key(ws), "pending", 1).pexpire(key(ws), MARK_TTL_MS).exec();
      } catch (e) {
        log.warn({ err: e }, "read-your-writes mark not shared (Redis)");
      }
      let finished = false;
      return () => {
        if (finished) return;
        finished = true;
        void (async () => {
          // Without the position the mark stays pending until it expires: reads stay on the primary.
          const row = firstRow(await primary.db.execute(sql`select pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text as lsn`));
          const lsn = Number(row?.lsn ?? -1);
          const m = localMark(ws);
          m.pending = Math.max(0, m.pending - 1);
          m.lsn = Math.max(m.lsn, lsn);
          await redis?.eval(FINISH_LUA, 1, key(ws), String(lsn), String(MARK_TTL_MS));
        })().catch((e) => log.warn({ err: e }, "read-your-writes mark not finished"));
      };
    },
    async close() {
      clearInterval(timer);
      await probing;
      redis?.disconnect();
      await replica.close();
    },
  };
}
