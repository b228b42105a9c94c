import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import type { EdgeInfo, Place } from "../lib/edge";
import { clickTs } from "../lib/ids";
import { parseUserAgent } from "../lib/user-agent";
import type { Database, Db } from "../../db/client";
import type { Config } from "../config";
import { isDatabaseUnavailable } from "../domain/errors";
import type { Logger } from "../lib/log";
import type { Metrics } from "../lib/metrics";
import { isPublicIp, lookupGeo, NO_GEO, type GeoInfo } from "../lib/geo";
import { VisitorKeys } from "./visitor-keys";
import { ClickSpool, type Segment } from "./click-spool";

export type Rule = "ios" | "android" | "geo" | "url" | "expiration_url" | "expired_404";

/** A counted visit, as stored (ClickEvent plus `rule`). */
export type ClickRecord = Place & {
  linkId: string;
  workspaceId: string;
  ts: string;
  timestamp: number;
  device: "mobile" | "tablet" | "smarttv" | "desktop";
  platform: string | null;
  browser: string | null;
  referer: string | null;
  rule: Rule;
  /** Unique-visitor key of the click's day (see visitor-keys.ts); null when unknown. */
  visitor?: string | null;
};

/**
 * A counted visit as the request path knows it: raw facts only. User-Agent details and the
 * GeoIP lookup are worked out by the batch writer, off the request path.
 */
export type Visit = {
  linkId: string;
  workspaceId: string;
  timestamp: number;
  userAgent: string;
  ip: string;
  referer: string | null;
  rule: Rule;
  /** The trusted edge network's viewer facts; null with EDGE_HEADERS=none. */
  edge: EdgeInfo | null;
  /** Already looked up on the request path (a geo-targeted link needed the country). */
  geo?: GeoInfo;
};

export type ClickRecorder = {
  record(click: ClickRecord): void;
  /** Counts a visit; parsing and GeoIP happen in the batch writer. */
  recordVisit(visit: Visit): void;
  /**
   * Runs `fn` once the visits recorded so far are in the write-ahead spool (written together at
   * the end of the event-loop turn): the redirect host answers then. At once without a spool.
   */
  afterSpooled(fn: () => void): void;
  /** Writes everything buffered; resolves when stored. */
  flush(): Promise<void>;
  close(): Promise<void>;
  /** Clicks not yet stored: in memory, being written, or spilled to disk. */
  readonly buffered: number;
  /**
   * Whether a click recorded now survives a crash: false while the write-ahead spool cannot be
   * written (a full disk), was asked for and could not be opened, or spilling the buffer fails.
   */
  readonly durable: boolean;
};

/** `seg`: the write-ahead spool segment holding it (never serialized: it is this process's). */
type Pending = ({ kind: "click"; click: ClickRecord } | { kind: "visit"; visit: Visit; ts?: string }) & { seg?: Segment | null };

export type RecorderOptions = {
  /** Longest a click waits in memory before it is written. */
  intervalMs?: number;
  /** Clicks per statement (five times as many while catching up); a full batch is written at once. */
  batchSize?: number;
  /**
   * Memory bound: past this many waiting clicks (the database is away), the waiting ones spill
   * to `DATA_DIR/click-spool` and are read back, a file at a time, once writes succeed again.
   */
  maxBuffered?: number;
  /**
   * The write-ahead spool (`DATA_DIR/click-wal`, see click-spool.ts): each click is appended
   * before its answer, so a crash loses none. On by default; `false` for the in-memory buffer only.
   */
  spool?: boolean | { fsyncMs?: number; segmentRecords?: number; segmentMs?: number; staleMs?: number };
};

/** Whether turning this visit into a click needs a GeoIP lookup (the only async part). */
const needsGeoLookup = (v: Visit, edgeMode: "none" | "cloudfront" | "cloudflare") => !v.geo && edgeMode === "none" && isPublicIp(v.ip);

/** Turns a visit into a stored click: device, platform, browser and location. */
export async function enrichVisit(v: Visit, edgeMode: "none" | "cloudfront" | "cloudflare", ts = clickTs(v.timestamp)): Promise<ClickRecord> {
  return enrichWith(v, needsGeoLookup(v, edgeMode) ? await lookupGeo(v.ip) : (v.geo ?? NO_GEO), ts);
}

