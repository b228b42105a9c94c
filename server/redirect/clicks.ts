import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import { clickRollups, clicks } from "../../db/schema";
import type { EdgeInfo } from "../lib/edge";
import { clickTs } from "../lib/ids";
import { parseUserAgent } from "../lib/user-agent";
import type { AppServices } from "../services";
import { lookupGeo, NO_GEO, type GeoInfo } from "./geo";

export type Rule = "ios" | "android" | "geo" | "url" | "expiration_url" | "expired_404";

/** A counted visit, as stored (ClickEvent plus `rule`). */
export type ClickRecord = {
  linkId: string;
  workspaceId: string;
  ts: string;
  timestamp: number;
  country: string | null;
  region: string | null;
  regionName: string | null;
  city: string | null;
  timezone: string | null;
  lat: number | null;
  lng: number | null;
  device: "mobile" | "tablet" | "smarttv" | "desktop";
  platform: string | null;
  browser: string | null;
  referer: string | null;
  rule: Rule;
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
  /** Writes everything buffered; resolves when stored. */
  flush(): Promise<void>;
  close(): Promise<void>;
  readonly buffered: number;
};

type Pending = { kind: "click"; click: ClickRecord } | { kind: "visit"; visit: Visit; ts: string };

export type RecorderOptions = {
  /** Longest a click waits in memory before it is written. */
  intervalMs?: number;
  /** Rows per multi-row insert; a full batch is written at once. */
  batchSize?: number;
  /**
   * Memory bound: past this many waiting clicks (the database is away), the waiting ones spill
   * to `DATA_DIR/click-spool` and are read back, a file at a time, once writes succeed again.
   */
  maxBuffered?: number;
};

