import { mkdirSync } from "node:fs";
import net from "node:net";
import { fileURLToPath } from "node:url";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import type { Options, PendingQuery, Row } from "postgres";
import * as schema from "./schema";
import type { RemotePglite } from "./pglite-remote";

export type Schema = typeof schema;
/** One type for both drivers: select, insert, returning and transactions run on both. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
/** A transaction handle, usable wherever `Db` is (drizzle's tx has the same query API). */
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];
export type DbOrTx = Db | Tx;

// "../db/": this module also runs bundled into build/server.mjs, one folder below the root as db/ is.
export const migrationsFolder = fileURLToPath(new URL("../db/migrations", import.meta.url));

export type Database = {
  db: Db;
  /**
   * `db` on connections whose prepared statements are planned once, for their first values: only for
   * a hot statement whose best plan is the same whatever its values (every value a key or a row to
   * write). On `db` each execution is planned for its values, which for a statement of several parts
   * costs PostgreSQL more than running it. The embedded database: `db` itself.
   */
  plannedOnce: Db;
  driver: "pglite" | "postgres";
  /**
   * Subscribe to a NOTIFY channel (cache invalidation across instances). `onListen` runs on every
   * (re)subscription: what was sent while the connection was down is lost.
   */
  listen(channel: string, onMessage: (payload: string) => void, onListen?: () => void): Promise<void>;
  notify(channel: string, payload: string): Promise<void>;
  /**
   * In one transaction: COPY `csv` (CSV without a header) into `table (columns)`, then run `then`.
   * COPY has no ON CONFLICT: a duplicate key fails the whole transaction (nothing is stored) with
   * the database's error. Identifiers are the caller's constants, never input.
   */
  copyThen(table: string, columns: readonly string[], csv: string, then: { text: string; params: unknown[] }): Promise<void>;
  /** Cheap liveness probe. */
  ping(): Promise<void>;
  close(): Promise<void>;
  /** The embedded database's client (db/pglite-remote.ts) when embedded, else undefined. */
  pglite?: RemotePglite;
  url?: string;
};

export type OpenOptions = {
  databaseUrl?: string;
  /** PGlite data directory; `memory://` for an in-memory database. */
  pgliteDir?: string;
  /** PGlite data dump (tarball) to start from, for fast test databases. */
  pgliteLoadDataDir?: Blob;
  /**
   * Migrated data directory a new `pgliteDir` is copied from (db/pglite-template.mjs); by default
   * the one `npm run build` leaves in build/, if any; `null` makes the database from scratch.
   */
  pgliteTemplate?: string | null;
  migrate?: boolean;
  poolSize?: number;
  /**
   * PostgreSQL: seconds a connection may wait for any answer to a query sent before it is taken as
   * lost (its queries fail as on a closed connection: 503). Default REPLY_SILENCE_SECONDS.
   */
  replySilenceSeconds?: number;
};

/**
 * How long a query may go without a byte from PostgreSQL before its connection is dropped: a peer
 * that stopped answering without closing (a network partition, a stalled proxy) would otherwise
 * hold requests until the kernel gives up on the socket, minutes later. Nothing the service sends on
 * its pool runs this long on a healthy server (migrations have a connection of their own), and a
 * COPY's rows or a long result stream keep the wait from running out.
 */
export const REPLY_SILENCE_SECONDS = 15;

export async function openDatabase(opts: OpenOptions): Promise<Database> {
  const database = opts.databaseUrl
    ? await openPostgres(opts.databaseUrl, opts.poolSize ?? 10, opts.replySilenceSeconds ?? REPLY_SILENCE_SECONDS)
    : await openPglite(opts);
  if (opts.migrate !== false) await migrate(database);
  return database;
}

// Links are created on two connections whatever the main pool's size: concurrent creates then queue on
// them and postgres.js sends the queued statements in one write and reads their answers together, and
// PostgreSQL runs them back to back in two backends instead of waking ten, which contend for the same
// slug blocks. Measured on POST /links at 10 clients: 2 connections 738-754 req/s and 0.71-0.75 ms of
// PostgreSQL CPU per link, 4: 645-677 and 0.81-0.84, 10: 567-611 and 0.94-1.09. One connection spent
// less (0.55 ms) but commits one at a time, so each link would also wait out the previous one's WAL flush.
const CREATE_POOL_SIZE = 2;