/** `enrichVisit` once the location is known (synchronous: most visits need no lookup). */
function enrichWith(v: Visit, geo: GeoInfo, ts: string): ClickRecord {
  const agent = parseUserAgent(v.userAgent);
  const edge = v.edge;
  const place: GeoInfo = edge && (edge.country || edge.region || edge.timezone || edge.lat !== null) ? edge : geo;
  // The edge knows iPadOS that reports a Mac user agent (decisions §4).
  const platform = edge?.os === "ios" && agent.os !== "ios" ? "iOS" : edge?.os === "android" && agent.os !== "android" ? "Android" : agent.platform;
  return {
    linkId: v.linkId,
    workspaceId: v.workspaceId,
    ts,
    timestamp: v.timestamp,
    country: place.country,
    region: place.region,
    regionName: place.regionName,
    city: place.city,
    timezone: place.timezone,
    lat: place.lat,
    lng: place.lng,
    device: edge?.device ?? agent.device,
    platform,
    browser: agent.browser,
    referer: v.referer,
    rule: v.rule,
  };
}

/** The batch as stored clicks; GeoIP lookups (memoised per address) only where needed. */
async function enrichBatch(batch: Pending[], edgeMode: "none" | "cloudfront" | "cloudflare"): Promise<ClickRecord[]> {
  const rows: ClickRecord[] = new Array(batch.length);
  const lookups: Promise<void>[] = [];
  for (let i = 0; i < batch.length; i++) {
    const p = batch[i];
    if (p.kind === "click") rows[i] = p.click;
    else if (needsGeoLookup(p.visit, edgeMode))
      lookups.push(lookupGeo(p.visit.ip).then((g) => void (rows[i] = enrichWith(p.visit, g, p.ts ?? clickTs(p.visit.timestamp)))));
    else rows[i] = enrichWith(p.visit, p.visit.geo ?? NO_GEO, p.ts ?? clickTs(p.visit.timestamp));
  }
  if (lookups.length) await Promise.all(lookups);
  return rows;
}

/** Gives each visit of the batch its visitor key (a spooled or retried visit gets the same key within its day). */
async function assignVisitorKeys(keys: VisitorKeys, batch: Pending[], rows: ClickRecord[]): Promise<void> {
  const keyOf = await keys.keyerFor(batch.map((p) => (p.kind === "visit" ? p.visit.timestamp : 0)).filter(Boolean));
  for (let i = 0; i < batch.length; i++) {
    const p = batch[i];
    if (p.kind === "visit") rows[i].visitor = keyOf(p.visit.timestamp, p.visit.ip, p.visit.userAgent);
  }
}

/** A click as a row of `clicks`, keyed by column name (for json_populate_recordset). */
const toRow = (c: ClickRecord) => ({
  link_id: c.linkId,
  ts: c.ts,
  workspace_id: c.workspaceId,
  timestamp: c.timestamp,
  country: c.country,
  region: c.region,
  region_name: c.regionName,
  city: c.city,
  timezone: c.timezone,
  lat: c.lat,
  lng: c.lng,
  device: c.device,
  platform: c.platform,
  browser: c.browser,
  referer: c.referer,
  rule: c.rule,
  visitor: c.visitor ?? null,
});

/** Gives a visit its `ts` once, so a retried or re-read write inserts the same key (no duplicates). */
const fixTs = (p: Pending): Pending => {
  if (p.kind === "visit" && !p.ts) p.ts = clickTs(p.visit.timestamp);
  return p;
};

/** A spill file; `segs`: the spool segments its clicks are in (none for a file of an earlier run). */
type Spilled = { file: string; count: number; segs?: Map<Segment, number> };

/** A pending click as a spool line or spill file entry: without its (in-process) segment. */
const serializable = (p: Pending) => (p.kind === "visit" ? { kind: p.kind, visit: p.visit, ts: p.ts } : { kind: p.kind, click: p.click });

/** How many clicks of each spool segment a batch holds. */
function segmentsOf(batch: Pending[]): Map<Segment, number> {
  const m = new Map<Segment, number>();
  for (const p of batch) if (p.seg) m.set(p.seg, (m.get(p.seg) ?? 0) + 1);
  return m;
}

/**
 * What a log line may say about a failed database or file write: the driver's code and message.
 * Drizzle's own error repeats the query and every parameter (a click batch: addresses, user
 * agents, referers), so its message and fields are never logged.
 */
export function logSafeError(e: unknown): { code?: string; error: string } {
  let cur = e;
  for (let i = 0; i < 5 && cur instanceof Error && cur.cause !== undefined; i++) cur = cur.cause;
  const c = cur as { code?: unknown; message?: unknown; params?: unknown } | null;
  const code = typeof c?.code === "string" ? c.code : undefined;
  const message = c && typeof c === "object" && !("params" in c) && typeof c.message === "string" ? c.message.slice(0, 200) : "query failed";
  return code ? { code, error: message } : { error: message };
}

