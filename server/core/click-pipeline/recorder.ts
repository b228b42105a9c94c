import path from "node:path";
import { withTimeout, type Database, type Db } from "../../../db/client";
import type { Config } from "../../config";
import type { Logger } from "../../lib/log";
import type { Metrics } from "../../lib/metrics";
import { ClickSpool } from "./spool";
import { VisitorKeys } from "../visitor-keys";
import { assignVisitorKeys, enrichBatch } from "./enrichment";
import { SpillFiles, type Spilled } from "./spill";
import { storeClicks } from "./storage";
import { fixTs, logSafeError, segmentsOf, serializable, type ClickRecord, type Pending, type Visit } from "./types";

export type ClickRecorder = {
  record(click: ClickRecord): void;
  /** Counts a visit; parsing and GeoIP happen in the batch writer. */
  recordVisit(visit: Visit): void;
  /**
   * Runs `fn` once the visits recorded so far are in the write-ahead spool (written together at
   * the end of the event-loop turn): the redirect host answers then. At once without a spool.
   */
  afterSpooled(fn: () => void): void;
  /**
   * The daily visitor key a visit at `timestamp` is stored with (null when its day's salt is gone):
   * the redirect host picks a link's A/B variant from it. Cached per day, so at most one read a day.
   */
  visitorKey(timestamp: number, ip: string, userAgent: string): Promise<string | null>;
  /** The same key synchronously once the day's salt is cached; undefined before (then `visitorKey`). */
  knownVisitorKey(timestamp: number, ip: string, userAgent: string): string | undefined;
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
   * The write-ahead spool (`DATA_DIR/click-wal`, see spool.ts): each click is appended
   * before its answer, so a crash loses none. On by default; `false` for the in-memory buffer only.
   */
  spool?: boolean | { fsyncMs?: number; segmentRecords?: number; segmentMs?: number; staleMs?: number };
};

/** Longest a batch's write may take on PostgreSQL before it is given up and tried again. */
export const CLICK_WRITE_DEADLINE_MS = 10_000;

/** What the recorder needs of the app (the services container provides it). */
export type RecorderDeps = {
  config: Pick<Config, "clickBufferMax" | "dataDir" | "edgeHeaders">;
  db: Db;
  database: Pick<Database, "copyThen"> & Partial<Pick<Database, "driver">>;
  log: Logger;
  metrics: Metrics;
};

/**
 * Buffers counted visits and writes them in batches every `intervalMs` or every `batchSize` rows;
 * the request path only pushes to an array. Each batch is stored exactly once (storage.ts). While
 * the database is away, clicks wait, backing off; beyond `maxBuffered` in memory they spill to
 * disk (spill.ts), and so does whatever is left at close. Each click is also appended to the
 * write-ahead spool before its answer, so a crash loses none.
 */
export class BatchClickRecorder implements ClickRecorder {
  private readonly intervalMs: number;
  private readonly batchSize: number;
  private readonly backlogRows: number;
  private readonly maxBuffered: number;
  private readonly visitorKeys: VisitorKeys;
  private readonly spill: SpillFiles;
  private readonly wal: ClickSpool | null = null;
  private readonly orphanSweep?: NodeJS.Timeout;
  /** The spool was asked for and could not be opened. */
  private walMissing = false;
  /** Appends to the spool fail (logged once per failing spell). */
  private walFailing = false;
  private buffer: Pending[] = [];
  /** Clicks being written. */
  private inflight = 0;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private kicked = false;
  /** Failed writes in a row (the back-off's exponent). */
  private failures = 0;
  /** Clicks dropped since the spill became unwritable (0: it is writable). */
  private dropped = 0;
  private spillLogged = false;
  private closed = false;

  constructor(
    private readonly app: RecorderDeps,
    opts: RecorderOptions = {},
  ) {
    this.intervalMs = opts.intervalMs ?? 250;
    this.batchSize = opts.batchSize ?? 1000;
    this.backlogRows = this.batchSize * 5;
    this.maxBuffered = opts.maxBuffered ?? app.config.clickBufferMax ?? 100_000;
    this.visitorKeys = new VisitorKeys(app.db);
    if (opts.spool !== false) {
      try {
        this.wal = new ClickSpool(app.config.dataDir, (e, what) => this.walError(e, what), typeof opts.spool === "object" ? opts.spool : {});
      } catch (e) {
        this.walMissing = true;
        app.log.error(logSafeError(e), "click spool unavailable; a crash may lose buffered clicks");
      }
    }
    this.visitorKeys.start((e) => app.log.warn(logSafeError(e), "visitor salt sweep failed"));
    // Clicks spilled by an earlier run (or left at its stop) are written first.
    this.spill = new SpillFiles(path.join(app.config.dataDir, "click-spool"));
    // Then what a crashed run left in its write-ahead spool (already stored ones are skipped by key).
    if (this.wal) this.adoptOrphans();
    if (this.spill.length || this.buffer.length) this.schedule(0);
    // Another host's instance that died is noticed by its stale heartbeat.
    if (this.wal) {
      this.orphanSweep = setInterval(() => (this.adoptOrphans(), this.buffer.length && this.schedule()), 30_000);
      this.orphanSweep.unref();
    }
  }