async function openPostgres(url: string, max: number, replySilence: number): Promise<Database> {
  const { default: postgres } = await import("postgres");
  const { drizzle } = await import("drizzle-orm/postgres-js");
  const pool = (planCacheMode: "force_custom_plan" | "force_generic_plan", size: number) =>
    postgres(url, {
      max: size,
      onnotice: () => {},
      // Fail fast when the database is away: callers answer 503 instead of hanging.
      connect_timeout: 3,
      // postgres.js waits up to 20 s between reconnects by default, and queued queries wait with it;
      // at most 1 s keeps an outage's 503s quick and the return noticed at once.
      backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
      connection: { plan_cache_mode: planCacheMode },
      // The reply wait is read by the mended postgres.js (scripts/patch-postgres.mjs) off the factory.
      socket: Object.assign(noDelaySocket(), { replySilence }),
    } as Options<Record<string, never>>);
  // Prepared statements (see preparing) keep being planned for their values, as unprepared ones are:
  // a generic plan made an earlier slug pick five times slower (bench: 2 → 9.6 ms of PostgreSQL per
  // POST /links). The second pool, for `plannedOnce`, opens its connections only when used.
  const sql = pool("force_custom_plan", max);
  const onceSql = pool("force_generic_plan", Math.min(max, CREATE_POOL_SIZE));
  const db = drizzle(preparing(sql), { schema }) as unknown as Db;
  return {
    db,
    plannedOnce: drizzle(preparing(onceSql), { schema }) as unknown as Db,
    driver: "postgres",
    url,
    async listen(channel, onMessage, onListen) {
      await sql.listen(channel, (payload) => onMessage(payload), onListen);
    },
    async notify(channel, payload) {
      await sql.notify(channel, payload);
    },
    async copyThen(table, columns, csv, then) {
      await sql.begin(async (tx) => {
        await copyIn(tx.unsafe(`copy ${table} (${columns.join(", ")}) from stdin with (format csv)`), csv);
        await tx.unsafe(then.text, then.params as never[]);
      });
    },
    async ping() {
      await withTimeout(sql`select 1`, 1500);
    },
    async close() {
      await Promise.all([sql.end({ timeout: 5 }), onceSql.end({ timeout: 5 })]);
    },
  };
}

/**
 * Sends `data` to a `COPY … FROM STDIN` query and waits until PostgreSQL stored it, or failed it.
 * postgres.js 3.4 resolves the query with the stream as soon as the COPY starts, so when PostgreSQL
 * then refuses the data (a duplicate key) its error goes to the query's reject, which no longer
 * settles anything, and the stream's end never comes: the caller waited for ever. The error is
 * taken from that reject instead (db/copy.test.ts checks it on a real server).
 */
async function copyIn(query: PendingQuery<Row[]>, data: string): Promise<void> {
  const q = query as unknown as { reject: (e: unknown) => void };
  let failed!: (e: unknown) => void;
  const refused = new Promise<never>((_, reject) => (failed = reject));
  // A query failing before its COPY starts rejects `writable()` below, and this promise too, which
  // nothing would await then: an unhandled rejection, which ends the process.
  refused.catch(() => {});
  const reject = q.reject;
  q.reject = (e) => {
    failed(e);
    reject(e);
  };
  const stream = await query.writable();
  // A connection lost mid-COPY destroys the stream with its error, which reaches us through end's
  // callback and the query's reject; unlistened, the stream's error event would end the process.
  stream.on("error", () => {});
  await Promise.race([new Promise<void>((resolve, reject) => stream.end(data, (e?: Error | null) => (e ? reject(e) : resolve()))), refused]);
}

/**
 * postgres.js's sockets with Nagle's algorithm off. postgres.js leaves it on, which costs nothing for
 * a query (written whole) but stalled every COPY: its last message, 5 bytes written after the data,
 * waited for the server's delayed acknowledgement, about 40 ms, so a batch of clicks took 85 ms
 * whatever its size (1 ms with this). postgres.js still does everything else with the socket: it is
 * returned before it connects, writes wait for the connection, errors reach postgres.js as before.
 */
function noDelaySocket() {
  let next = 0;
  return (o: { host: string[]; port: number[]; path?: string | false }) => {
    const socket = new net.Socket();
    socket.setNoDelay(true);
    if (o.path) socket.connect(o.path);
    else {
      // Several hosts in the URL: the next one at each (re)connection, as postgres.js rotates them.
      const i = next++ % o.host.length;
      socket.connect(o.port[i], o.host[i]);
    }
    return socket;
  };
}

