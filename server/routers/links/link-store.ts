import { eq, inArray, isNull, and, sql, type SQL } from "drizzle-orm";
import type { Db, DbOrTx } from "../../../db/client";
import { links } from "../../../db/schema";
import { AppError, isNotNullViolation, isUniqueViolation } from "../../domain/errors";
import { newLinkId } from "../../lib/ids";
import { DOMAIN_SLUG_INDEX, freeSlugPick, randomPickStart, SLUG_INDEX, withGeneratedSlug } from "../../lib/slugs";
import { linkCacheKey } from "../../core/lookup";
import type { AppServices } from "../../core/services";

/**
 * The link store: the only module that writes `links` rows (links, linktree pages and items,
 * bulk actions, imports, abuse reviews, workspace purges). Every write goes through a `LinkTx`,
 * which remembers the redirect-cache keys it touched; once the transaction commits,
 * `afterLinkCommit` drops them on every instance. A write that rolls back drops nothing, and no
 * caller can forget the invalidation: it has no other way to write a link.
 */

export type LinkRow = typeof links.$inferSelect;

/** A transaction that writes links, with the cache keys it touched (dropped once it commits). */
export type LinkTx = { db: DbOrTx; changed: string[] };

/** A `LinkTx` over an open transaction: the caller runs `afterLinkCommit` with `changed` once it commits. */
export const linkTx = (db: DbOrTx, changed: string[] = []): LinkTx => ({ db, changed });

/** Drops the touched links from the redirect caches: call only after the writing transaction committed. */
export async function afterLinkCommit(app: Pick<AppServices, "invalidateSlugs">, changed: string[]): Promise<void> {
  if (changed.length) await app.invalidateSlugs([...new Set(changed)]);
}

/** Runs `work` in one transaction and, once it commits, drops every link it wrote from the caches. */
export async function inLinkTransaction<T>(app: Pick<AppServices, "db" | "invalidateSlugs">, work: (lt: LinkTx) => Promise<T>): Promise<T> {
  const changed: string[] = [];
  const out = await app.db.transaction((tx) => work(linkTx(tx, changed)));
  await afterLinkCommit(app, changed);
  return out;
}

const touch = (lt: LinkTx, row: { domainId?: string | null; slug: string }) => lt.changed.push(linkCacheKey(row.domainId ?? null, row.slug));

/** A slug taken in its namespace: the default domain's or a branded domain's. */
const isSlugConflict = (e: unknown) => isUniqueViolation(e, SLUG_INDEX) || isUniqueViolation(e, DOMAIN_SLUG_INDEX);

export type SlugConflictCode = "LINK_ID_ALREADY_IN_USE" | "SLUG_ALREADY_IN_USE";

/**
 * Runs a write that claims `slug` inside a savepoint, so a taken slug (the unique index decides)
 * answers 409 `code` without aborting the caller's transaction. Links and linktrees word it differently.
 */
async function withSlug<T>(db: DbOrTx, slug: string, code: SlugConflictCode, write: (sp: DbOrTx) => Promise<T>): Promise<T> {
  try {
    return await db.transaction(write);
  } catch (e) {
    if (isSlugConflict(e)) throw new AppError(code, { message: `slug ${slug} is taken` });
    throw e;
  }
}

/** Strictly increasing, so every write shows in `updated_at`, even within one millisecond. */
export const nextUpdatedAt = (previous: number, now = Date.now()) => Math.max(now, previous + 1);

export type NewLink = { workspaceId: string; url: string; kind?: LinkRow["kind"]; slug?: string; domainId?: string | null } & Partial<
  Pick<
    LinkRow,
    | "title"
    | "tags"
    | "expiresAt"
    | "expirationUrl"
    | "targeting"
    | "passwordHash"
    | "ogTitle"
    | "ogDescription"
    | "ogImage"
    | "forwardQuery"
    | "variants"
    | "archivedAt"
  >
>;

/**
 * Inserts one link row with the given slug, or a generated one, in the namespace of its domain
 * (`domainId`; none: the default redirect domain's). A taken slug answers `conflictCode`. The new
 * slug's key is dropped too: the cache may hold it as a known "unknown slug".
 */
export async function insertLink(lt: LinkTx, values: NewLink, conflictCode: SlugConflictCode = "LINK_ID_ALREADY_IN_USE"): Promise<LinkRow> {
  const now = Date.now();
  const row = (slug: string) => ({ ...values, id: newLinkId(), slug, kind: values.kind ?? "link", createdAt: now, updatedAt: now });
  const inserted =
    values.slug === undefined
      ? await withGeneratedSlug(
          lt.db,
          async (slug) => (await lt.db.insert(links).values(row(slug)).onConflictDoNothing().returning())[0],
          values.domainId ?? null,
        )
      : await withSlug(lt.db, values.slug, conflictCode, async (sp) => (await sp.insert(links).values(row(values.slug!)).returning())[0]);
  touch(lt, inserted);
  return inserted;
}

