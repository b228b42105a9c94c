import { existsSync } from "node:fs";
import { mkdir, rename, unlink } from "node:fs/promises";
import path from "node:path";
import { setImmediate as tick } from "node:timers/promises";
import { and, desc, eq, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../../../db/client";
import { importJobs, memberships, users, type ImportReject } from "../../../db/schema";
import type { Config } from "../../config";
import { AppError, notFound, toPublicError, type ErrorCode, type Fields } from "../../domain/errors";
import { newId, newLinkId, randomString, BASE36 } from "../../lib/ids";
import { pickFreeSlugs } from "../../lib/slugs";
import type { Logger } from "../../lib/log";
import { LINK_CHANNEL } from "../../core/services";
import { createLinkInput, type CreateLinkInput } from "../links/links.schema";
import { checkNoLoops, PUBLIC_WORKSPACE_ID } from "../links/links.service";
import { lockWorkspace } from "../workspaces/workspace-lock";
import { csvRecords, fileDelimiter, fileError, inspectFile, type FileInspection } from "./csv-file";
import { defaultMapping, detectFormat, IMPORT_FORMATS, readRow, type ImportFormat, type Mapping } from "./formats";
import type { ImportJobDto, InspectionDto } from "./imports.schema";

/** Rejected rows kept with the job (the report); `rejected` still counts every one. */
export const MAX_STORED_REJECTS = 10_000;
/** How long a claimed job stays with its instance without news; every committed batch renews it. */
export const LEASE_MS = 60_000;

export type ImportDeps = { db: Db; config: Config; log?: Logger; driver?: "pglite" | "postgres" };
type JobRow = typeof importJobs.$inferSelect;

const rowsOf = <T>(result: unknown): T[] => (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as T[];

// ---- files -------------------------------------------------------------------------------------

/** Where a job's file is kept until the job ends: DATA_DIR/imports/<job id>.csv (a path relative to DATA_DIR in the job). */
export const jobFile = (dataDir: string, jobId: string) => path.join(dataDir, "imports", `${jobId}.csv`);
/** Uploads waiting for their column mapping: DATA_DIR/imports/uploads/<owner>-<random>.csv. */
export const uploadsDir = (dataDir: string) => path.join(dataDir, "imports", "uploads");
/** A fresh upload name; `owner` is the uploader's user id (the dashboard) or `cli`. */
export const uploadName = (owner: string) => `${owner}-${randomString(24, BASE36)}.csv`;
export const uploadOwner = (name: string) => name.slice(0, name.lastIndexOf("-"));

export async function ensureUploadsDir(dataDir: string): Promise<string> {
  const dir = uploadsDir(dataDir);
  await mkdir(dir, { recursive: true });
  return dir;
}

// ---- DTOs --------------------------------------------------------------------------------------

export function toJobDto(row: JobRow): ImportJobDto {
  return {
    id: row.id,
    status: row.status,
    format: row.format,
    mapping: Object.fromEntries(Object.entries(row.mapping ?? {}).filter(([, v]) => typeof v === "string")) as Record<string, string>,
    rows: row.rowsTotal,
    rows_done: row.rowsDone,
    created: row.created,
    skipped: row.skipped,
    rejected: row.rejected,
    rejects: row.rejects ?? [],
    error: row.error,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    finished_at: row.finishedAt,
  };
}

/** The command line's summary (extensions §3). */
export const summary = (job: ImportJobDto) => ({
  rows: job.rows ?? job.rows_done,
  created: job.created,
  skipped: job.skipped,
  rejected: job.rejected,
  rejects: job.rejects,
});

// ---- preparing a job ---------------------------------------------------------------------------

function checkMapping(mapping: Mapping, header: string[], given: boolean): Mapping {
  const clean: Mapping = {};
  const problems: string[] = [];
  for (const [field, column] of Object.entries(mapping) as [keyof Mapping, string | undefined][]) {
    if (!column) continue;
    if (!header.includes(column)) problems.push(`${field}: the header row has no column "${column}"`);
    else clean[field] = column;
  }
  if (!clean.url) {
    if (!given) {
      const names = header.filter(Boolean).slice(0, 20).join(", ");
      throw fileError(`has no column for the destination URL (its header row: ${names}); name that column url, or pick the format that wrote the file`);
    }
    problems.push("url: choose the column that holds the destination URL");
  }
  if (problems.length) throw new AppError("VALIDATION_FAILED", { fields: { mapping: problems }, message: `mapping: ${problems.join("; ")}` });
  return clean;
}

export type PreparedImport = { inspection: FileInspection; detected: ImportFormat; format: ImportFormat; mapping: Mapping };

/**
 * Reads the file once (inspectFile: size, UTF-8, CSV, header, rows) and settles the format (`auto`:
 * recognised by the header row) and the mapping (the format's default, or the one given, checked
 * against the header row). Every problem is a 400 naming `file` or `mapping`.
 */
export async function prepareImport(file: string, format: ImportFormat | "auto", mapping?: Mapping): Promise<PreparedImport> {
  const inspection = await inspectFile(file);
  const detected = detectFormat(inspection.header);
  const chosen = format === "auto" ? detected : format;
  const resolved = checkMapping(mapping ?? defaultMapping(chosen, inspection.header), inspection.header, mapping !== undefined);
  return { inspection, detected, format: chosen, mapping: resolved };
}

/** The dashboard's step between upload and start: what the file holds and how each format would read it. */
export async function inspectUpload(dataDir: string, upload: string, format: ImportFormat | "auto"): Promise<InspectionDto> {
  const file = path.join(uploadsDir(dataDir), upload);
  if (!existsSync(file)) throw new AppError("VALIDATION_FAILED", { fields: { upload: ["is gone: upload the file again"] } });
  const inspection = await inspectFile(file);
  const detected = detectFormat(inspection.header);
  const mappings = Object.fromEntries(IMPORT_FORMATS.map((f) => [f, defaultMapping(f, inspection.header) as Record<string, string>]));
  return {
    upload,
    header: inspection.header,
    rows: inspection.rows,
    preview: inspection.preview,
    detected,
    format: format === "auto" ? detected : format,
    mappings,
  };
}

/** The workspace an import goes to: the given one when the user is a member of it, else 404; by default the user's own. */
export async function importWorkspace(db: DbOrTx, userId: string, workspaceId?: string): Promise<string> {
  if (!workspaceId) {
    const [user] = await db.select({ workspaceId: users.workspaceId }).from(users).where(eq(users.id, userId));
    if (!user) throw notFound();
    return user.workspaceId;
  }
  const [member] = await db
    .select({ id: memberships.workspaceId })
    .from(memberships)
    .where(and(eq(memberships.workspaceId, workspaceId), eq(memberships.userId, userId)));
  if (!member) throw notFound();
  return member.id;
}

/**
 * Makes the job: the upload moves to DATA_DIR/imports/<job id>.csv, where it stays until the job
 * ends, and the job row is inserted (queued, or already claimed by `leaseOwner` when the caller runs
 * it itself: the command line on PostgreSQL).
 */
export async function createImportJob(
  deps: { db: DbOrTx; config: Config },
  o: { workspaceId: string; userId: string; upload: string; prepared: PreparedImport; leaseOwner?: string },
): Promise<ImportJobDto> {
  if (o.workspaceId === PUBLIC_WORKSPACE_ID) throw notFound();
  const id = newId();
  const dest = jobFile(deps.config.dataDir, id);
  await mkdir(path.dirname(dest), { recursive: true });
  try {
    await rename(o.upload, dest);
  } catch {
    // Another request started an import of this upload a moment ago.
    throw new AppError("VALIDATION_FAILED", { fields: { upload: ["is gone: upload the file again"] }, message: "upload: is gone" });
  }
  const now = Date.now();
  try {
    const [row] = await deps.db
      .insert(importJobs)
      .values({
        id,
        workspaceId: o.workspaceId,
        userId: o.userId,
        status: o.leaseOwner ? "running" : "queued",
        format: o.prepared.format,
        mapping: o.prepared.mapping as Record<string, string>,
        sourcePath: path.relative(deps.config.dataDir, dest),
        rowsTotal: o.prepared.inspection.rows,
        leaseOwner: o.leaseOwner ?? null,
        leaseUntil: o.leaseOwner ? now + LEASE_MS : null,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    return toJobDto(row);
  } catch (e) {
    await unlink(dest).catch(() => {});
    throw e;
  }
}

export async function getImportJob(db: DbOrTx, workspaceId: string, id: string): Promise<ImportJobDto> {
  const [row] = await db
    .select()
    .from(importJobs)
    .where(and(eq(importJobs.id, id), eq(importJobs.workspaceId, workspaceId)));
  if (!row) throw notFound();
  return toJobDto(row);
}

/** The workspace's recent imports, newest first, without their reports. */
export async function listImportJobs(db: DbOrTx, workspaceId: string, limit = 10): Promise<ImportJobDto[]> {
  const rows = await db.select().from(importJobs).where(eq(importJobs.workspaceId, workspaceId)).orderBy(desc(importJobs.createdAt)).limit(limit);
  return rows.map((r) => ({ ...toJobDto(r), rejects: [] }));
}

// ---- rows --------------------------------------------------------------------------------------

type Placed = { row: number; input: CreateLinkInput; createdAt?: number };
type Checked = { ok: Placed } | { reject: ImportReject };

const reject = (row: number, error: string, fields?: Fields): { reject: ImportReject } => ({
  reject: fields && Object.keys(fields).length ? { row, error, fields } : { row, error },
});

/**
 * One CSV record through the same checks as a POST /links body (its schema, then the loop check),
 * plus the import's own: no more cells than the header row has, times that parse.
 */
export function checkRow(
  config: Config,
  format: ImportFormat,
  mapping: Mapping,
  columns: Map<string, number>,
  width: number,
  row: number,
  record: string[],
): Checked {
  if (record.length > width) return reject(row, "VALIDATION_FAILED", { row: [`has ${record.length} columns; the header row has ${width}`] });
  const candidate = readRow(format, mapping, columns, record);
  let error: string | undefined;
  const fields: Fields = {};
  const parsed = createLinkInput.safeParse(candidate.body);
  if (!parsed.success) {
    const pub = toPublicError(parsed.error).body;
    error = pub.error;
    Object.assign(fields, pub.fields);
  } else {
    try {
      checkNoLoops(config, parsed.data);
    } catch (e) {
      if (!(e instanceof AppError)) throw e;
      error = e.publicCode;
      Object.assign(fields, e.fields);
    }
  }
  for (const [k, v] of Object.entries(candidate.fields)) fields[k] = [...(fields[k] ?? []), ...v];
  if (error || Object.keys(fields).length) return reject(row, error ?? "VALIDATION_FAILED", fields);
  return { ok: { row, input: parsed.data!, createdAt: candidate.createdAt } };
}

const json = (v: unknown) => JSON.stringify(v);

type LinkOwner = { slug: string; url: string; workspace_id: string; kind: string };

async function owners(tx: DbOrTx, slugs: string[]): Promise<Map<string, LinkOwner>> {
  if (!slugs.length) return new Map();
  const rows = rowsOf<LinkOwner>(
    await tx.execute(sql`
      select slug, url, workspace_id, kind from links
      where slug = any(array(select json_array_elements_text(${json(slugs)}::json))) and deleted_at is null and domain_id is null`),
  );
  return new Map(rows.map((r) => [r.slug, r]));
}

type BatchOutcome = { created: string[]; skipped: number; rejects: ImportReject[] };

/**
 * Puts a batch's valid rows into the workspace, inside the caller's transaction. A slug already
 * pointing at the same URL in the workspace (or earlier in the batch) is skipped; taken otherwise,
 * LINK_ID_ALREADY_IN_USE. A row without slug is skipped when the workspace already links to its
 * URL (so a second run of a file creates nothing), else gets a generated slug. The unique index
 * decides races with concurrent writers (ON CONFLICT DO NOTHING, then a second look).
 */
async function placeRows(tx: DbOrTx, workspaceId: string, rows: Placed[]): Promise<BatchOutcome> {
  const out: BatchOutcome = { created: [], skipped: 0, rejects: [] };
  const now = Date.now();
  const sameLink = (o: LinkOwner | undefined, url: string) => o !== undefined && o.workspace_id === workspaceId && o.url === url && o.kind === "link";
  const settle = (p: Placed, owner: LinkOwner | undefined) => {
    if (sameLink(owner, p.input.url)) out.skipped++;
    else out.rejects.push({ row: p.row, error: "LINK_ID_ALREADY_IN_USE" satisfies ErrorCode });
  };

  const withSlug = rows.filter((r) => r.input.slug !== undefined);
  const existing = await owners(tx, [...new Set(withSlug.map((r) => r.input.slug!))]);
  const claimed = new Map<string, LinkOwner>();
  const toInsert: { p: Placed; slug: string; generated: boolean }[] = [];
  for (const p of withSlug) {
    const slug = p.input.slug!;
    const owner = claimed.get(slug) ?? existing.get(slug);
    if (owner) settle(p, owner);
    else {
      claimed.set(slug, { slug, url: p.input.url, workspace_id: workspaceId, kind: "link" });
      toInsert.push({ p, slug, generated: false });
    }
  }

  let needSlug: Placed[] = [];
  const noSlug = rows.filter((r) => r.input.slug === undefined);
  if (noSlug.length) {
    const linked = new Set(
      rowsOf<{ url: string }>(
        await tx.execute(sql`
          select distinct url from links
          where url = any(array(select json_array_elements_text(${json([...new Set(noSlug.map((r) => r.input.url))])}::json)))
            and workspace_id = ${workspaceId} and kind = 'link' and deleted_at is null`),
      ).map((r) => r.url),
    );
    for (const o of claimed.values()) linked.add(o.url);
    for (const p of noSlug) {
      if (linked.has(p.input.url)) out.skipped++;
      else {
        linked.add(p.input.url);
        needSlug.push(p);
      }
    }
  }

  for (let round = 0; toInsert.length || needSlug.length; round++) {
    if (needSlug.length) {
      const slugs = round < 8 ? await pickFreeSlugs(tx, needSlug.length) : [];
      needSlug.forEach((p, i) => {
        if (slugs[i]) toInsert.push({ p, slug: slugs[i], generated: true });
        else out.rejects.push({ row: p.row, error: "SLUGS_EXHAUSTED" satisfies ErrorCode });
      });
      needSlug = [];
    }
    if (!toInsert.length) break;
    const values = toInsert.map(({ p, slug }) => ({
      id: newLinkId(),
      slug,
      url: p.input.url,
      tags: p.input.tags ?? [],
      expires_at: p.input.expires_at ?? null,
      og_title: p.input.og_title || null,
      og_description: p.input.og_description || null,
      created_at: p.createdAt ?? now,
      updated_at: Math.max(now, p.createdAt ?? now),
    }));
    // One JSON parameter for the whole batch: a thousand rows' worth of bound parameters costs more to build than to insert.
    const inserted = new Set(
      rowsOf<{ slug: string }>(
        await tx.execute(sql`
          insert into links (id, workspace_id, slug, url, kind, tags, expires_at, og_title, og_description, created_at, updated_at)
          select r.id, ${workspaceId}, r.slug, r.url, 'link', r.tags, r.expires_at, r.og_title, r.og_description, r.created_at, r.updated_at
          from json_to_recordset(${json(values)}::json) as r(
            id text, slug text, url text, tags text[], expires_at bigint, og_title text, og_description text, created_at bigint, updated_at bigint)
          on conflict do nothing
          returning slug`),
      ).map((r) => r.slug),
    );
    const lost = toInsert.filter((x) => !inserted.has(x.slug));
    out.created.push(...toInsert.filter((x) => inserted.has(x.slug)).map((x) => x.slug));
    toInsert.length = 0;
    if (!lost.length) break;
    // Taken meanwhile by another writer (or, once in a blue moon, an id drawn twice): look again.
    const now2 = await owners(
      tx,
      lost.filter((x) => !x.generated).map((x) => x.slug),
    );
    for (const x of lost) {
      if (x.generated) needSlug.push(x.p);
      else if (now2.has(x.slug)) settle(x.p, now2.get(x.slug));
      else toInsert.push(x);
    }
  }
  out.rejects.sort((a, b) => a.row - b.row);
  return out;
}

// ---- running a job -----------------------------------------------------------------------------

export type JobProgress = Pick<ImportJobDto, "rows" | "rows_done" | "created" | "skipped" | "rejected">;

/**
 * Commits one batch: in one transaction the job row is locked and checked (still ours, still at
 * `from`), the batch's links go in, and the job's counters, report and cursor move past the batch.
 * A stop at any point either committed all of it or none of it. Null: the job is no longer ours.
 */
async function commitBatch(deps: ImportDeps, job: JobRow, owner: string, from: number, batch: Checked[]): Promise<JobProgress | null> {
  return deps.db.transaction(async (tx) => {
    // The workspace before the job row, in the order its deletion takes them; gone: so is the job.
    if (!(await lockWorkspace(tx, job.workspaceId))) return null;
    const now = Date.now();
    const [locked] = await tx
      .update(importJobs)
      .set({ leaseUntil: now + LEASE_MS, updatedAt: now })
      .where(and(eq(importJobs.id, job.id), eq(importJobs.leaseOwner, owner), eq(importJobs.rowsDone, from)))
      .returning({ rejected: importJobs.rejected });
    if (!locked) return null;
    const ok = batch.flatMap((c) => ("ok" in c ? [c.ok] : []));
    const outcome = await placeRows(tx, job.workspaceId, ok);
    const rejects = [...batch.flatMap((c) => ("reject" in c ? [c.reject] : [])), ...outcome.rejects].sort((a, b) => a.row - b.row);
    const room = Math.max(0, MAX_STORED_REJECTS - locked.rejected);
    const [row] = await tx
      .update(importJobs)
      .set({
        rowsDone: from + batch.length,
        created: sql`${importJobs.created} + ${outcome.created.length}`,
        skipped: sql`${importJobs.skipped} + ${outcome.skipped}`,
        rejected: sql`${importJobs.rejected} + ${rejects.length}`,
        ...(room && rejects.length ? { rejects: sql`${importJobs.rejects} || ${json(rejects.slice(0, room))}::jsonb` } : {}),
        updatedAt: now,
      })
      .where(eq(importJobs.id, job.id))
      .returning({
        rows: importJobs.rowsTotal,
        rows_done: importJobs.rowsDone,
        created: importJobs.created,
        skipped: importJobs.skipped,
        rejected: importJobs.rejected,
      });
    // Every instance drops a cached "unknown slug" for the new links when this commits.
    if (outcome.created.length) await tx.execute(sql`select pg_notify(${LINK_CHANNEL}, s) from json_array_elements_text(${json(outcome.created)}::json) s`);
    return row;
  });
}

async function endJob(deps: ImportDeps, job: JobRow, owner: string, set: Partial<JobRow>): Promise<boolean> {
  const now = Date.now();
  const [row] = await deps.db
    .update(importJobs)
    .set({ ...set, leaseOwner: null, leaseUntil: null, finishedAt: now, updatedAt: now })
    .where(and(eq(importJobs.id, job.id), eq(importJobs.leaseOwner, owner)))
    .returning({ id: importJobs.id });
  if (row) await unlink(path.join(deps.config.dataDir, job.sourcePath)).catch(() => {});
  return Boolean(row);
}

/** Gives the job back (a graceful stop): another instance, or this one after a restart, resumes at `rows_done`. */
export async function releaseJob(db: DbOrTx, jobId: string, owner: string): Promise<void> {
  await db
    .update(importJobs)
    .set({ leaseOwner: null, leaseUntil: null, updatedAt: Date.now() })
    .where(and(eq(importJobs.id, jobId), eq(importJobs.leaseOwner, owner)));
}

export type RunOptions = {
  /** Rows per transaction. */
  batchSize?: number;
  /** Asked before each batch: true gives the job back (graceful stop) instead of going on. */
  shouldStop?: () => boolean;
  onProgress?: (p: JobProgress) => void;
};

export type RunResult = "done" | "failed" | "stopped" | "lost";

/**
 * Runs a job this owner holds the lease of, from `rows_done` to the end of its file: the file is
 * streamed through csv-parse (the rows already decided are read past, not imported again), rows
 * are checked as they arrive and committed in batches (commitBatch). At the end the job is done
 * and its file deleted; a file-level problem fails it.
 */
export async function runImportJob(deps: ImportDeps, jobId: string, owner: string, opts: RunOptions = {}): Promise<RunResult> {
  // PGlite runs one transaction at a time: smaller batches keep other requests' waits short.
  const batchSize = opts.batchSize ?? (deps.driver === "pglite" ? 250 : 1000);
  const [job] = await deps.db.select().from(importJobs).where(eq(importJobs.id, jobId));
  if (!job || job.leaseOwner !== owner || (job.status !== "running" && job.status !== "queued")) return "lost";
  const file = path.join(deps.config.dataDir, job.sourcePath);
  if (!existsSync(file)) {
    await endJob(deps, job, owner, { status: "failed", error: "the uploaded file is no longer in DATA_DIR/imports" });
    return "failed";
  }
  if (job.status === "queued") await deps.db.update(importJobs).set({ status: "running" }).where(eq(importJobs.id, job.id));
  const format = (IMPORT_FORMATS as readonly string[]).includes(job.format) ? (job.format as ImportFormat) : "generic";
  const mapping = (job.mapping ?? {}) as Mapping;
  let done = job.rowsDone;
  let header: string[] | undefined;
  const columns = new Map<string, number>();
  let row = 0;
  let batch: Checked[] = [];
  const flush = async (): Promise<RunResult | null> => {
    if (opts.shouldStop?.()) {
      await releaseJob(deps.db, job.id, owner);
      return "stopped";
    }
    const progress = await commitBatch(deps, job, owner, done, batch);
    if (!progress) return "lost";
    done = progress.rows_done;
    batch = [];
    opts.onProgress?.(progress);
    await tick(); // let requests in between batches
    return null;
  };
  try {
    for await (const record of csvRecords(file, await fileDelimiter(file))) {
      if (!header) {
        header = record.map((h) => h.trim());
        for (const [i, h] of header.entries()) if (!columns.has(h)) columns.set(h, i);
        continue;
      }
      if (++row <= done) continue;
      batch.push(checkRow(deps.config, format, mapping, columns, header.length, row, record));
      if (batch.length >= batchSize) {
        const stop = await flush();
        if (stop) return stop;
      }
    }
    if (batch.length) {
      const stop = await flush();
      if (stop) return stop;
    }
  } catch (e) {
    if (!(e instanceof AppError) || !e.fields?.file) throw e;
    // The file changed or broke after it was checked: what went in stays, the rest is reported.
    await endJob(deps, job, owner, { status: "failed", error: `The file ${e.fields.file[0]}` });
    return "failed";
  }
  return (await endJob(deps, job, owner, { status: "done", rowsTotal: done })) ? "done" : "lost";
}