/** Queries with more parameters than this (bulk inserts, long id lists) are not kept prepared. */
const MAX_PREPARED_PARAMS = 64;

/**
 * The postgres.js client drizzle gets, with its queries prepared. drizzle prepares only queries it
 * is given a name for; postgres.js sends any other query that has parameters in two round trips (it
 * asks PostgreSQL for the parameter types first) and PostgreSQL parses it anew each time. Prepared,
 * a statement is parsed and described once per connection and then runs in one round trip. Bulk
 * statements stay unprepared so the per-connection statement cache stays small.
 */
function preparing<T extends object>(client: T): T {
  type Unsafe = (query: string, params?: unknown[], options?: { prepare?: boolean }) => unknown;
  type Scoped = (...args: unknown[]) => unknown;
  // begin and savepoint hand their callback a client of their own: it prepares too.
  const scoped =
    (method: Scoped) =>
    (...args: unknown[]) => {
      const fn = args[args.length - 1] as (c: object) => unknown;
      return method(...args.slice(0, -1), (c: object) => fn(preparing(c)));
    };
  return new Proxy(client, {
    get(target, prop) {
      const value = Reflect.get(target, prop) as unknown;
      if (typeof value !== "function") return value;
      if (prop === "unsafe")
        return (query: string, params?: unknown[], options?: { prepare?: boolean }) =>
          (value as Unsafe).call(target, query, params, params?.length && params.length <= MAX_PREPARED_PARAMS ? { ...options, prepare: true } : options);
      if (prop === "begin" || prop === "savepoint") return scoped((value as Scoped).bind(target));
      return (value as Scoped).bind(target);
    },
  });
}

async function openPglite(opts: OpenOptions): Promise<Database> {
  const { drizzle } = await import("drizzle-orm/pglite");
  const dir = opts.pgliteDir ?? "memory://";
  if (!dir.startsWith("memory://")) {
    if (opts.pgliteLoadDataDir) mkdirSync(dir, { recursive: true });
    else {
      // A new data directory is a copy of the migrated template, made whole before it is used.
      const { findTemplate, prepareDataDir } = await import("./pglite-template.mjs");
      // Asked not to migrate (the CLI's db:migrate reports what it applies), a new database starts
      // empty unless a template is named.
      const template =
        typeof opts.pgliteTemplate === "string" ? opts.pgliteTemplate : opts.pgliteTemplate === null || opts.migrate === false ? undefined : findTemplate();
      await prepareDataDir(dir, template, { empty: opts.migrate === false });
    }
  }
  const { RemotePglite } = await import("./pglite-remote");
  const client = await RemotePglite.create(dir, opts.pgliteLoadDataDir);
  // drizzle's PGlite driver calls only query and transaction, which RemotePglite answers alike.
  const db = drizzle(client as never, { schema }) as unknown as Db;
  return {
    db,
    plannedOnce: db,
    driver: "pglite",
    pglite: client,
    listen: (channel, onMessage) => client.listen(channel, onMessage),
    async notify(channel, payload) {
      await client.query("select pg_notify($1, $2)", [channel, payload]);
    },
    copyThen: (table, columns, csv, then) => client.copyThen(table, columns, csv, then),
    async ping() {
      await client.query("select 1");
    },
    close: () => client.close(),
  };
}

export async function migrate(database: Database): Promise<void> {
  if (database.driver === "postgres") {
    const { default: postgres } = await import("postgres");
    const { drizzle } = await import("drizzle-orm/postgres-js");
    const { migrate: run } = await import("drizzle-orm/postgres-js/migrator");
    // One connection holding an advisory lock: instances starting together migrate once.
    const sql = postgres(database.url!, { max: 1, onnotice: () => {} });
    try {
      await sql`select pg_advisory_lock(727274)`;
      await run(drizzle(sql), { migrationsFolder });
    } finally {
      await sql.end({ timeout: 5 });
    }
  } else {
    const { migrate: run } = await import("drizzle-orm/pglite/migrator");
    await run(database.db as never, { migrationsFolder });
  }
}

/** Rejects after `ms` (health checks must answer even when the database hangs). */
export function withTimeout<T>(p: PromiseLike<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(Object.assign(new Error("database timeout"), { code: "ETIMEDOUT" })), ms);
    Promise.resolve(p).then(
      (v) => (clearTimeout(timer), resolve(v)),
      (e) => (clearTimeout(timer), reject(e)),
    );
  });
}