  record(click: ClickRecord): void {
    this.push({ kind: "click", click });
  }

  recordVisit(visit: Visit): void {
    this.push({ kind: "visit", visit });
  }

  afterSpooled(fn: () => void): void {
    if (this.wal) this.wal.afterWrite(fn);
    else fn();
  }

  visitorKey(timestamp: number, ip: string, userAgent: string): Promise<string | null> {
    return this.visitorKeys.keyFor(timestamp, ip, userAgent);
  }

  knownVisitorKey(timestamp: number, ip: string, userAgent: string): string | undefined {
    return this.visitorKeys.knownKey(timestamp, ip, userAgent);
  }

  flush(): Promise<void> {
    return this.drain();
  }

  get buffered(): number {
    return this.buffer.length + this.spill.count + this.inflight;
  }

  get durable(): boolean {
    return !this.walMissing && !this.walFailing && this.dropped === 0;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    let stored = false;
    try {
      await this.drain();
      stored = true;
    } catch {
      try {
        await this.drain(); // one more try before leaving them on disk
        stored = true;
      } catch {
        this.spillAtStop();
      }
    } finally {
      this.closed = true;
      this.visitorKeys.stop();
      if (this.orphanSweep) clearInterval(this.orphanSweep);
      // Everything stored: the spool goes. Otherwise it stays for the next start, beside the spill.
      this.wal?.close(stored && this.buffered === 0);
      if (this.timer) clearTimeout(this.timer);
    }
  }

  private spillAtStop() {
    try {
      this.spillBuffer();
      this.app.log.warn({ spilled: this.spill.count }, "database unavailable at stop; clicks left in DATA_DIR/click-spool");
    } catch (e) {
      this.app.log.error({ ...logSafeError(e), lost: this.buffer.length }, "click spill failed at stop");
    }
  }

  private walError(e: unknown, what: string) {
    if (!this.walFailing) this.app.log.error(logSafeError(e), what);
    this.walFailing = true;
  }