/** What the statement of `insertLinkAtOnce` writes beside the link. */
export type Alongside = {
  /** Names what `parts` writes: the statement is built once per shape (and database), then run with new values. */
  shape: string;
  /**
   * The statements that must land with the link (such as its webhook and audit events), given the
   * slug as an SQL expression; what changes from one link to the next is a placeholder of `params`.
   */
  parts(slug: SQL): { getSQL(): SQL }[];
  params: Record<string, unknown>;
};

type CreateStatement = { execute(params: Record<string, unknown>): Promise<LinkRow[]> };

/**
 * The statements of `insertLinkAtOnce`, prepared once per database and shape: building one through
 * the query builder took the server more time than PostgreSQL takes to run it.
 */
const createStatements = new WeakMap<Db, Map<string, CreateStatement>>();

function createStatement(db: Db, given: boolean, columns: string[], alongside: Alongside): CreateStatement {
  const p = sql.placeholder;
  const pick = db.$with("pick", {}).as(given ? sql`select ${p("slug")}::text as slug` : freeSlugPick({ start: p("pick_start"), turn: p("pick_turn") }));
  // A select CTE runs only when read: the insert reads the slug through this one, so the NOTIFY is sent
  // exactly once; none without a prefix (no other instance to tell).
  const note = db
    .$with("note", {})
    .as(
      sql`select slug, case when ${p("note_prefix")}::text is not null then pg_notify(${p("note_channel")}, ${p("note_prefix")} || json_build_array(slug)::text) end from pick`,
    );
  const parts = alongside.parts(sql`(select slug from pick)`).map((q, i) => db.$with(`alongside_${i}`, {}).as(q.getSQL()));
  const values = Object.fromEntries(columns.map((c) => [c, p(`link_${c}`)])) as unknown as typeof links.$inferInsert;
  return db
    .with(pick, note, ...parts)
    .insert(links)
    .values({ ...values, domainId: null, slug: sql`(select slug from note)`, updatedAt: p("link_createdAt") })
    .returning()
    .prepare("link_create");
}

/**
 * `insertLink` on the default domain in one statement, for a write with nothing else to do in
 * between: the slug (given, or picked as `pickFreeSlug` picks it), the row, `alongside` (statements
 * that must land with the link, such as its webhook and audit events) and the NOTIFY that drops a
 * cached miss of the new slug on every instance. One round trip instead of a transaction's eight.
 * Answers undefined when a generated pick did not hold (a block count out of date, the slug taken
 * meanwhile, no block with room): nothing was written, and the caller takes `insertLink`'s way,
 * which handles each of those. A given slug that is taken answers `conflictCode`.
 */
export async function insertLinkAtOnce(
  app: Pick<AppServices, "database" | "announceSlugs">,
  values: NewLink & { id: string; createdAt: number },
  alongside: Alongside,
  conflictCode: SlugConflictCode = "LINK_ID_ALREADY_IN_USE",
): Promise<LinkRow | undefined> {
  // Every value of the statement is a key or a row to write: one plan serves them all, and planning
  // it anew for each link cost PostgreSQL more than running it.
  const db = app.database.plannedOnce;
  const given = values.slug;
  const row: Record<string, unknown> = { ...values, kind: values.kind ?? "link" };
  const columns = Object.keys(row)
    .filter((c) => c !== "slug" && c !== "domainId" && row[c] !== undefined)
    .sort();
  const key = `${given === undefined ? "pick" : "given"} ${columns.join(",")} ${alongside.shape}`;
  let statements = createStatements.get(db);
  if (!statements) createStatements.set(db, (statements = new Map()));
  let statement = statements.get(key);
  if (!statement) statements.set(key, (statement = createStatement(db, given !== undefined, columns, alongside)));
  const params: Record<string, unknown> = { ...alongside.params };
  for (const c of columns) params[`link_${c}`] = row[c];
  if (given === undefined) {
    const at = randomPickStart();
    params.pick_start = at.start;
    params.pick_turn = at.turn;
  } else params.slug = given;
  const announcement = app.announceSlugs();
  params.note_channel = announcement.channel;
  params.note_prefix = announcement.prefix;
  try {
    const [made] = await statement.execute(params);
    await announcement.sent([linkCacheKey(null, made.slug)]);
    return made;
  } catch (e) {
    announcement.unsent();
    if (given !== undefined && isSlugConflict(e)) throw new AppError(conflictCode, { message: `slug ${given} is taken` });
    // No slug came out of the pick (the insert's not-null check), or another writer took it first.
    if (given === undefined && (isSlugConflict(e) || isNotNullViolation(e))) return undefined;
    throw e;
  }
}

/**
 * Writes `set` on the link `before` (read and locked by the caller), moving `updated_at` forward.
 * A new slug or domain is claimed in a savepoint, a taken one answering `conflictCode`.
 */
export async function updateLink(
  lt: LinkTx,
  before: Pick<LinkRow, "id" | "slug" | "domainId" | "updatedAt">,
  set: Partial<LinkRow>,
  conflictCode: SlugConflictCode = "LINK_ID_ALREADY_IN_USE",
): Promise<LinkRow> {
  const values = { ...set, updatedAt: set.updatedAt ?? nextUpdatedAt(before.updatedAt) };
  const write = async (db: DbOrTx) => (await db.update(links).set(values).where(eq(links.id, before.id)).returning())[0];
  const after = set.slug !== undefined || set.domainId !== undefined ? await withSlug(lt.db, set.slug ?? before.slug, conflictCode, write) : await write(lt.db);
  touch(lt, before);
  touch(lt, after);
  return after;
}

