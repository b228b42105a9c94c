import { and, arrayContains, asc, count, desc, eq, gte, ilike, inArray, isNotNull, isNull, or, sql, type SQL } from "drizzle-orm";
import type { Db, DbOrTx } from "../../../db/client";
import { clickRollups, domains, links } from "../../../db/schema";
import { AppError, validation } from "../../domain/errors";
import type { AppServices } from "../../core/services";
import type { Actor } from "../../trpc/context";
import { countClicks } from "../analytics";
import { MAX_TAGS } from "./links.schema";
import { expirySet, linkDtos } from "./links.service";
import { expiredAt, unexpiredAt, workspaceLinks } from "./link-status";
import { softDeleteLink, updateLink, type LinkRow } from "./link-store";
import { bulkWrite, expiryChanges } from "./bulk-write";
import { LIST_PAGE_SIZE, SPARK_DAYS, type ListInput, type ListOutput, type ListStatus } from "./list.schema";

const DAY_MS = 86_400_000;

/** `%` and `_` typed by the user are literal characters, not wildcards. */
const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => "\\" + c);

const STATUS: Record<Exclude<ListStatus, "archived">, (now: number) => SQL> = {
  active: unexpiredAt,
  expired: expiredAt,
  password: () => isNotNull(links.passwordHash),
  targeting: () => isNotNull(links.targeting),
  share_card: () => or(isNotNull(links.ogTitle), isNotNull(links.ogDescription), isNotNull(links.ogImage))!,
};

/** The filters shared by the dashboard list, its bulk actions and REST `GET /links`. */
export type LinkFilters = Partial<ListInput> & {
  /** Exact slug, on `domain` (the default redirect domain when absent). */
  slug?: string;
};

/** Archived links are listed only when asked for; every other filter lists links in service. */
export const archivedCondition = (archived: boolean): SQL => (archived ? isNotNull(links.archivedAt) : isNull(links.archivedAt));

/** Conditions of the filters, or null when they can match nothing (a domain the workspace does not have). */
export async function filterConditions(db: Db, app: Pick<AppServices, "config">, workspaceId: string, input: LinkFilters, now: number): Promise<SQL[] | null> {
  const where = [workspaceLinks(workspaceId)];
  const q = input.q?.trim();
  if (q) {
    const like = `%${likeEscape(q)}%`;
    where.push(or(ilike(links.slug, like), ilike(links.url, like), ilike(links.ogTitle, like), ilike(links.title, like))!);
  }
  if (input.tag) where.push(arrayContains(links.tags, [input.tag]));
  where.push(archivedCondition(input.status === "archived"));
  if (input.status && input.status !== "archived") where.push(STATUS[input.status](now));
  if (input.slug !== undefined) where.push(eq(links.slug, input.slug));
  if (input.domain !== undefined || input.slug !== undefined) {
    if (input.domain === undefined || input.domain === app.config.redirectDomain) where.push(isNull(links.domainId));
    else {
      const [d] = await db
        .select({ id: domains.id })
        .from(domains)
        .where(and(eq(domains.workspaceId, workspaceId), eq(domains.name, input.domain!)))
        .limit(1);
      if (!d) return null;
      where.push(eq(links.domainId, d.id));
    }
  }
  return where;
}

/** Clicks per UTC day of `SPARK_DAYS` days ending today, from the hourly rollups (days are whole hours, so exact). */
async function dailyClicks(db: Db, ids: string[], now: number): Promise<Map<string, number[]>> {
  const today = Math.floor(now / DAY_MS);
  const first = (today - SPARK_DAYS + 1) * DAY_MS;
  const out = new Map(ids.map((id) => [id, new Array<number>(SPARK_DAYS).fill(0)]));
  if (!ids.length) return out;
  // A literal divisor: GROUP BY must repeat the select expression exactly, and a bind parameter is not.
  const day = sql<number>`(${clickRollups.hour} / ${sql.raw(String(DAY_MS))})::int`.mapWith(Number);
  const rows = await db
    .select({ linkId: clickRollups.linkId, day, n: sql<number>`sum(${clickRollups.count})`.mapWith(Number) })
    .from(clickRollups)
    .where(and(inArray(clickRollups.linkId, ids), gte(clickRollups.hour, first)))
    .groupBy(clickRollups.linkId, day);
  for (const r of rows) {
    const i = r.day - (today - SPARK_DAYS + 1);
    const series = out.get(r.linkId);
    if (series && i >= 0 && i < SPARK_DAYS) series[i] += r.n;
  }
  return out;
}