/** What the recorder needs of the app (the services container provides it). */
export type RecorderDeps = {
  config: Pick<Config, "clickBufferMax" | "dataDir" | "edgeHeaders">;
  db: Db;
  database: Pick<Database, "copyThen">;
  log: Logger;
  metrics: Metrics;
};

/**
 * One statement per batch. One JSON parameter: building a 16-column multi-row insert through the
 * query builder costs more CPU than the insert itself, and this runs in the redirect process.
 * Rollups count what the insert returns, i.e. only clicks not already stored, so a retried batch
 * is neither lost nor counted twice.
 */
async function insertClicks(db: Db, rows: ClickRecord[]): Promise<void> {
  await db.execute(sql`
    with ins as (
      insert into clicks select * from json_populate_recordset(null::clicks, ${JSON.stringify(rows.map(toRow))}::json)
      on conflict do nothing returning link_id, "timestamp"
    )
    insert into click_rollups (link_id, hour, count)
    select link_id, ("timestamp" / 3600000) * 3600000, count(*)::int from ins group by 1, 2
    on conflict (link_id, hour) do update set count = click_rollups.count + excluded.count`);
}

const CLICK_COLUMNS = [
  "link_id",
  "ts",
  "workspace_id",
  "timestamp",
  "country",
  "region",
  "region_name",
  "city",
  "timezone",
  "lat",
  "lng",
  "device",
  "platform",
  "browser",
  "referer",
  "rule",
  "visitor",
] as const;

/** A CSV field: NULL is an empty unquoted field, every string is quoted (an empty string stays one). */
const csvField = (v: string | number | null | undefined) =>
  v === null || v === undefined ? "" : typeof v === "number" ? String(v) : `"${v.replaceAll('"', '""')}"`;

/**
 * The batch by COPY, and its hourly counts summed here and added in the same transaction: less than
 * half the database's work per click of `insertClicks` (PGlite: 7 µs instead of 18 µs a click;
 * PostgreSQL: a burst is stored at 86,000 instead of 70,000 clicks a second; README Performance).
 * COPY has no ON CONFLICT, so a batch holding a click already stored (a retry after an unknown
 * outcome, a crashed run's spool replayed) fails whole and goes through insertClicks.
 */
async function copyClicks(database: Pick<Database, "copyThen">, rows: ClickRecord[]): Promise<void> {
  const lines = new Array<string>(rows.length);
  const hours = new Map<string, { link_id: string; hour: number; count: number }>();
  for (let i = 0; i < rows.length; i++) {
    const r = toRow(rows[i]);
    lines[i] = CLICK_COLUMNS.map((c) => csvField(r[c])).join(",");
    const hour = Math.floor(r.timestamp / 3_600_000) * 3_600_000;
    const key = `${r.link_id} ${hour}`;
    const h = hours.get(key);
    if (h) h.count++;
    else hours.set(key, { link_id: r.link_id, hour, count: 1 });
  }
  await database.copyThen("clicks", CLICK_COLUMNS, lines.join("\n"), {
    text: `insert into click_rollups (link_id, hour, count)
      select link_id, hour, count from json_populate_recordset(null::click_rollups, $1::json)
      on conflict (link_id, hour) do update set count = click_rollups.count + excluded.count`,
    params: [JSON.stringify([...hours.values()])],
  });
}

/**
 * Stores a batch exactly once: by COPY, and by the idempotent insert when the COPY fails (a click of
 * it already stored). If the database is away, it fails and the batch waits.
 */
async function storeClicks(app: RecorderDeps, rows: ClickRecord[]): Promise<void> {
  try {
    return await copyClicks(app.database, rows);
  } catch (e) {
    // The database away: the insert would fail too, a second connection attempt for nothing.
    if (isDatabaseUnavailable(e)) throw e;
    // Otherwise below: stored once whatever part of the batch is already there.
  }
  await insertClicks(app.db, rows);
}

/** Spill files left by an earlier run, oldest first (none when there is no spool directory). */
function readSpool(spoolDir: string): Spilled[] {
  let names: string[];
  try {
    names = readdirSync(spoolDir).sort();
  } catch {
    return [];
  }
  return names
    .filter((f) => f.endsWith(".json"))
    .map((f) => {
      const file = path.join(spoolDir, f);
      return { file, count: (JSON.parse(readFileSync(file, "utf8")) as unknown[]).length };
    });
}

/**
 * Buffers counted visits and writes them in batches every `intervalMs` or every `batchSize` rows;
 * the request path only pushes to an array. Each batch goes in by COPY with its hourly rollups in
 * one transaction, or, when that fails (a click of it already stored), by one statement that inserts
 * the clicks not yet stored and adds only those to the rollups, so a retried batch is neither lost
 * nor counted twice. While the database is away, clicks wait; beyond
 * `maxBuffered` in memory they spill to `DATA_DIR/click-spool`, and so does whatever is left at
 * close. Spill files are written (and removed) once the database answers, also by the next start.
 */
