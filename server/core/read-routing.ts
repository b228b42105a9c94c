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
  const reads = new Counter({
    name: "db_reads_total",
    help: "Analytics and listing reads by the database that answered them",
    labelNames: ["target"],
    registers: [opts.metrics.registry],
  });
  const onPrimary = <T>(read: (db: Db) => Promise<T>) => (reads.inc({ target: "primary" }), read(opts.primary.db));
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
  const routing = new ReplicaRouting(opts.primary, replica, redis, opts.log, reads, onPrimary);
  await routing.start();
  return routing;
}

/** Read routing with a replica: its replay position, the workspaces' write marks, and where each read goes. */
class ReplicaRouting implements ReadRouting {
  readonly hasReplica = true;
  private readonly marks = new Map<string, Mark>();
  /** The replica's replay position; -1 while it is down or not yet probed. */
  private replayed = -1;
  /** Undefined: not probed yet, so the first state is logged too. */
  private up: boolean | undefined;
  private probing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly primary: Database,
    private readonly replica: Database,
    private readonly redis: Redis | undefined,
    private readonly log: Logger,
    private readonly reads: Counter<"target">,
    private readonly onPrimary: <T>(read: (db: Db) => Promise<T>) => Promise<T>,
  ) {}

  async start(): Promise<void> {
    await this.probe();
    this.timer = setInterval(() => void this.probe(), PROBE_MS);
    this.timer.unref();
  }

  async run<T>(ws: string | null, read: (db: Db) => Promise<T>): Promise<T> {
    if (ws === null || (await this.needsPrimary(ws))) return this.onPrimary(read);
    try {
      const result = await read(this.replica.db);
      this.reads.inc({ target: "replica" });
      return result;
    } catch (e) {
      if (e instanceof AppError) throw e; // the answer, not a failure of the replica
      this.replayed = -1;
      this.setUp(false, e);
      return this.onPrimary(read);
    }
  }

  async writeStarted(ws: string): Promise<() => void> {
    this.localMark(ws).pending++;
    try {
      await this.redis?.multi().hincrby(key(ws), "pending", 1).pexpire(key(ws), MARK_TTL_MS).exec();
    } catch (e) {
      this.log.warn({ err: e }, "read-your-writes mark not shared (Redis)");
    }
    let finished = false;
    return () => {
      if (finished) return;
      finished = true;
      this.finishWrite(ws).catch((e) => this.log.warn({ err: e }, "read-your-writes mark not finished"));
    };
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.probing;
    this.redis?.disconnect();
    await this.replica.close();
  }

  /** Records the primary's position once a write answered. Without it the mark stays pending until it expires: reads stay on the primary. */
  private async finishWrite(ws: string): Promise<void> {
    const row = firstRow(await this.primary.db.execute(sql`select pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text as lsn`));
    const lsn = Number(row?.lsn ?? -1);
    const m = this.localMark(ws);
    m.pending = Math.max(0, m.pending - 1);
    m.lsn = Math.max(m.lsn, lsn);
    await this.redis?.eval(FINISH_LUA, 1, key(ws), String(lsn), String(MARK_TTL_MS));
  }

  private probe(): Promise<void> {
    return (this.probing ??= (async () => {
      try {
        const row = firstRow(await withTimeout(this.replica.db.execute(sql`select pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0')::text as lsn`), 1000));
        // Null: not in recovery (a primary named as its own replica), so it has everything.
        this.replayed = row?.lsn == null ? Infinity : Number(row.lsn);
        this.setUp(true);
      } catch (e) {
        this.replayed = -1;
        this.setUp(false, e);
      } finally {
        this.probing = undefined;
      }
    })());
  }

  /** One log line per change of the replica's state. */
  private setUp(now: boolean, err?: unknown): void {
    if (now === this.up) return;
    this.up = now;
    if (now) this.log.info("read replica up: analytics and listings read from it");
    else this.log.warn({ err }, "read replica unavailable: analytics and listings read from the primary");
  }

  private localMark(ws: string): Mark {
    const now = Date.now();
    let m = this.marks.get(ws);
    if (!m || m.until < now) this.marks.set(ws, (m = { pending: 0, lsn: -1, until: 0 }));
    m.until = now + MARK_TTL_MS;
    return m;
  }

  private behind(pending: number, lsn: number): boolean {
    return pending > 0 || lsn > this.replayed;
  }

  private async needsPrimary(ws: string): Promise<boolean> {
    if (!this.up) return true;
    const m = this.marks.get(ws);
    if (m && m.until >= Date.now() && this.behind(m.pending, m.lsn)) return true;
    if (!this.redis) return false;
    try {
      const [pending, lsn] = await this.redis.hmget(key(ws), "pending", "lsn");
      return this.behind(Number(pending ?? 0), Number(lsn ?? -1));
    } catch {
      return true; // another instance's write may be unseen
    }
  }
}

const key = (ws: string) => `ryw:${ws}`;