/**
 * One page of the dashboard's links list: filters, search, sort by newest or by all-time clicks,
 * pages of `LIST_PAGE_SIZE` by offset (the workspace index orders "newest"; "clicks" sums the
 * workspace's hourly rollups once). Counts are exact: all-time and 7-day counts are analytics'
 * own `countClicks`; the sparkline sums whole-day rollups.
 */
export async function listDashboardLinks(app: Pick<AppServices, "config" | "reads">, actor: Actor, input: ListInput, now = Date.now()): Promise<ListOutput> {
  return app.reads.run(actor.workspaceId, async (db) => {
    const ws = actor.workspaceId;
    const where = await filterConditions(db, app, ws, input, now);
    const offset = (input.page - 1) * LIST_PAGE_SIZE;
    // Independent reads run side by side on the pool (PGlite queues them).
    const [tagRows, domainRows, counted, rows] = await Promise.all([
      db
        .selectDistinct({ tag: sql<string>`unnest(${links.tags})` })
        .from(links)
        .where(workspaceLinks(ws)),
      db.select({ name: domains.name }).from(domains).where(eq(domains.workspaceId, ws)).orderBy(asc(domains.name)),
      where
        ? db
            .select({ total: count() })
            .from(links)
            .where(and(...where))
        : [{ total: 0 }],
      where ? pageRows(db, where, input.sort, offset) : [],
    ]);
    const total = counted[0].total;
    const ids = rows.map((r) => r.id);
    const [all, week, daily, dtos] = await Promise.all([
      countClicks(db, ids),
      countClicks(db, ids, now - 7 * DAY_MS, now),
      dailyClicks(db, ids, now),
      linkDtos(db, app.config, rows),
    ]);
    return {
      per_page: LIST_PAGE_SIZE,
      page: input.page,
      tags: tagRows.map((r) => r.tag).sort(),
      domains: [app.config.redirectDomain, ...domainRows.map((d) => d.name)],
      total,
      pages: Math.ceil(total / LIST_PAGE_SIZE),
      links: dtos.map((l) => ({ ...l, clicks: { total: all.get(l.id) ?? 0, last_7_days: week.get(l.id) ?? 0, daily: daily.get(l.id) ?? [] } })),
    };
  });
}

/** A link's all-time click count: the sum of its hourly rollups, read through the rollups' index. */
export const allTimeClicks = sql<number>`(select coalesce(sum(r.count), 0) from ${clickRollups} r where r.link_id = ${links.id})`.mapWith(Number);

/**
 * One page of links. "clicks" orders by each link's all-time count, the sum of its hourly rollups
 * (what `countClicks` answers without a range), read per link through the rollups' primary key:
 * the cost follows the workspace's own rollups, not the whole table's.
 */
async function pageRows(db: Db, where: SQL[], sort: ListInput["sort"], offset: number): Promise<LinkRow[]> {
  const q = db
    .select()
    .from(links)
    .where(and(...where));
  const ordered = sort === "clicks" ? q.orderBy(desc(allTimeClicks), desc(links.createdAt), desc(links.id)) : q.orderBy(desc(links.createdAt), desc(links.id));
  return ordered.limit(LIST_PAGE_SIZE).offset(offset);
}

/**
 * Locks the links `ids` of the actor's workspace, in id order (two bulk actions cannot deadlock),
 * with the single-link checks: another workspace's or a deleted link is 404 (naming them), a
 * linktree's is refused. `allowDeleted`: delete answers again for what is already deleted.
 */
