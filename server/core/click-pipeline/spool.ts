import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * The click write-ahead spool: every counted visit is appended to a segment file of this process
 * (one JSON line, a synchronous write to an open descriptor) before its answer is sent, so a
 * process crash (kill -9, out of memory) loses none: the kernel keeps what was written. Segments
 * are flushed to the disk every `fsyncMs`, which bounds what a power loss can cost. A segment is
 * deleted once every click in it is committed to the database; segments left by a process that
 * died are taken over (renamed into the live process's directory) and replayed at start, and
 * the replay is idempotent (clicks' primary key), so a click written twice is stored once.
 *
 * Layout: `DATA_DIR/click-wal/<instance>/owner.json` (host and pid, its mtime the heartbeat) and
 * `<n>.wal` segments. Instances sharing DATA_DIR each have their own directory; a directory is
 * an orphan when its owner is gone: on this host, its pid is not alive (or is ours but not one of
 * our live spools: a restarted container is pid 1 again); on any host, its heartbeat is stale.
 */
export type Segment = {
  file: string;
  fd: number | null;
  /** Lines appended and not yet committed to the database. */
  outstanding: number;
  /** No more appends (rotated, or taken over from a dead process). */
  sealed: boolean;
  records: number;
  openedAt: number;
};

export type SpoolOptions = {
  /** Longest a written click waits for fdatasync (a power loss loses at most this much). */
  fsyncMs?: number;
  /** A segment is rotated after this many lines... */
  segmentRecords?: number;
  /** ...or this age, so committed segments are deleted soon. */
  segmentMs?: number;
  /** An owner whose heartbeat is older than this is gone (another host's crash). */
  staleMs?: number;
};

const HEARTBEAT_MS = 5_000;
/** Spools of this process that are open: a directory with our pid but not listed here is a dead run's. */
const liveInProcess = new Set<string>();

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
};

export class ClickSpool {
  readonly root: string;
  readonly id = `${Date.now().toString(36)}-${process.pid}-${randomBytes(4).toString("hex")}`;
  readonly dir: string;
  private current: Segment | null = null;
  /** Every segment not yet deleted (this process's and those taken over). */
  private segments = new Set<Segment>();
  private seq = 0;
  private dirty = new Set<Segment>();
  private syncing = false;
  private timers: NodeJS.Timeout[] = [];
  private readonly fsyncMs: number;
  private readonly segmentRecords: number;
  private readonly segmentMs: number;
  private readonly staleMs: number;
  private closed = false;
  /** Lines of this event-loop turn, written together at its end (one system call for all of them). */
  private pendingText = "";
  private pendingSeg: Segment | null = null;
  private waiters: (() => void)[] = [];
  private flushScheduled = false;

  constructor(
    dataDir: string,
    private onError: (e: unknown, what: string) => void,
    opts: SpoolOptions = {},
  ) {
    this.root = path.join(dataDir, "click-wal");
    this.dir = path.join(this.root, this.id);
    this.fsyncMs = opts.fsyncMs ?? 200;
    this.segmentRecords = opts.segmentRecords ?? 20_000;
    this.segmentMs = opts.segmentMs ?? 1_000;
    this.staleMs = opts.staleMs ?? 30_000;
    // The owner file is written before the directory gets its name: a directory is never seen ownerless.
    const tmp = `${this.dir}.tmp`;
    fs.mkdirSync(tmp, { recursive: true });
    fs.writeFileSync(path.join(tmp, "owner.json"), JSON.stringify({ host: os.hostname(), pid: process.pid }));
    fs.renameSync(tmp, this.dir);
    liveInProcess.add(this.id);
    const owner = path.join(this.dir, "owner.json");
    this.timers.push(
      setInterval(() => this.sync(), this.fsyncMs),
      setInterval(() => {
        const now = new Date();
        try {
          fs.utimesSync(owner, now, now);
        } catch (e) {
          this.onError(e, "click spool heartbeat failed");
        }
      }, HEARTBEAT_MS),
    );
    for (const t of this.timers) t.unref();
  }

  /**
   * Appends one line. It is written, with every other line of this event-loop turn, at the end
   * of the turn; `afterWrite` tells when (the visit is answered then). Returns the segment that
   * holds it, or null when its segment could not be opened (the click then lives in memory only,
   * as without a spool).
   */
  append(line: string, now: number): Segment | null {
    let seg = this.current;
    try {
      if (!seg || seg.records >= this.segmentRecords || now - seg.openedAt >= this.segmentMs) {
        this.flush();
        seg = this.rotate(now);
      }
    } catch (e) {
      this.onError(e, "click spool write failed");
      return null;
    }
    this.pendingText += line + "\n";
    this.pendingSeg = seg;
    seg.records++;
    seg.outstanding++;
    this.dirty.add(seg);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
    return seg;
  }

  /** Runs `fn` once every line appended so far is written (the kernel has it): at once when none waits. */
  afterWrite(fn: () => void): void {
    if (this.pendingText) this.waiters.push(fn);
    else fn();
  }

  /** Writes the lines waiting (one synchronous write), then lets their visits be answered. */
  flush(): void {
    this.flushScheduled = false;
    if (this.pendingText) {
      const text = this.pendingText;
      const seg = this.pendingSeg!;
      this.pendingText = "";
      this.pendingSeg = null;
      try {
        fs.writeSync(seg.fd!, text);
      } catch (e) {
        // Those clicks live in memory only, as without a spool; their visits are answered all the same.
        this.onError(e, "click spool write failed");
      }
    }
    const waiters = this.waiters;
    this.waiters = [];
    for (const fn of waiters) fn();
  }

  /** `n` lines of `seg` are stored in the database; a sealed segment with none left is deleted. */
  committed(seg: Segment, n: number): void {
    seg.outstanding -= n;
    if (seg.outstanding > 0) return;
    if (!seg.sealed && seg === this.current && Date.now() - seg.openedAt >= this.segmentMs) {
      this.current = null;
      seg.sealed = true;
    }
    if (seg.sealed) this.remove(seg);
  }

  /**
   * Segments of dead owners, renamed into this spool's directory (so a crash during their replay
   * leaves them to the next start) and parsed. A torn last line (power loss) is skipped.
   */
  takeOrphans<T>(): { seg: Segment; records: T[] }[] {
    const out: { seg: Segment; records: T[] }[] = [];
    let dirs: string[];
    try {
      dirs = fs.readdirSync(this.root);
    } catch {
      return out;
    }
    for (const name of dirs) {
      if (name === this.id) continue;
      const dir = path.join(this.root, name);
      if (!this.isOrphan(dir, name)) continue;
      let files: string[];
      try {
        files = fs.readdirSync(dir).filter((f) => f.endsWith(".wal"));
      } catch {
        continue;
      }
      for (const f of files.sort()) {
        const file = path.join(this.dir, `${name}.${f}`);
        try {
          fs.renameSync(path.join(dir, f), file);
        } catch {
          continue; // another instance took it first
        }
        const records: T[] = [];
        for (const line of fs.readFileSync(file, "utf8").split("\n")) {
          if (!line) continue;
          try {
            records.push(JSON.parse(line) as T);
          } catch {
            // torn write
          }
        }
        const seg: Segment = { file, fd: null, outstanding: records.length, sealed: true, records: records.length, openedAt: 0 };
        this.segments.add(seg);
        if (!records.length) this.remove(seg);
        else out.push({ seg, records });
      }
      fs.rmSync(dir, { recursive: true, force: true });
    }
    return out;
  }

  private isOrphan(dir: string, name: string): boolean {
    if (name.endsWith(".tmp")) {
      // Died between mkdir and rename: nothing was appended there.
      try {
        return Date.now() - fs.statSync(dir).mtimeMs > this.staleMs;
      } catch {
        return false;
      }
    }
    try {
      const owner = path.join(dir, "owner.json");
      const stale = Date.now() - fs.statSync(owner).mtimeMs > this.staleMs;
      const { host, pid } = JSON.parse(fs.readFileSync(owner, "utf8")) as { host: string; pid: number };
      if (host === os.hostname()) return pid === process.pid ? !liveInProcess.has(name) : !alive(pid) || stale;
      return stale;
    } catch {
      return false;
    }
  }

  private rotate(now: number): Segment {
    const old = this.current;
    if (old) {
      old.sealed = true;
      if (old.outstanding <= 0) this.remove(old);
    }
    const file = path.join(this.dir, `${String(this.seq++).padStart(8, "0")}.wal`);
    const seg: Segment = { file, fd: fs.openSync(file, "a"), outstanding: 0, sealed: false, records: 0, openedAt: now };
    this.current = seg;
    this.segments.add(seg);
    return seg;
  }

  private remove(seg: Segment) {
    this.dirty.delete(seg);
    this.segments.delete(seg);
    if (seg.fd !== null) {
      fs.close(seg.fd, () => {});
      seg.fd = null;
    }
    fs.rm(seg.file, { force: true }, () => {});
  }

  /** fdatasync of every segment written since the last one, off the event loop. */
  private sync() {
    if (this.syncing || !this.dirty.size) return;
    const segs = [...this.dirty].filter((s) => s.fd !== null);
    this.dirty.clear();
    this.syncing = true;
    let left = segs.length;
    if (!left) this.syncing = false;
    for (const s of segs) {
      const fd = s.fd!;
      fs.fdatasync(fd, (e) => {
        if (e && e.code !== "EBADF") this.onError(e, "click spool fsync failed");
        // Sealed and synced: its descriptor is no longer needed (the file stays until committed).
        if (s.sealed && s.fd === fd && !this.dirty.has(s)) {
          fs.close(fd, () => {});
          s.fd = null;
        }
        if (--left === 0) this.syncing = false;
      });
    }
  }

  /**
   * Stops the spool. `clean`: the recorder stored everything it held, so the directory goes,
   * unless a segment still has clicks not stored (dropped from a full memory buffer): then, as
   * when not clean, the segments stay (synced) for the next start to replay.
   */
  close(clean: boolean): void {
    if (this.closed) return;
    this.closed = true;
    this.flush();
    for (const t of this.timers) clearInterval(t);
    for (const s of [this.current, ...this.dirty]) {
      if (s?.fd != null) {
        try {
          fs.fdatasyncSync(s.fd);
          fs.closeSync(s.fd);
        } catch {
          // closed already
        }
        s.fd = null;
      }
    }
    this.current = null;
    if (clean && [...this.segments].every((s) => s.outstanding <= 0)) fs.rmSync(this.dir, { recursive: true, force: true });
    liveInProcess.delete(this.id);
  }
}