  private schedule(delay = this.intervalMs) {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.drain().catch(() => {});
    }, delay);
    this.timer.unref();
  }

  /** Moves the memory buffer to a spill file. */
  private spillBuffer() {
    if (!this.buffer.length) return;
    this.spill.write(this.buffer);
    this.buffer = [];
  }

  private push(p: Pending) {
    if (this.wal) {
      // Written ahead of the answer (see afterSpooled), its key fixed now.
      fixTs(p);
      p.seg = this.wal.append(JSON.stringify(serializable(p)), Date.now());
      if (p.seg && this.walFailing) {
        this.walFailing = false;
        this.app.log.info("click spool writable again");
      }
    }
    if (this.buffer.length >= this.maxBuffered && !this.spillFull()) return;
    this.buffer.push(p);
    if (this.buffer.length >= this.batchSize && !this.writing) this.kick();
    else this.schedule();
  }

  /** The buffer is full: spills it; false when that fails and the click is dropped. */
  private spillFull(): boolean {
    // Logged once per state change, never per click: an outage at full traffic would flood the log.
    try {
      this.spillBuffer();
      if (this.dropped) this.app.log.warn({ dropped: this.dropped, spilled: this.spill.count }, "click spool writable again");
      else if (!this.spillLogged) this.app.log.warn({ spilled: this.spill.count }, "click buffer full; spilling to DATA_DIR/click-spool");
      this.spillLogged = true;
      this.dropped = 0;
      return true;
    } catch (e) {
      if (!this.dropped++) this.app.log.error(logSafeError(e), "click spool unwritable; dropping clicks");
      return false;
    }
  }

  /**
   * A full batch is written right after the current turn: the caller answers the visit first
   * (the writer's synchronous part, parsing a batch of user agents, would otherwise delay it).
   */
  private kick() {
    if (this.kicked) return;
    this.kicked = true;
    setImmediate(() => {
      this.kicked = false;
      if (!this.writing && !this.closed) void this.drain().catch(() => {});
    });
  }

  private async writeBatch(batch: Pending[]): Promise<void> {
    const rows = await enrichBatch(batch, this.app.config.edgeHeaders);
    await assignVisitorKeys(this.visitorKeys, batch, rows);
    const stored = storeClicks(this.app, rows);
    // A connection reset at the wrong moment can leave a postgres.js query that never settles: the
    // writer would wait on it for ever, every later click with it, and a graceful stop would time
    // out. Past the deadline the batch counts as failed and is written again (a batch is stored
    // once however often it is written, storage.ts).
    if (this.app.database.driver !== "postgres") await stored;
    else
      await withTimeout(stored, CLICK_WRITE_DEADLINE_MS).catch((e: unknown) => {
        if (e instanceof Error && e.message === "database timeout")
          this.app.log.warn({ clicks: rows.length }, "click write given up at its deadline; written again");
        throw e;
      });
    this.app.metrics.clicksWritten.inc(rows.length);
  }

  /** The next batch to write: from memory first (larger while catching up), then the oldest spill file. */
  private nextBatch(): { batch: Pending[]; from?: Spilled } | undefined {
    if (this.buffer.length) {
      // A backlog goes out in larger statements: fewer round trips while catching up.
      return { batch: this.buffer.splice(0, this.buffer.length > this.batchSize ? this.backlogRows : this.batchSize).map(fixTs) };
    }
    return this.spill.take();
  }

  private async writeAll(): Promise<void> {
    for (let next = this.nextBatch(); next; next = this.nextBatch()) {
      const { batch, from } = next;
      this.inflight += batch.length;
      try {
        // A spill file is written whole (it is at most maxBuffered clicks) and removed after.
        for (let i = 0; i < batch.length; i += this.backlogRows) await this.writeBatch(batch.slice(i, i + this.backlogRows));
        if (from) this.spill.done(from);
        // Stored: the spool segments holding these clicks may go.
        if (this.wal) for (const [seg, n] of from ? (from.segs ?? []) : segmentsOf(batch)) this.wal.committed(seg, n);
      } catch (e) {
        // Put it back (writes are idempotent, so a partly written spill file is fine to redo).
        if (from) this.spill.putBack(from);
        else this.buffer = batch.concat(this.buffer);
        this.failed(e);
        throw e;
      } finally {
        this.inflight -= batch.length;
      }
      this.recovered();
    }
  }

  /** A write failed: logged once per failing spell, retried with a back-off of up to 5 s. */
  private failed(e: unknown) {
    // Never the error itself: the driver's error carries the whole batch as its parameters.
    if (!this.failures++) this.app.log.error({ ...logSafeError(e), buffered: this.buffered }, "click writes failing; clicks wait and are retried");
    this.schedule(Math.min(5_000, this.intervalMs * 2 ** Math.min(this.failures, 5)));
  }

  /** A write succeeded: the failing spell (if any) is over. */
  private recovered() {
    if (this.failures) this.app.log.info({ failures: this.failures, buffered: this.buffered }, "click writes recovered");
    if (this.dropped) this.app.log.warn({ dropped: this.dropped }, "click buffer has room again; clicks no longer dropped");
    this.failures = this.dropped = 0;
    this.spillLogged = false;
  }

  /** Writes everything waiting; one writer at a time. */
  private drain(): Promise<void> {
    // A write is running: when it ends, write what is left (including what came meanwhile).
    if (this.writing) return this.writing.then(() => this.drain());
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    // `finally` runs after this assignment, even when there is nothing to write.
    this.writing = this.writeAll().finally(() => {
      this.writing = undefined;
    });
    return this.writing;
  }

  /** Orphan spool segments (a dead run's, here or on another host) go into the buffer. */
  private adoptOrphans() {
    try {
      for (const { seg, records } of this.wal!.takeOrphans<Pending>()) {
        this.app.log.info({ clicks: records.length }, "replaying clicks from a stopped run's spool");
        for (const p of records) {
          p.seg = seg;
          if (this.buffer.length >= this.maxBuffered) this.spillBuffer();
          this.buffer.push(p);
        }
      }
    } catch (e) {
      this.app.log.error(logSafeError(e), "click spool replay failed");
    }
  }
}