async function lockOwnLinks(tx: DbOrTx, actor: Actor, ids: string[], allowDeleted = false): Promise<LinkRow[]> {
  // One statement for the whole selection (not a look-up per id); rows are locked in id order.
  const rows = await tx
    .select()
    .from(links)
    .where(and(inArray(links.id, ids), eq(links.workspaceId, actor.workspaceId)))
    .orderBy(asc(links.id))
    .for("update");
  const usable = rows.filter((r) => allowDeleted || r.deletedAt === null);
  const found = new Set(usable.map((r) => r.id));
  const missing = [...ids].sort().filter((id) => !found.has(id));
  if (missing.length) throw new AppError("NOT_FOUND", { message: `no such link in this workspace: ${missing.join(", ")}` });
  if (usable.some((r) => r.kind !== "link")) throw new AppError("LINKTREE_LINK_NOT_EDITABLE");
  return usable;
}

/** Adds and removes tags on every link, all or none: a link that would pass `MAX_TAGS` fails the whole action. */
export async function bulkTag(
  app: Pick<AppServices, "config" | "db" | "invalidateSlugs">,
  actor: Actor,
  input: { ids: string[]; add: string[]; remove: string[] },
) {
  return bulkWrite(app, { actor, action: "link.updated", changes: ["tags"] }, async (lt) => {
    const rows = await lockOwnLinks(lt.db, actor, input.ids);
    const drop = new Set(input.remove);
    const next = rows.map((r) => ({ row: r, tags: [...new Set([...(r.tags ?? []), ...input.add])].filter((t) => !drop.has(t)).sort() }));
    const over = next.filter((n) => n.tags.length > MAX_TAGS);
    if (over.length) {
      throw validation({ add: [`at most ${MAX_TAGS} tags per link; ${over.map((n) => `${n.row.slug} would have ${n.tags.length}`).join(", ")}`] });
    }
    const changed = next.filter((n) => n.tags.join(",") !== (n.row.tags ?? []).join(","));
    for (const { row, tags } of changed) await updateLink(lt, row, { tags });
    return changed.map((n) => n.row);
  });
}

/** Sets (or clears) the expiry of every link; clearing it clears its fallback URL too, as a single edit does. */
export async function bulkExpiry(
  app: Pick<AppServices, "config" | "db" | "invalidateSlugs">,
  actor: Actor,
  input: { ids: string[]; expires_at: number | null },
) {
  return bulkWrite(app, { actor, action: "link.updated", changes: expiryChanges(input.expires_at) }, async (lt) => {
    const rows = await lockOwnLinks(lt.db, actor, input.ids);
    for (const row of rows) await updateLink(lt, row, expirySet(input.expires_at));
    return rows;
  });
}

/** Soft-deletes every link, as DELETE /links/{id} does one. */
export async function bulkDelete(app: Pick<AppServices, "config" | "db" | "invalidateSlugs">, actor: Actor, input: { ids: string[] }) {
  return bulkWrite(app, { actor, action: "link.deleted", changes: [] }, async (lt) => {
    const rows = await lockOwnLinks(lt.db, actor, input.ids, true);
    const deleted: LinkRow[] = [];
    for (const row of rows) if (await softDeleteLink(lt, row)) deleted.push(row);
    return deleted;
  });
}

/**
 * Archives (or puts back) every link, as `PATCH /links/{id}` with `archived` does one. Only links
 * whose state changes are written and counted; one already archived keeps its first archive time.
 */
export async function bulkArchive(app: Pick<AppServices, "config" | "db" | "invalidateSlugs">, actor: Actor, input: { ids: string[]; archived: boolean }) {
  return bulkWrite(app, { actor, action: "link.updated", changes: ["archived"] }, async (lt) => {
    const rows = await lockOwnLinks(lt.db, actor, input.ids);
    const changed = rows.filter((r) => (r.archivedAt !== null) !== input.archived);
    const at = Date.now();
    for (const row of changed) await updateLink(lt, row, { archivedAt: input.archived ? at : null });
    return changed;
  });
}

// Dashboard-only (no openapi meta): REST `GET /links` keeps its documented shape.