/** Ids per UPDATE statement (bind parameters stay far below PostgreSQL's limit). */
const CHUNK = 1_000;

/** `set` on every link of `rows` (locked by the caller), a statement per chunk of ids; `updated_at` moves forward as single edits move it. */
export async function updateLinks(lt: LinkTx, rows: Pick<LinkRow, "id" | "slug" | "domainId">[], set: Partial<typeof links.$inferInsert>, now = Date.now()) {
  for (let i = 0; i < rows.length; i += CHUNK) {
    const ids = rows.slice(i, i + CHUNK).map((r) => r.id);
    await lt.db
      .update(links)
      .set({ ...set, updatedAt: sql`greatest(${now}::bigint, ${links.updatedAt} + 1)` })
      .where(inArray(links.id, ids));
  }
  for (const r of rows) touch(lt, r);
}

/**
 * Soft delete: the slug is freed, the record and its clicks are kept. Linktree-owned links are
 * refused, since their page or item would keep pointing at a slug another link could then take.
 * False when the link was already deleted. The caller has the row locked.
 */
export async function softDeleteLink(lt: LinkTx, row: Pick<LinkRow, "id" | "kind" | "slug" | "deletedAt"> & { domainId?: string | null }): Promise<boolean> {
  if (row.kind !== "link") throw new AppError("LINKTREE_LINK_NOT_EDITABLE");
  if (row.deletedAt !== null) return false;
  const now = Date.now();
  await lt.db.update(links).set({ deletedAt: now, updatedAt: now }).where(eq(links.id, row.id));
  touch(lt, row);
  return true;
}

/** Hard-deletes link records (a linktree's page and item links): their slugs are freed at once. */
export async function deleteLinks(lt: LinkTx, rows: { id: string; slug: string; domainId?: string | null }[]): Promise<void> {
  if (!rows.length) return;
  await lt.db.delete(links).where(
    inArray(
      links.id,
      rows.map((r) => r.id),
    ),
  );
  for (const r of rows) touch(lt, r);
}

/** Every link record of a workspace that is going away (hard delete, slugs freed); its linktree rows must be gone first. */
export async function deleteWorkspaceLinks(lt: LinkTx, workspaceId: string): Promise<void> {
  const live = await lt.db
    .select({ slug: links.slug, domainId: links.domainId })
    .from(links)
    .where(and(eq(links.workspaceId, workspaceId), isNull(links.deletedAt)));
  await lt.db.delete(links).where(eq(links.workspaceId, workspaceId));
  for (const r of live) touch(lt, r);
}

/** One imported link, in the column names of the batch's JSON. */
export type ImportedLink = {
  id: string;
  slug: string;
  domain_id: string | null;
  url: string;
  title: string | null;
  tags: string[];
  expires_at: number | null;
  expiration_url: string | null;
  targeting: unknown;
  og_title: string | null;
  og_description: string | null;
  og_image: string | null;
  /** Absent: false, none and not archived. */
  forward_query?: boolean;
  variants?: unknown;
  archived_at?: number | null;
  created_at: number;
  updated_at: number;
};

const rowsOf = <T>(result: unknown): T[] => (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as T[];

/**
 * Inserts a batch of imported links of kind `link`, skipping any whose slug was taken meanwhile;
 * answers the ids that went in. One JSON parameter for the whole batch: a thousand rows' worth of
 * bound parameters costs more to build than to insert.
 */
export async function insertImportedLinks(lt: LinkTx, workspaceId: string, values: ImportedLink[]): Promise<Set<string>> {
  const inserted = new Set(
    rowsOf<{ id: string }>(
      await lt.db.execute(sql`
        insert into links (id, workspace_id, slug, domain_id, url, kind, title, tags, expires_at, expiration_url, targeting, og_title, og_description, og_image,
          forward_query, variants, archived_at, created_at, updated_at)
        select r.id, ${workspaceId}, r.slug, r.domain_id, r.url, 'link', r.title, r.tags, r.expires_at, r.expiration_url, r.targeting, r.og_title, r.og_description, r.og_image,
          coalesce(r.forward_query, false), r.variants, r.archived_at, r.created_at, r.updated_at
        from json_to_recordset(${JSON.stringify(values)}::json) as r(
          id text, slug text, domain_id text, url text, title text, tags text[], expires_at bigint, expiration_url text, targeting jsonb, og_title text, og_description text,
          og_image text, forward_query boolean, variants jsonb, archived_at bigint, created_at bigint, updated_at bigint)
        on conflict do nothing
        returning id`),
    ).map((r) => r.id),
  );
  for (const v of values) if (inserted.has(v.id)) touch(lt, { domainId: v.domain_id, slug: v.slug });
  return inserted;
}
