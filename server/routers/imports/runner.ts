import os from "node:os";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { readdir, stat, unlink } from "node:fs/promises";
import path from "node:path";
import { and, asc, eq, inArray, isNull, sql } from "drizzle-orm";
import type { DbOrTx } from "../../../db/client";
import { importJobs } from "../../../db/schema";
import { isDatabaseUnavailable } from "../../domain/errors";
import type { AppServices } from "../../core/services";
import { LEASE_MS, releaseJob, runImportJob, uploadsDir, type ImportDeps, type RunResult } from "./imports.service";

/** Who holds a lease: host, process id, and a random part (pids are reused). */
export const newLeaseOwner = () => `${os.hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * A lease nobody can be using any more, even before it runs out: on the embedded database every
 * lease but ours is stale (PGlite allows one process per data directory), and a lease of this host
 * whose process is gone (kill -9) is too.
 */
export function staleLease(owner: string, self: string, embedded: boolean): boolean {
  if (owner === self) return false;
  if (embedded) return true;
  const [host, pid] = owner.split(":");
  return host === os.hostname() && Number(pid) !== process.pid && !processAlive(Number(pid));
}

type Candidate = { id: string; leaseOwner: string | null; leaseUntil: number | null; sourcePath: string; updatedAt: number };

/**
 * A job whose file this instance does not have is left to the instance that has it (instances share
 * DATA_DIR, or the job runs where it was uploaded); after 10 minutes without progress anywhere it is
 * taken anyway, so runImportJob fails it with a clear message instead of it staying queued for ever.
 */
const FILE_GRACE_MS = 10 * 60_000;

/**
 * The job's workspace has no older unfinished job: a workspace's imports run one at a time, in the
 * order they were made (two at once would each miss the other's uncommitted links).
 */
// Spelled with the table's name: inside the subquery a bare column would be the inner row's.
const firstInLine = sql`not exists (
  select 1 from import_jobs o
  where o.workspace_id = import_jobs.workspace_id and o.id <> import_jobs.id and o.status in ('queued', 'running')
    and (o.created_at < import_jobs.created_at or (o.created_at = import_jobs.created_at and o.id < import_jobs.id)))`;

/** Takes the job for `owner` when nobody holds it and it is first in its workspace's line, by a compare-and-set on the lease seen. */
async function takeLease(db: DbOrTx, c: Candidate, owner: string, now: number): Promise<boolean> {
  const [won] = await db
    .update(importJobs)
    .set({ status: "running", leaseOwner: owner, leaseUntil: now + LEASE_MS, updatedAt: now })
    .where(
      and(
        eq(importJobs.id, c.id),
        inArray(importJobs.status, ["queued", "running"]),
        c.leaseOwner === null ? isNull(importJobs.leaseOwner) : eq(importJobs.leaseOwner, c.leaseOwner),
        c.leaseUntil === null ? isNull(importJobs.leaseUntil) : eq(importJobs.leaseUntil, c.leaseUntil),
        firstInLine,
      ),
    )
    .returning({ id: importJobs.id });
  return Boolean(won);
}

const leaseFree = (c: Candidate, owner: string, embedded: boolean, now: number) =>
  c.leaseOwner === null || c.leaseUntil === null || c.leaseUntil < now || staleLease(c.leaseOwner, owner, embedded);

const candidateColumns = {
  id: importJobs.id,
  leaseOwner: importJobs.leaseOwner,
  leaseUntil: importJobs.leaseUntil,
  sourcePath: importJobs.sourcePath,
  updatedAt: importJobs.updatedAt,
};

/**
 * Claims the oldest unfinished job nobody holds (no lease, an expired one, or a stale one) and that
 * is first in its workspace's line, by a compare-and-set on the lease it saw, so two instances never
 * both win. Null: nothing to do.
 */
export async function claimNextJob(db: DbOrTx, owner: string, embedded: boolean, dataDir?: string): Promise<string | null> {
  const now = Date.now();
  const candidates: Candidate[] = await db
    .select(candidateColumns)
    .from(importJobs)
    .where(and(inArray(importJobs.status, ["queued", "running"]), firstInLine))
    .orderBy(asc(importJobs.createdAt))
    .limit(20);
  for (const c of candidates) {
    if (!leaseFree(c, owner, embedded, now)) continue;
    if (dataDir && !existsSync(path.join(dataDir, c.sourcePath)) && c.updatedAt > now - FILE_GRACE_MS) continue;
    if (await takeLease(db, c, owner, now)) return c.id;
  }
  return null;
}

/**
 * Claims one job for `owner` (the command line waiting for its turn): "claimed", "waiting" (another
 * import of the workspace is ahead, or someone else holds it), or "ended" (done or failed meanwhile).
 */
export async function claimJob(db: DbOrTx, id: string, owner: string, embedded: boolean): Promise<"claimed" | "waiting" | "ended"> {
  const now = Date.now();
  const [c] = await db
    .select({ ...candidateColumns, status: importJobs.status })
    .from(importJobs)
    .where(eq(importJobs.id, id));
  if (!c || c.status === "done" || c.status === "failed") return "ended";
  if (c.leaseOwner === owner) return "claimed";
  if (!leaseFree(c, owner, embedded, now)) return "waiting";
  return (await takeLease(db, c, owner, now)) ? "claimed" : "waiting";
}

/** Uploads nobody went on with (the dashboard's step between upload and start) are deleted after a day (checked hourly). */
async function sweepUploads(dataDir: string): Promise<void> {
  const dir = uploadsDir(dataDir);
  const old = Date.now() - 24 * 3600_000;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const file = path.join(dir, name);
    const s = await stat(file).catch(() => null);
    if (s && s.mtimeMs < old) await unlink(file).catch(() => {});
  }
}

export type ImportRunner = {
  /** Look for work now instead of at the next poll. */
  kick(): void;
  /** Finish the batch in progress, give the job back (it resumes at the next start) and stop. */
  stop(): Promise<void>;
  readonly owner: string;
};

const runners = new Set<ImportRunner>();
/** Wakes this process's runners (a job was just queued here). */
export function kickImportRunners(): void {
  for (const r of runners) r.kick();
}

/**
 * The import runner of a server process (started by main.ts): it claims queued jobs, and jobs whose
 * instance stopped (a released, expired or stale lease), one at a time, and runs them to the end.
 * So a job survives SIGTERM (released after the batch in progress) and kill -9 (its lease is stale
 * or runs out), and resumes at its `rows_done` with nothing imported twice.
 */
export function startImportRunner(
  app: Pick<AppServices, "config" | "database" | "db" | "invalidateSlugs" | "log">,
  opts: { pollMs?: number; batchSize?: number } = {},
): ImportRunner {
  const owner = newLeaseOwner();
  const pollMs = opts.pollMs ?? 1000;
  const embedded = app.database.driver === "pglite";
  const deps: ImportDeps = { db: app.db, config: app.config, invalidateSlugs: app.invalidateSlugs, log: app.log, driver: app.database.driver };
  let stopping = false;
  let wake: (() => void) | null = null;
  let timer: NodeJS.Timeout | undefined;
  let current: string | null = null;
  const failures = new Map<string, number>();

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      wake = resolve;
      timer = setTimeout(resolve, ms);
    }).finally(() => {
      wake = null;
      clearTimeout(timer);
    });

  let swept = 0;
  const loop = (async () => {
    while (!stopping) {
      let delay = pollMs;
      try {
        if (Date.now() - swept > 3600_000) {
          swept = Date.now();
          void sweepUploads(app.config.dataDir);
        }
        const id = await claimNextJob(app.db, owner, embedded, app.config.dataDir);
        if (id) {
          current = id;
          app.log.info({ job: id }, "import started");
          const result: RunResult = await runImportJob(deps, id, owner, { batchSize: opts.batchSize, shouldStop: () => stopping });
          app.log.info({ job: id, result }, "import ended");
          failures.delete(id);
          delay = 0;
        }
      } catch (e) {
        // A database outage waits it out; anything else is retried twice, then the job fails.
        const id = current;
        if (id && !isDatabaseUnavailable(e)) {
          const n = (failures.get(id) ?? 0) + 1;
          failures.set(id, n);
          app.log.error({ err: e, job: id, attempt: n }, "import failed");
          if (n >= 3) {
            await app.db
              .update(importJobs)
              .set({ status: "failed", error: "internal error", leaseOwner: null, leaseUntil: null, finishedAt: Date.now(), updatedAt: Date.now() })
              .where(and(eq(importJobs.id, id), eq(importJobs.leaseOwner, owner)))
              .catch(() => {});
          }
        } else app.log.warn({ err: e }, "import runner: database unavailable");
        if (id) await releaseJob(app.db, id, owner).catch(() => {});
        delay = 5000;
      } finally {
        current = null;
      }
      if (!stopping && delay) await sleep(delay);
    }
  })();

  const runner: ImportRunner = {
    owner,
    kick: () => wake?.(),
    async stop() {
      stopping = true;
      wake?.();
      runners.delete(runner);
      await loop;
    },
  };
  runners.add(runner);
  return runner;
}
