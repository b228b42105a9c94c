import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Segment } from "./spool";
import { fixTs, segmentsOf, serializable, type Pending } from "./types";

/** A spill file; `segs`: the spool segments its clicks are in (none for a file of an earlier run). */
export type Spilled = { file: string; count: number; segs?: Map<Segment, number> };

/**
 * Clicks moved out of memory while the database is away (`DATA_DIR/click-spool`), oldest first.
 * A file is written whole and removed only once its clicks are stored, so a restart finds them.
 */
export class SpillFiles {
  private readonly files: Spilled[] = [];
  private seq = 0;
  /** Clicks in the files. */
  count = 0;

  constructor(readonly dir: string) {
    for (const f of listSpillFiles(dir)) this.add(f);
  }

  get length(): number {
    return this.files.length;
  }

  /** Writes the batch to a new file (throws when the disk refuses it). */
  write(batch: Pending[]): void {
    mkdirSync(this.dir, { recursive: true });
    const file = path.join(this.dir, `${Date.now()}-${process.pid}-${this.seq++}.json`);
    writeFileSync(file, JSON.stringify(batch.map((p) => serializable(fixTs(p)))));
    this.add({ file, count: batch.length, segs: segmentsOf(batch) });
  }

  /** The oldest file and its clicks, taken out of the list until `done` or `putBack`. */
  take(): { from: Spilled; batch: Pending[] } | undefined {
    const from = this.files[0];
    if (!from) return undefined;
    const batch = JSON.parse(readFileSync(from.file, "utf8")) as Pending[];
    this.files.shift();
    this.count -= from.count;
    return { from, batch };
  }

  /** Its clicks are stored: the file goes. */
  done(from: Spilled): void {
    rmSync(from.file, { force: true });
  }

  /** Its write failed: first again next time. */
  putBack(from: Spilled): void {
    this.files.unshift(from);
    this.count += from.count;
  }

  private add(f: Spilled) {
    this.files.push(f);
    this.count += f.count;
  }
}

/** Spill files left by an earlier run, oldest first (none when there is no spool directory). */
function listSpillFiles(dir: string): Spilled[] {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return [];
  }
  return names
    .filter((f) => f.endsWith(".json"))
    .map((f) => {
      const file = path.join(dir, f);
      return { file, count: (JSON.parse(readFileSync(file, "utf8")) as unknown[]).length };
    });
}
