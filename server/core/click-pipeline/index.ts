// The click pipeline: the request path records a visit (recorder.ts), the batch writer enriches it
// (enrichment.ts) and stores it once (storage.ts), spilling to disk while the database is away
// (spill.ts); the write-ahead spool and the monthly partitions live beside it.
import { BatchClickRecorder, type ClickRecorder, type RecorderDeps, type RecorderOptions } from "./recorder";

export { BatchClickRecorder, type ClickRecorder, type RecorderDeps, type RecorderOptions } from "./recorder";
export { enrichVisit } from "./enrichment";
export { logSafeError, type ClickRecord, type Rule, type Visit } from "./types";

/** Starts a recorder: it writes what an earlier run left (spill files, a crashed run's spool) first. */
export function startClickRecorder(app: RecorderDeps, opts: RecorderOptions = {}): ClickRecorder {
  return new BatchClickRecorder(app, opts);
}