/** Turns a visit into a stored click: device, platform, browser and location. */
export async function enrichVisit(v: Visit, ts: string, edgeMode: "none" | "cloudfront" | "cloudflare"): Promise<ClickRecord> {
  const agent = parseUserAgent(v.userAgent);
  const edge = v.edge;
  const geo = v.geo ?? (edgeMode === "none" ? await lookupGeo(v.ip) : NO_GEO);
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

const toRow = (c: ClickRecord) => ({ ...c });
const hourOf = (ms: number) => Math.floor(ms / 3_600_000) * 3_600_000;

/**
 * Buffers counted visits and writes them in multi-row inserts, with the hourly rollups, in one
 * transaction, every `intervalMs` or every `batchSize` rows. The request path only pushes to an
 * array. A failed write keeps the clicks and retries; beyond the memory bound they spill to
 * `DATA_DIR/click-spool`; a failed write at close spools them there too, written at the next start.
 */
export function startClickRecorder(app: AppServices, opts: RecorderOptions = {}): ClickRecorder {
  const intervalMs = opts.intervalMs ?? 250;
  const batchSize = opts.batchSize ?? 1000;
  const maxBuffered = opts.maxBuffered ?? app.config.clickBufferMax ?? 200_000;
  const spoolDir = path.join(app.config.dataDir, "click-spool");
  let buffer: Pending[] = [];
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> | undefined;
  let failures = 0;
  let closed = false;
  /** Clicks of the batch being written: they stay at the head of the buffer until it is stored. */
  let inFlight = 0;
  /** Spool files whose clicks are in the buffer; removed once the buffer has been written. */
  const recovered: string[] = [];
  /** Spool files not read back yet, oldest first, with their click counts. */
  const spilled: { file: string; count: number }[] = [];
  let spilledClicks = 0;
  let spoolSeq = 0;

  const gauge = () => app.metrics.clicksBuffered.set(buffer.length + spilledClicks);

  /** Writes clicks to a new spool file (fsynced by writeFileSync's close; one JSON array). */
  const writeSpool = (items: Pending[]): string => {
    mkdirSync(spoolDir, { recursive: true });
    const file = path.join(spoolDir, `${Date.now()}-${process.pid}-${spoolSeq++}.json`);
    writeFileSync(file, JSON.stringify(items));
    return file;
  };

  /** Memory bound reached: everything not being written right now goes to disk. */
  const spill = () => {
    const out = buffer.slice(inFlight);
    if (!out.length) return;
    const file = writeSpool(out);
    spilled.push({ file, count: out.length });
    spilledClicks += out.length;
    buffer = buffer.slice(0, inFlight);
    // Recovered clicks are now in the new file (or in the batch being written): drop the old copies.
    for (const f of recovered.splice(0)) rmSync(f, { force: true });
    app.log.warn({ file, clicks: out.length, spilledClicks }, "click buffer full; clicks spilled to disk");
  };

  /** Reads the oldest spilled file back into the (empty) buffer. */
  const readBack = () => {
    const next = spilled.shift()!;
    spilledClicks -= next.count;
    try {
      buffer.push(...(JSON.parse(readFileSync(next.file, "utf8")) as Pending[]));
      recovered.push(next.file);
    } catch (e) {
      app.log.error({ err: e, file: next.file }, "unreadable click spool file; kept for inspection");
    }
  };

  const schedule = (delay = intervalMs) => {
    if (timer || closed) return;
    timer = setTimeout(() => {
      timer = undefined;
      void drain().catch(() => {});
    }, delay);
    timer.unref();
  };

  const push = (p: Pending) => {
    if (buffer.length >= maxBuffered) spill();
    buffer.push(p);
    gauge();
    if (buffer.length >= batchSize && !writing) void drain().catch(() => {});
    else schedule();
  };

  async function writeBatch(batch: Pending[]): Promise<void> {
    const rows = await Promise.all(batch.map((p) => (p.kind === "click" ? p.click : enrichVisit(p.visit, p.ts, app.config.edgeHeaders))));
    const rollups = new Map<string, { linkId: string; hour: number; count: number }>();
    for (const r of rows) {
      const key = `${r.linkId}|${hourOf(r.timestamp)}`;
      const cur = rollups.get(key);
      if (cur) cur.count++;
      else rollups.set(key, { linkId: r.linkId, hour: hourOf(r.timestamp), count: 1 });
    }
    await app.db.transaction(async (tx) => {
      await tx.insert(clicks).values(rows.map(toRow)).onConflictDoNothing();
      await tx
        .insert(clickRollups)
        .values([...rollups.values()])
        .onConflictDoUpdate({ target: [clickRollups.linkId, clickRollups.hour], set: { count: sql`${clickRollups.count} + excluded.count` } });
    });
    app.metrics.clicksWritten.inc(rows.length);
  }

  async function writeAll(): Promise<void> {
    while (buffer.length || spilled.length) {
      if (!buffer.length) readBack();
      if (!buffer.length) continue;
      const batch = buffer.slice(0, batchSize);
      inFlight = batch.length;
      try {
        await writeBatch(batch);
      } catch (e) {
        failures++;
        app.log.warn({ err: e, failures, buffered: buffer.length, spilledClicks }, "click write failed; will retry");
        // Back off up to 5 s while the database is away; the clicks stay buffered.
        schedule(Math.min(5_000, intervalMs * 2 ** Math.min(failures, 5)));
        throw e;
      } finally {
        inFlight = 0;
      }
      failures = 0;
      buffer = buffer.slice(batch.length);
      gauge();
    }
    for (const f of recovered.splice(0)) rmSync(f, { force: true });
  }

  /** Writes batches until the buffer is empty; one writer at a time. */
  function drain(): Promise<void> {
    // A write is running: when it ends, write what is left (including what came meanwhile).
    if (writing) return writing.then(() => drain());
    if (timer) (clearTimeout(timer), (timer = undefined));
    // `finally` runs after this assignment, even when there is nothing to write.
    writing = writeAll().finally(() => {
      writing = undefined;
    });
    return writing;
  }

  function spool() {
    if (!buffer.length) return;
    const file = writeSpool(buffer);
    for (const f of recovered.splice(0)) if (f !== file) rmSync(f, { force: true });
    app.log.warn({ file, clicks: buffer.length }, "database unavailable at stop; clicks spooled");
    buffer = [];
    gauge();
  }

  // Clicks spooled by an earlier stop go in first, a file at a time (each stays until written).
  try {
    for (const f of readdirSync(spoolDir).sort()) if (f.endsWith(".json")) spilled.push({ file: path.join(spoolDir, f), count: 0 });
    if (spilled.length) schedule(0);
  } catch {
    // no spool directory: nothing to recover
  }

  return {
    record: (click) => push({ kind: "click", click }),
    recordVisit: (visit) => push({ kind: "visit", visit, ts: clickTs(visit.timestamp) }),
    flush: () => drain(),
    get buffered() {
      return buffer.length + spilledClicks;
    },
    async close() {
      if (closed) return;
      try {
        await drain();
      } catch {
        try {
          await drain(); // one more try before giving up on the database
        } catch {
          spool();
        }
      } finally {
        closed = true;
        if (timer) clearTimeout(timer);
      }
    },
  };
}
