import { existsSync } from "node:fs";
import { mkdir, readdir, rename, statfs, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { setImmediate as tick } from "node:timers/promises";
import { and, desc, eq, inArray, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../../../db/client";
import { domains, importJobs, memberships, users, type ImportMoved, type ImportOptions, type ImportReject } from "../../../db/schema";
import type { Config } from "../../config";
import { AppError, notFound, toPublicError, type ErrorCode, type Fields } from "../../domain/errors";
import { newLinkId, newPublicId, randomString, BASE36 } from "../../lib/ids";
import { pickFreeDomainSlug, pickFreeSlugs } from "../../lib/slugs";
import { linkCacheKey } from "../../core/lookup";
import type { Logger } from "../../lib/log";
import type { AppServices } from "../../core/services";
import { createLinkInput, type CreateLinkInput } from "../links";
import { checkNoLoops, PUBLIC_WORKSPACE_ID, shortUrl } from "../links";
import { createdLinkEvents, inLinkTransaction, insertImportedLinks, type LinkTx } from "../links";
import { lockWorkspace } from "../workspaces";
import { writeAuditEvents } from "../../trpc/audit";
import { csvRecords, fileDelimiter, fileError, IMPORT_MAX_BYTES, inspectFile, type FileInspection } from "./csv-file";
import { defaultMapping, detectFormat, IMPORT_FORMATS, readRow, type ImportFormat, type Mapping } from "./formats";
import type { ImportJobDto, InspectionDto } from "./imports.schema";

/** Rejected rows kept with the job (the report); `rejected` still counts every one. */
export const MAX_STORED_REJECTS = 10_000;
/** How long a claimed job stays with its instance without news; every committed batch renews it. */
export const LEASE_MS = 60_000;

/** What a job needs to run; `invalidateSlugs` drops the new links' cached "unknown slug" once each batch commits. */
export type ImportDeps = { db: Db; config: Config; invalidateSlugs: AppServices["invalidateSlugs"]; log?: Logger; driver?: "pglite" | "postgres" };
type JobRow = typeof importJobs.$inferSelect;

const rowsOf = <T>(result: unknown): T[] => (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as T[];

// ---- files -------------------------------------------------------------------------------------

/** Where a job's file is kept until the job ends: DATA_DIR/imports/<job id>.csv (a path relative to DATA_DIR in the job). */
export const jobFile = (dataDir: string, jobId: string) => path.join(dataDir, "imports", `${jobId}.csv`);
/** Uploads waiting for their column mapping: DATA_DIR/imports/uploads/<owner>-<random>.csv. */
export const uploadsDir = (dataDir: string) => path.join(dataDir, "imports", "uploads");
/** A fresh upload name; `owner` is `<workspace id>-<user id>` (the dashboard) or `cli`. */
export const uploadName = (owner: string) => `${owner}-${randomString(24, BASE36)}.csv`;
export const uploadOwner = (name: string) => name.slice(0, name.lastIndexOf("-"));
/** Whose a dashboard upload is: one workspace and its uploader. */
export const dashboardUploadOwner = (workspaceId: string, userId: string) => `${workspaceId}-${userId}`;

/**
 * Room kept free on DATA_DIR's disk beside an upload: the embedded database, the click spool and
 * the logs live there too, and a full disk stops clicks from being made durable.
 */
export const UPLOAD_DISK_RESERVE = 256 * 1024 * 1024;

/** 507 INSUFFICIENT_STORAGE naming `file`: the upload is refused before any byte of it is written. */
const noRoom = (free: number) =>
  new AppError("INSUFFICIENT_STORAGE", {
    fields: { file: [`cannot be stored now: the server's disk has ${(free / 1024 / 1024).toFixed(0)} MB free; try again later or ask the operator`] },
    message: "file: the server's disk is nearly full",
  });

/**
 * Makes room for one dashboard upload of `bytes` (at most IMPORT_MAX_BYTES): the disk must keep
 * `reserve` free beyond it (else 507 INSUFFICIENT_STORAGE), and a workspace keeps one staged upload
 * (the one waiting for its column mapping): an earlier one of the workspace is deleted. Answers the
 * directory and the new upload's name.
 */
export async function stageUpload(
  dataDir: string,
  o: { workspaceId: string; userId: string; bytes: number; reserve?: number },
): Promise<{ dir: string; name: string }> {
  const dir = await ensureUploadsDir(dataDir);
  const fs = await statfs(dir);
  const free = Number(fs.bavail) * Number(fs.bsize);
  if (free < Math.min(o.bytes, IMPORT_MAX_BYTES) + (o.reserve ?? UPLOAD_DISK_RESERVE)) throw noRoom(free);
  const prefix = `${o.workspaceId}-`;
  for (const name of await readdir(dir).catch(() => [] as string[])) if (name.startsWith(prefix)) await unlink(path.join(dir, name)).catch(() => {});
  return { dir, name: uploadName(dashboardUploadOwner(o.workspaceId, o.userId)) };
}

/** A script's CSV text (POST /imports, at most a request body's 64 KiB) as a staged file of its own, beside any upload the dashboard keeps. */
export async function stageText(dataDir: string, owner: string, text: string): Promise<string> {
  const file = path.join(await ensureUploadsDir(dataDir), uploadName(owner));
  await writeFile(file, text);
  return file;
}

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
    moved: row.moved ?? [],
    on_conflict: row.options?.on_conflict ?? "reject",
    title_to: row.options?.title_to ?? "title",
    error: row.error,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    finished_at: row.finishedAt,
  };
}

/** The command line's summary (docs/import-formats.md). */
export const summary = (job: ImportJobDto) => ({
  rows: job.rows ?? job.rows_done,
  created: job.created,
  skipped: job.skipped,
  rejected: job.rejected,
  rejects: job.rejects,
  // Rows whose slug was taken and that went in under a new short URL (only when the job's rule moved some).
  ...(job.moved.length ? { moved: job.moved } : {}),
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
 * ends, and the job row is inserted. A workspace's imports run one at a time, oldest first (two at
 * once would each miss the other's uncommitted links and create the same URL twice): the job is
 * queued behind any unfinished one, and only the workspace's oldest unfinished job can be claimed.
 * `leaseOwner`: the caller runs it itself (the command line on PostgreSQL) when it is first in line;
 * otherwise it is queued and the caller waits for its turn (claimJob).
 */
export async function createImportJob(
  deps: { db: DbOrTx; config: Config },
  o: { workspaceId: string; userId: string; tokenId?: string; upload: string; prepared: PreparedImport; leaseOwner?: string; options?: ImportOptions },
): Promise<ImportJobDto> {
  if (o.workspaceId === PUBLIC_WORKSPACE_ID) throw notFound();
  const id = newPublicId();
  const dest = jobFile(deps.config.dataDir, id);
  await mkdir(path.dirname(dest), { recursive: true });
  try {
    await rename(o.upload, dest);
  } catch {
    // Another request started an import of this upload a moment ago.
    throw new AppError("VALIDATION_FAILED", { fields: { upload: ["is gone: upload the file again"] }, message: "upload: is gone" });
  }
  try {
    const row = await deps.db.transaction(async (tx) => {
      // One creator at a time per workspace, so the line's order is the order of created_at.
      await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`import_jobs:${o.workspaceId}`}, 0))`);
      const [ahead] = await tx
        .select({ createdAt: importJobs.createdAt })
        .from(importJobs)
        .where(and(eq(importJobs.workspaceId, o.workspaceId), inArray(importJobs.status, ["queued", "running"])))
        .orderBy(desc(importJobs.createdAt))
        .limit(1);
      const [last] = ahead
        ? [ahead]
        : await tx
            .select({ createdAt: importJobs.createdAt })
            .from(importJobs)
            .where(eq(importJobs.workspaceId, o.workspaceId))
            .orderBy(desc(importJobs.createdAt))
            .limit(1);
      const now = Math.max(Date.now(), (last?.createdAt ?? 0) + 1);
      const runNow = o.leaseOwner !== undefined && !ahead;
      const [inserted] = await tx
        .insert(importJobs)
        .values({
          id,
          workspaceId: o.workspaceId,
          userId: o.userId,
          tokenId: o.tokenId ?? null,
          status: runNow ? "running" : "queued",
          format: o.prepared.format,
          mapping: o.prepared.mapping as Record<string, string>,
          options: o.options ?? {},
          sourcePath: path.relative(deps.config.dataDir, dest),
          rowsTotal: o.prepared.inspection.rows,
          leaseOwner: runNow ? o.leaseOwner! : null,
          leaseUntil: runNow ? now + LEASE_MS : null,
          createdAt: now,
          updatedAt: now,
        })
        .returning();
      return inserted;
    });
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
  return rows.map((r) => ({ ...toJobDto(r), rejects: [], moved: [] }));
}

// ---- rows --------------------------------------------------------------------------------------

type Placed = { row: number; input: CreateLinkInput; createdAt?: number };
/** A rejected row's own slug, URL and domain, when those are valid: if that link is already there, the row is skipped instead. */
type Present = { slug: string; url: string; domain: string | null };
type Checked = { ok: Placed } | { reject: ImportReject; present?: Present };

/** What the file said a row's slug and URL were: the report shows them beside the reason. */
type Said = { slug?: string; url?: string };
const cut = (v: unknown, max = 200) => (typeof v === "string" && v ? (v.length > max ? v.slice(0, max) + "…" : v) : undefined);
const said = (body: Record<string, unknown>): Said => ({ slug: cut(body.slug, 60), url: cut(body.url, 300) });

/**
 * The row's slug, URL and domain when they are valid on their own: a row that cannot be created (an
 * expiry now past, a password no export carries, any other field) is still skipped when its slug
 * already points at its URL in the workspace, so an export imports back, and a file runs twice,
 * without a reject for a link that is there.
 */
function presentOf(body: Record<string, unknown>): Present | undefined {
  if (body.slug === undefined) return undefined;
  const p = createLinkInput.safeParse({ url: body.url, slug: body.slug, ...(body.domain ? { domain: body.domain } : {}) });
  return p.success && p.data.slug !== undefined ? { slug: p.data.slug, url: p.data.url, domain: p.data.domain ?? null } : undefined;
}

const reject = (row: number, error: string, fields?: Fields, from: Said = {}): { reject: ImportReject } => ({
  reject: {
    row,
    error,
    ...(from.slug ? { slug: from.slug } : {}),
    ...(from.url ? { url: from.url } : {}),
    ...(fields && Object.keys(fields).length ? { fields } : {}),
  },
});

/** Where the source's title goes (the dashboard's mapping step): the label people see, the share card's title, or nowhere. */
export const TITLE_TARGETS = ["title", "og_title", "ignore"] as const;
export type TitleTarget = (typeof TITLE_TARGETS)[number];
/** What a row whose slug is taken does: rejected, a generated slug instead, or the same slug on a verified domain of the workspace. */
export type OnConflict = "reject" | "generate" | `domain:${string}`;
export const ON_CONFLICT_RE = /^(reject|generate|domain:[0-9a-z.-]{1,253})$/;

/** Longest share-card title (POST /links's og_title). */
const OG_TITLE_MAX = 120;

/**
 * One CSV record through the same checks as a POST /links body (its schema, then the loop check),
 * plus the import's own: no more cells than the header row has, times that parse, and no link that
 * had a visit password (no export carries it, so it would become public: PASSWORD_NOT_EXPORTABLE).
 */
export function checkRow(
  config: Config,
  format: ImportFormat,
  mapping: Mapping,
  columns: Map<string, number>,
  width: number,
  row: number,
  record: string[],
  titleTo: TitleTarget = "title",
): Checked {
  if (record.length > width) return reject(row, "VALIDATION_FAILED", { row: [`has ${record.length} columns; the header row has ${width}`] });
  const candidate = readRow(format, mapping, columns, record);
  const from = said(candidate.body);
  if ((candidate as { passwordProtected?: boolean }).passwordProtected) {
    return {
      ...reject(
        row,
        "PASSWORD_NOT_EXPORTABLE",
        { password: ["the link had a visit password, which no export carries; it was not imported, so it does not become public"] },
        from,
      ),
      present: presentOf(candidate.body),
    };
  }
  const body = { ...candidate.body };
  if (typeof body.title === "string") {
    if (titleTo === "og_title" && body.og_title === undefined) body.og_title = cut(body.title, OG_TITLE_MAX - 1);
    if (titleTo !== "title") delete body.title;
  }
  let error: string | undefined;
  const fields: Fields = {};
  const parsed = createLinkInput.safeParse(body);
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
  if (error || Object.keys(fields).length) return { ...reject(row, error ?? "VALIDATION_FAILED", fields, from), present: presentOf(body) };
  return { ok: { row, input: parsed.data!, createdAt: candidate.createdAt } };
}

const json = (v: unknown) => JSON.stringify(v);

type LinkOwner = { slug: string; url: string; workspace_id: string; kind: string; domain_id: string | null };
/** A slug's place: its domain (null: the default redirect domain) and the slug. */
const placeKey = (domainId: string | null, slug: string) => linkCacheKey(domainId, slug);

async function owners(tx: DbOrTx, slugs: string[], domainIds: string[]): Promise<Map<string, LinkOwner>> {
  if (!slugs.length) return new Map();
  const rows = rowsOf<LinkOwner>(
    await tx.execute(sql`
      select slug, url, workspace_id, kind, domain_id from links
      where slug = any(array(select json_array_elements_text(${json(slugs)}::json))) and deleted_at is null
        and (domain_id is null or domain_id = any(array(select json_array_elements_text(${json(domainIds)}::json))))`),
  );
  return new Map(rows.map((r) => [placeKey(r.domain_id, r.slug), r]));
}

/** What a job knows while it places rows: the workspace, its verified domains, the taken-slug rule, how short URLs read. */
export type PlaceContext = {
  workspaceId: string;
  /** Verified domains of the workspace, by name. */
  domains: Map<string, string>;
  onConflict: { kind: "reject" } | { kind: "generate" } | { kind: "domain"; id: string; name: string };
  shortUrl: (domainName: string | null, slug: string) => string;
};

/** `created`: the new links' ids. */
type BatchOutcome = { created: string[]; skipped: number; rejects: ImportReject[]; moved: ImportMoved[] };
type Target = { p: Placed; domainId: string | null; domainName: string | null; slug: string; generated: boolean; movedFrom?: string };

/**
 * Puts a batch's valid rows into the workspace, inside the caller's transaction. A slug already
 * pointing at the same URL in the workspace (or earlier in the batch) is skipped; taken otherwise,
 * the job's rule decides: LINK_ID_ALREADY_IN_USE, a generated slug, or the same slug on the domain
 * named (each new short URL is in `moved`). A row without slug is skipped when the workspace already
 * links to its URL (so a second run of a file creates nothing), else gets a generated slug. The
 * unique indexes decide races with concurrent writers (ON CONFLICT DO NOTHING, then a second look).
 */
async function placeRows(lt: LinkTx, ctx: PlaceContext, rows: Placed[], rejected: { reject: ImportReject; present: Present }[] = []): Promise<BatchOutcome> {
  const placer = new RowPlacer(lt, ctx);
  const placed = placer.onTheirDomains(rows);
  await placer.claimOwnSlugs(placed.filter((r) => r.p.input.slug !== undefined));
  await placer.skipPresent(rejected);
  await placer.skipLinkedUrls(placed.filter((r) => r.p.input.slug === undefined).map((r) => ({ ...r, slug: "", generated: true })));
  for (let round = 0; placer.pending(); round++) {
    await placer.generateSlugs(round);
    const lost = await placer.insert();
    if (!lost.length) break;
    await placer.lookAgain(lost);
  }
  return placer.outcome();
}

/** One batch's placing: what is claimed so far, what waits for insertion or a generated slug, and the outcome. */
class RowPlacer {
  private readonly out: BatchOutcome = { created: [], skipped: 0, rejects: [], moved: [] };
  private readonly now = Date.now();
  private readonly domainIds: string[];
  /** Places this batch took, so a later row of the batch sees them. */
  private readonly claimed = new Map<string, LinkOwner>();
  private existing = new Map<string, LinkOwner>();
  private toInsert: Target[] = [];
  private needSlug: Target[] = [];
  /** Rows without a slug of their own, or whose slug the conflict rule replaces. */
  private readonly noSlug: Target[] = [];

  constructor(
    private readonly lt: LinkTx,
    private readonly ctx: PlaceContext,
  ) {
    this.domainIds = [...new Set([...ctx.domains.values()])];
  }

  pending(): boolean {
    return this.toInsert.length > 0 || this.needSlug.length > 0;
  }

  outcome(): BatchOutcome {
    this.out.rejects.sort((a, b) => a.row - b.row);
    this.out.moved.sort((a, b) => a.row - b.row);
    return this.out;
  }

  /** Each row's domain: its own (a verified domain of the workspace), else the default one. */
  onTheirDomains(rows: Placed[]): { p: Placed; domainId: string | null; domainName: string | null }[] {
    const placed: { p: Placed; domainId: string | null; domainName: string | null }[] = [];
    for (const p of rows) {
      const name = (p.input as { domain?: string | null }).domain ?? null;
      if (!name) placed.push({ p, domainId: null, domainName: null });
      else if (this.ctx.domains.has(name)) placed.push({ p, domainId: this.ctx.domains.get(name)!, domainName: name });
      else this.out.rejects.push(reject(p.row, "VALIDATION_FAILED", { domain: ["is not a verified domain of this workspace"] }, fromRow(p)).reject);
    }
    return placed;
  }

  /** Rows with a slug: free places are claimed; a taken one goes by the job's conflict rule. */
  async claimOwnSlugs(withSlug: { p: Placed; domainId: string | null; domainName: string | null }[]): Promise<void> {
    const { onConflict } = this.ctx;
    this.existing = await owners(this.lt.db, [...new Set(withSlug.map((r) => r.p.input.slug!))], this.domainIds);
    for (const r of withSlug) {
      const slug = r.p.input.slug!;
      const owner = this.ownerOf(placeKey(r.domainId, slug));
      const t: Target = { ...r, slug, generated: false };
      if (!owner) this.claim(t);
      else if (this.sameLink(owner, r.p.input.url)) this.out.skipped++;
      else if (onConflict.kind === "generate") this.noSlug.push({ ...t, movedFrom: slug });
      else if (onConflict.kind === "domain" && onConflict.id !== r.domainId) {
        const there = { ...t, domainId: onConflict.id, domainName: onConflict.name, movedFrom: slug };
        const other = this.ownerOf(placeKey(there.domainId, slug));
        if (!other) this.claim(there);
        else if (this.sameLink(other, r.p.input.url)) this.out.skipped++;
        else this.taken(r, onConflict.name);
      } else this.taken(r);
    }
  }

  /** Rejected rows whose link is already there (their slug on their domain, at their URL, in the workspace) are skipped; the rest stay rejected. */
  async skipPresent(rows: { reject: ImportReject; present: Present }[]): Promise<void> {
    if (!rows.length) return;
    const there = await owners(this.lt.db, [...new Set(rows.map((r) => r.present.slug))], this.domainIds);
    for (const { reject: why, present } of rows) {
      const domainId = present.domain === null ? null : this.ctx.domains.get(present.domain);
      const key = domainId === undefined ? undefined : placeKey(domainId, present.slug);
      if (key !== undefined && this.sameLink(this.claimed.get(key) ?? there.get(key), present.url)) this.out.skipped++;
      else this.out.rejects.push(why);
    }
  }

  /** Rows that need a generated slug are skipped when the workspace (or the batch) already links to their URL. */
  async skipLinkedUrls(withoutSlug: Target[]): Promise<void> {
    const rows = [...this.noSlug, ...withoutSlug];
    if (!rows.length) return;
    const linked = new Set(
      rowsOf<{ url: string }>(
        await this.lt.db.execute(sql`
          select distinct url from links
          where url = any(array(select json_array_elements_text(${json([...new Set(rows.map((r) => r.p.input.url))])}::json)))
            and workspace_id = ${this.ctx.workspaceId} and kind = 'link' and deleted_at is null`),
      ).map((r) => r.url),
    );
    for (const o of this.claimed.values()) linked.add(o.url);
    for (const t of rows) {
      if (linked.has(t.p.input.url)) this.out.skipped++;
      else {
        linked.add(t.p.input.url);
        this.needSlug.push(t);
      }
    }
  }

  /** Free slugs for the rows waiting for one; after 8 rounds of losing races, the rest are refused. */
  async generateSlugs(round: number): Promise<void> {
    if (!this.needSlug.length) return;
    const tx = this.lt.db;
    const onDefault = this.needSlug.filter((t) => t.domainId === null);
    const slugs = round < 8 ? await pickFreeSlugs(tx, onDefault.length) : [];
    onDefault.forEach((t, i) => {
      if (slugs[i]) this.toInsert.push({ ...t, slug: slugs[i], generated: true });
      else this.out.rejects.push(reject(t.p.row, "SLUGS_EXHAUSTED" satisfies ErrorCode, { slug: ["no generated slug is free"] }, fromRow(t.p)).reject);
    });
    for (const t of this.needSlug.filter((x) => x.domainId !== null)) {
      const slug = round < 8 ? await pickFreeDomainSlug(tx, t.domainId!).catch(() => "") : "";
      if (slug) this.toInsert.push({ ...t, slug, generated: true });
      else
        this.out.rejects.push(
          reject(t.p.row, "SLUGS_EXHAUSTED" satisfies ErrorCode, { slug: [`no generated slug is free${onDomain(t.domainName)}`] }, fromRow(t.p)).reject,
        );
    }
    this.needSlug = [];
  }

  /** Inserts what waits; answers the rows whose place another writer took meanwhile. */
  async insert(): Promise<Target[]> {
    if (!this.toInsert.length) return [];
    const { now, ctx } = this;
    const values = this.toInsert.map(({ p, slug, domainId }) => ({
      id: newLinkId(),
      slug,
      domain_id: domainId,
      url: p.input.url,
      title: (p.input as { title?: string | null }).title || null,
      tags: p.input.tags ?? [],
      expires_at: p.input.expires_at ?? null,
      expiration_url: p.input.expiration_url ?? null,
      targeting: p.input.targeting ?? null,
      og_title: p.input.og_title || null,
      og_description: p.input.og_description || null,
      og_image: p.input.og_image ?? null,
      forward_query: p.input.forward_query ?? false,
      variants: p.input.variants ?? null,
      archived_at: p.input.archived ? now : null,
      created_at: p.createdAt ?? now,
      updated_at: Math.max(now, p.createdAt ?? now),
    }));
    const inserted = await insertImportedLinks(this.lt, ctx.workspaceId, values);
    const lost: Target[] = [];
    this.toInsert.forEach((t, i) => {
      if (!inserted.has(values[i].id)) return void lost.push(t);
      this.out.created.push(values[i].id);
      if (t.movedFrom !== undefined)
        this.out.moved.push({ row: t.p.row, slug: t.movedFrom, url: t.p.input.url, short_url: ctx.shortUrl(t.domainName, t.slug) });
    });
    this.toInsert = [];
    return lost;
  }

  /** Places taken meanwhile by another writer (or, once in a blue moon, an id drawn twice): look again. */
  async lookAgain(lost: Target[]): Promise<void> {
    const now = await owners(
      this.lt.db,
      lost.filter((x) => !x.generated).map((x) => x.slug),
      this.domainIds,
    );
    for (const x of lost) {
      const owner = now.get(placeKey(x.domainId, x.slug));
      if (x.generated) this.needSlug.push(x);
      else if (!owner) this.toInsert.push(x);
      else if (this.sameLink(owner, x.p.input.url)) this.out.skipped++;
      else this.taken(x);
    }
  }

  private sameLink(o: LinkOwner | undefined, url: string): boolean {
    return o !== undefined && o.workspace_id === this.ctx.workspaceId && o.url === url && o.kind === "link";
  }

  private ownerOf(key: string): LinkOwner | undefined {
    return this.claimed.get(key) ?? this.existing.get(key);
  }

  /** Takes the place for this batch and queues the row for insertion. */
  private claim(t: Target): void {
    this.claimed.set(placeKey(t.domainId, t.slug), {
      slug: t.slug,
      url: t.p.input.url,
      workspace_id: this.ctx.workspaceId,
      kind: "link",
      domain_id: t.domainId,
    });
    this.toInsert.push(t);
  }

  private taken(t: { p: Placed; domainName: string | null }, also?: string): void {
    this.out.rejects.push(
      reject(
        t.p.row,
        "LINK_ID_ALREADY_IN_USE" satisfies ErrorCode,
        { slug: [`is taken by another link${onDomain(t.domainName)}${also ? ` and on ${also}` : ""}`] },
        fromRow(t.p),
      ).reject,
    );
  }
}

const fromRow = (p: Placed): Said => ({ slug: p.input.slug, url: cut(p.input.url, 300) });
const onDomain = (name: string | null) => (name ? ` on ${name}` : "");

// ---- running a job -----------------------------------------------------------------------------

/** The workspace's verified domains by name. */
async function verifiedDomains(db: DbOrTx, workspaceId: string): Promise<Map<string, string>> {
  const rows = await db
    .select({ id: domains.id, name: domains.name })
    .from(domains)
    .where(and(eq(domains.workspaceId, workspaceId), eq(domains.verified, true)));
  return new Map(rows.map((r) => [r.name, r.id]));
}

/** What placeRows needs for a job; a string: why the job cannot go on (its domain for taken slugs is no longer verified). */
async function placeContext(deps: ImportDeps, workspaceId: string, options: ImportOptions): Promise<PlaceContext | string> {
  const known = await verifiedDomains(deps.db, workspaceId);
  const rule = options.on_conflict ?? "reject";
  let onConflict: PlaceContext["onConflict"] = { kind: rule === "generate" ? "generate" : "reject" };
  if (rule.startsWith("domain:")) {
    const name = rule.slice("domain:".length);
    const id = known.get(name);
    if (!id) return `${name} is no longer a verified domain of this workspace, so rows with a taken slug have nowhere to go`;
    onConflict = { kind: "domain", id, name };
  }
  return { workspaceId, domains: known, onConflict, shortUrl: (name, slug) => shortUrl(deps.config, slug, name) };
}

/**
 * The job's options, checked: `domain:<name>` must name a verified domain of the workspace.
 * A bad one is a 400 naming `on_conflict` (or `title_to`), before any job exists.
 */
export async function checkOptions(db: DbOrTx, workspaceId: string, o: { on_conflict?: string; title_to?: string }): Promise<ImportOptions> {
  const fields: Fields = {};
  const onConflict = o.on_conflict ?? "reject";
  if (!ON_CONFLICT_RE.test(onConflict)) fields.on_conflict = ["must be reject, generate or domain:<a verified domain of this workspace>"];
  else if (onConflict.startsWith("domain:") && !(await verifiedDomains(db, workspaceId)).has(onConflict.slice(7))) {
    fields.on_conflict = [`${onConflict.slice(7)} is not a verified domain of this workspace`];
  }
  const titleTo = o.title_to ?? "title";
  if (!(TITLE_TARGETS as readonly string[]).includes(titleTo)) fields.title_to = [`must be one of ${TITLE_TARGETS.join(", ")}`];
  if (Object.keys(fields).length)
    throw new AppError("VALIDATION_FAILED", {
      fields,
      message: Object.entries(fields)
        .map(([k, v]) => `${k}: ${v[0]}`)
        .join("; "),
    });
  return { on_conflict: onConflict as OnConflict, title_to: titleTo as TitleTarget };
}

export type JobProgress = Pick<ImportJobDto, "rows" | "rows_done" | "created" | "skipped" | "rejected">;

/**
 * Commits one batch: in one transaction the job row is locked and checked (still ours, still at
 * `from`), the batch's links go in, and the job's counters, report and cursor move past the batch.
 * A stop at any point either committed all of it or none of it. Null: the job is no longer ours.
 */
async function commitBatch(deps: ImportDeps, job: JobRow, ctx: PlaceContext, owner: string, from: number, batch: Checked[]): Promise<JobProgress | null> {
  return inLinkTransaction(deps, async (lt) => {
    const tx = lt.db;
    // The workspace before the job row, in the order its deletion takes them; gone: so is the job.
    if (!(await lockWorkspace(tx, job.workspaceId))) return null;
    const now = Date.now();
    const [locked] = await tx
      .update(importJobs)
      .set({ leaseUntil: now + LEASE_MS, updatedAt: now })
      .where(and(eq(importJobs.id, job.id), eq(importJobs.leaseOwner, owner), eq(importJobs.rowsDone, from)))
      .returning({ rejected: importJobs.rejected, moved: sql<number>`jsonb_array_length(${importJobs.moved})` });
    if (!locked) return null;
    const ok = batch.flatMap((c) => ("ok" in c ? [c.ok] : []));
    const present = batch.flatMap((c) => ("reject" in c && c.present ? [{ reject: c.reject, present: c.present }] : []));
    const outcome = await placeRows(lt, ctx, ok, present);
    // Each link made is a `link.created` event for the workspace's webhooks, in the batch's transaction.
    await createdLinkEvents(tx, deps.config, job.workspaceId, outcome.created);
    const rejects = [...batch.flatMap((c) => ("reject" in c && !c.present ? [c.reject] : [])), ...outcome.rejects].sort((a, b) => a.row - b.row);
    const room = Math.max(0, MAX_STORED_REJECTS - locked.rejected);
    const [row] = await tx
      .update(importJobs)
      .set({
        rowsDone: from + batch.length,
        created: sql`${importJobs.created} + ${outcome.created.length}`,
        skipped: sql`${importJobs.skipped} + ${outcome.skipped}`,
        rejected: sql`${importJobs.rejected} + ${rejects.length}`,
        ...(room && rejects.length ? { rejects: sql`${importJobs.rejects} || ${json(rejects.slice(0, room))}::jsonb` } : {}),
        ...(outcome.moved.length && locked.moved < MAX_STORED_REJECTS
          ? { moved: sql`${importJobs.moved} || ${json(outcome.moved.slice(0, MAX_STORED_REJECTS - locked.moved))}::jsonb` }
          : {}),
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
    return row;
  });
}

async function endJob(deps: ImportDeps, job: JobRow, owner: string, set: Partial<JobRow>): Promise<boolean> {
  const now = Date.now();
  // The audit log has one event per import, with its counts, written with the job's end: both or neither.
  const row = await deps.db.transaction(async (tx) => {
    const [ended] = await tx
      .update(importJobs)
      .set({ ...set, leaseOwner: null, leaseUntil: null, finishedAt: now, updatedAt: now })
      .where(and(eq(importJobs.id, job.id), eq(importJobs.leaseOwner, owner)))
      .returning({ id: importJobs.id, created: importJobs.created, skipped: importJobs.skipped, rejected: importJobs.rejected });
    if (ended)
      await writeAuditEvents(tx, { userId: job.userId, tokenId: job.tokenId ?? undefined }, [
        {
          workspaceId: job.workspaceId,
          action: "link.imported",
          targetType: "import",
          targetId: job.id,
          changes: { created: ended.created, skipped: ended.skipped, rejected: ended.rejected },
        },
      ]);
    return ended;
  });
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
  const options: ImportOptions = job.options ?? {};
  const ctx = await placeContext(deps, job.workspaceId, options);
  if (typeof ctx === "string") {
    await endJob(deps, job, owner, { status: "failed", error: ctx });
    return "failed";
  }
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
    const progress = await commitBatch(deps, job, ctx, owner, done, batch);
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
      batch.push(checkRow(deps.config, format, mapping, columns, header.length, row, record, options.title_to ?? "title"));
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