export function startClickRecorder(app: RecorderDeps, opts: RecorderOptions = {}): ClickRecorder {
  const intervalMs = opts.intervalMs ?? 250;
  const batchSize = opts.batchSize ?? 1000;
  const backlogRows = batchSize * 5;
  const maxBuffered = opts.maxBuffered ?? app.config.clickBufferMax ?? 100_000;
  const spoolDir = path.join(app.config.dataDir, "click-spool");
  const visitorKeys = new VisitorKeys(app.db);
  let wal: ClickSpool | null = null;
  let walMissing = false;
  if (opts.spool !== false) {
    try {
      wal = new ClickSpool(app.config.dataDir, (e, what) => walError(e, what), typeof opts.spool === "object" ? opts.spool : {});
    } catch (e) {
      walMissing = true;
      app.log.error(logSafeError(e), "click spool unavailable; a crash may lose buffered clicks");
    }
  }
  let walFailing = false;
  /** Logged once per failing spell (a full disk would fail every append). */
  function walError(e: unknown, what: string) {
    if (!walFailing) app.log.error(logSafeError(e), what);
    walFailing = true;
  }
  visitorKeys.start((e) => app.log.warn(logSafeError(e), "visitor salt sweep failed"));
  let buffer: Pending[] = [];
  const spilled: Spilled[] = [];
  let spilledCount = 0;
  let inflight = 0;
  let seq = 0;
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> | undefined;
  let failures = 0;
  /** Clicks dropped since the spool became unwritable (0: it is writable). */
  let dropped = 0;
  let spillLogged = false;
  let closed = false;

  const total = () => buffer.length + spilledCount + inflight;
  const gauge = () => app.metrics.clicksBuffered.set(total());

  const schedule = (delay = intervalMs) => {
    if (timer || closed) return;
    timer = setTimeout(() => {
      timer = undefined;
      void drain().catch(() => {});
    }, delay);
    timer.unref();
  };

  /** Moves the memory buffer to a spill file. */
  function spill() {
    if (!buffer.length) return;
    mkdirSync(spoolDir, { recursive: true });
    const file = path.join(spoolDir, `${Date.now()}-${process.pid}-${seq++}.json`);
    writeFileSync(file, JSON.stringify(buffer.map((p) => serializable(fixTs(p)))));
    spilled.push({ file, count: buffer.length, segs: segmentsOf(buffer) });
    spilledCount += buffer.length;
    buffer = [];
  }

  const push = (p: Pending) => {
    if (wal) {
      // Written ahead of the answer (see afterSpooled), its key fixed now.
      fixTs(p);
      p.seg = wal.append(JSON.stringify(serializable(p)), Date.now());
      if (p.seg && walFailing) {
        walFailing = false;
        app.log.info("click spool writable again");
      }
    }
    if (buffer.length >= maxBuffered) {
      // Logged once per state change, never per click: an outage at full traffic would flood the log.
      try {
        spill();
        if (dropped) app.log.warn({ dropped, spilled: spilledCount }, "click spool writable again");
        else if (!spillLogged) app.log.warn({ spilled: spilledCount }, "click buffer full; spilling to DATA_DIR/click-spool");
        spillLogged = true;
        dropped = 0;
      } catch (e) {
        if (!dropped++) app.log.error(logSafeError(e), "click spool unwritable; dropping clicks");
        return;
      }
    }
    buffer.push(p);
    gauge();
    if (buffer.length >= batchSize && !writing) kick();
    else schedule();
  };

  // A full batch is written right after the current turn: the caller answers the visit first
  // (the writer's synchronous part, parsing a batch of user agents, would otherwise delay it).
  let kicked = false;
  const kick = () => {
    if (kicked) return;
    kicked = true;
    setImmediate(() => {
      kicked = false;
      if (!writing && !closed) void drain().catch(() => {});
    });
  };

  async function writeBatch(batch: Pending[]): Promise<void> {
    const rows = await enrichBatch(batch, app.config.edgeHeaders);
    await assignVisitorKeys(visitorKeys, batch, rows);
    await storeClicks(app, rows);
    app.metrics.clicksWritten.inc(rows.length);
  }

  async function writeAll(): Promise<void> {
    for (;;) {
      let fromFile: Spilled | undefined;
      let batch: Pending[];
      if (buffer.length) {
        // A backlog goes out in larger statements: fewer round trips while catching up.
        batch = buffer.splice(0, buffer.length > batchSize ? backlogRows : batchSize).map(fixTs);
      } else if (spilled.length) {
        fromFile = spilled[0];
        batch = JSON.parse(readFileSync(fromFile.file, "utf8")) as Pending[];
      } else break;
      inflight += batch.length;
      if (fromFile) {
        spilledCount -= fromFile.count;
        spilled.shift();
      }
      try {
        // A spill file is written whole (it is at most maxBuffered clicks) and removed after.
        for (let i = 0; i < batch.length; i += backlogRows) await writeBatch(batch.slice(i, i + backlogRows));
        if (fromFile) rmSync(fromFile.file, { force: true });
        // Stored: the spool segments holding these clicks may go.
        if (wal) for (const [seg, n] of fromFile ? (fromFile.segs ?? []) : segmentsOf(batch)) wal.committed(seg, n);
      } catch (e) {
        // Put it back (writes are idempotent, so a partly written spill file is fine to redo).
        if (fromFile) {
          spilledCount += fromFile.count;
          spilled.unshift(fromFile);
        } else buffer = batch.concat(buffer);
        // One line when writes start failing (and one when they recover), never per retry, and
        // never the error itself: the driver's error carries the whole batch as its parameters.
        if (!failures++) app.log.error({ ...logSafeError(e), buffered: total() }, "click writes failing; clicks wait and are retried");
        // Back off up to 5 s while the database is away.
        schedule(Math.min(5_000, intervalMs * 2 ** Math.min(failures, 5)));
        throw e;
      } finally {
        inflight -= batch.length;
        gauge();
      }
      if (failures) app.log.info({ failures, buffered: total() }, "click writes recovered");
      if (dropped) app.log.warn({ dropped }, "click buffer has room again; clicks no longer dropped");
      failures = dropped = 0;
      spillLogged = false;
    }
  }

  /** Writes everything waiting; one writer at a time. */
  function drain(): Promise<void> {
    // A write is running: when it ends, write what is left (including what came meanwhile).
    if (writing) return writing.then(() => drain());
    if (timer) {
      clearTimeout(timer);
      timer = undefined;
    }
    // `finally` runs after this assignment, even when there is nothing to write.
    writing = writeAll().finally(() => {
      writing = undefined;
    });
    return writing;
  }

  // Clicks spilled by an earlier run (or left at its stop) are written first.
  for (const f of readSpool(spoolDir)) {
    spilled.push(f);
    spilledCount += f.count;
  }
  // Then what a crashed run left in its write-ahead spool (already stored ones are skipped by key).
  if (wal) adoptOrphans();
  if (spilled.length || buffer.length) schedule(0);
  /** Orphan spool segments (a dead run's, here or on another host) go into the buffer. */
  function adoptOrphans() {
    try {
      for (const { seg, records } of wal!.takeOrphans<Pending>()) {
        app.log.info({ clicks: records.length }, "replaying clicks from a stopped run's spool");
        for (const p of records) {
          p.seg = seg;
          if (buffer.length >= maxBuffered) spill();
          buffer.push(p);
        }
      }
      gauge();
    } catch (e) {
      app.log.error(logSafeError(e), "click spool replay failed");
    }
  }
  // Another host's instance that died is noticed by its stale heartbeat.
  const orphanSweep = wal ? setInterval(() => (adoptOrphans(), buffer.length && schedule()), 30_000) : undefined;
  orphanSweep?.unref();

  return {
    record: (click) => push({ kind: "click", click }),
    recordVisit: (visit) => push({ kind: "visit", visit }),
    afterSpooled: (fn) => (wal ? wal.afterWrite(fn) : fn()),
    flush: () => drain(),
    get buffered() {
      return total();
    },
    get durable() {
      return !walMissing && !walFailing && dropped === 0;
    },
    async close() {
      if (closed) return;
      let stored = false;
      try {
        await drain();
        stored = true;
      } catch {
        try {
          await drain(); // one more try before leaving them on disk
          stored = true;
        } catch {
          try {
            spill();
            app.log.warn({ spilled: spilledCount }, "database unavailable at stop; clicks left in DATA_DIR/click-spool");
          } catch (e) {
            app.log.error({ ...logSafeError(e), lost: buffer.length }, "click spill failed at stop");
          }
        }
      } finally {
        closed = true;
        visitorKeys.stop();
        if (orphanSweep) clearInterval(orphanSweep);
        // Everything stored: the spool goes. Otherwise it stays for the next start, beside the spill.
        wal?.close(stored && total() === 0);
        if (timer) clearTimeout(timer);
      }
    },
  };
}
