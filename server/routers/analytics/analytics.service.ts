import { and, desc, eq, gte, inArray, lt, lte, or, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import type { DbOrTx } from "../../../db/client";
import { clickRetention, clickRollups, clicks, links } from "../../../db/schema";
import { notFound } from "../../domain/errors";
import type { AppServices } from "../../core/services";
import type { Actor } from "../../trpc/context";
import { findOwnLink } from "../links";
import type { ClickEventDto, WorkspaceClickEventDto } from "./analytics.schema";

export const HOUR_MS = 3_600_000;
/** Click records per link in one answer: a documented limit of the public API. */
export const CLICKS_PER_LINK = 500;

/** An inclusive ms-epoch range; a missing bound is open. */
export type Range = { from?: number; to?: number };

// `ts` is `<13-digit ms>#<random>`, so a timestamp range is a key range on the (link_id, ts)
// primary key. '#' sorts below every character of the random part.
const MAX_TS = 9_999_999_999_999;
const tsKey = (ms: number) => `${String(Math.min(Math.max(ms, 0), MAX_TS)).padStart(13, "0")}#`;

/** Normalised half-open [lo, hi) ms bounds, or null when the range is empty. */
export function bounds(range: Range): { lo: number; hi: number } | null {
  const lo = Math.max(range.from ?? 0, 0);
  const hi = Math.min(range.to ?? MAX_TS - 1, MAX_TS - 1) + 1;
  return lo < hi ? { lo, hi } : null;
}

/** Clicks of `[lo, hi)` as a condition on the primary key. */
export const tsBetween = (lo: number, hi: number) => and(gte(clicks.ts, tsKey(lo)), lt(clicks.ts, tsKey(hi)))!;

/** Which links: explicit ids, or a subquery selecting `id` (for a whole workspace). */
export type LinkIds = string[] | SQLWrapper;

/**
 * Exact click counts per link in an inclusive range, uncapped (docs/decisions/009-clicks-in-batches-with-hourly-rollups.md). Whole hours come
 * from `click_rollups`; the partial hours at either edge are counted from `clicks` itself, except
 * before retention's horizon (`click_retention`: those clicks were dropped), where the edge's whole
 * hour is counted from the rollups. Links without clicks are in the map with 0.
 */
export async function countClicks(db: DbOrTx, linkIds: LinkIds, from?: number, to?: number): Promise<Map<string, number>> {
  const range: Range = { from, to };
  const counts = new Map<string, number>(Array.isArray(linkIds) ? linkIds.map((id) => [id, 0]) : []);
  const b = bounds(range);
  if ((Array.isArray(linkIds) && !linkIds.length) || !b) return counts;
  const add = (rows: { linkId: string; n: number }[]) => rows.forEach((r) => counts.set(r.linkId, (counts.get(r.linkId) ?? 0) + Number(r.n)));

  const firstFull = Math.ceil(b.lo / HOUR_MS) * HOUR_MS;
  const endFull = Math.floor(b.hi / HOUR_MS) * HOUR_MS;
  const edges: SQL[] = [];
  if (firstFull < endFull) {
    add(
      await db
        .select({ linkId: clickRollups.linkId, n: sql<number>`coalesce(sum(${clickRollups.count}), 0)`.mapWith(Number) })
        .from(clickRollups)
        .where(and(inArray(clickRollups.linkId, linkIds), gte(clickRollups.hour, firstFull), lt(clickRollups.hour, endFull)))
        .groupBy(clickRollups.linkId),
    );
    if (b.lo < firstFull) edges.push(tsBetween(b.lo, firstFull));
    if (endFull < b.hi) edges.push(tsBetween(endFull, b.hi));
  } else {
    edges.push(tsBetween(b.lo, b.hi));
  }
  if (edges.length) {
    // The edges' hours not counted above; their rollups count only where the clicks were dropped.
    const edgeHours = [...new Set([Math.floor(b.lo / HOUR_MS) * HOUR_MS, Math.floor((b.hi - 1) / HOUR_MS) * HOUR_MS])].filter(
      (h) => !(h >= firstFull && h < endFull),
    );
    const droppedBefore = sql`(select coalesce(max(${clickRetention.droppedBefore}), 0) from ${clickRetention})`;
    // A click stored late under the horizon (a replayed spool) is in the rollups already.
    const kept = gte(clicks.ts, sql`lpad(${droppedBefore}::text, 13, '0')`);
    add(
      await db
        .select({ linkId: clicks.linkId, n: sql<number>`count(*)`.mapWith(Number) })
        .from(clicks)
        .where(and(inArray(clicks.linkId, linkIds), edges.length === 1 ? edges[0] : or(...edges), kept))
        .groupBy(clicks.linkId)
        .unionAll(
          db
            .select({ linkId: clickRollups.linkId, n: sql<number>`sum(${clickRollups.count})`.mapWith(Number) })
            .from(clickRollups)
            .where(and(inArray(clickRollups.linkId, linkIds), inArray(clickRollups.hour, edgeHours), lt(clickRollups.hour, droppedBefore)))
            .groupBy(clickRollups.linkId),
        ),
    );
  }
  return counts;
}

/** Sum of `countClicks` over the links. */
export async function countClicksTotal(db: DbOrTx, linkIds: LinkIds, range: Range = {}): Promise<number> {
  let total = 0;
  for (const n of (await countClicks(db, linkIds, range.from, range.to)).values()) total += n;
  return total;
}

const clickColumns = {
  linkId: clicks.linkId,
  ts: clicks.ts,
  timestamp: clicks.timestamp,
  country: clicks.country,
  region: clicks.region,
  regionName: clicks.regionName,
  timezone: clicks.timezone,
  lat: clicks.lat,
  lng: clicks.lng,
  device: clicks.device,
  platform: clicks.platform,
  browser: clicks.browser,
  referer: clicks.referer,
  rule: clicks.rule,
  visitor: clicks.visitor,
};
type ClickRow = { [K in keyof typeof clickColumns]: (typeof clicks.$inferSelect)[K] };

const toClickEvent = (r: ClickRow): ClickEventDto => ({
  ts: r.ts,
  timestamp: r.timestamp,
  country: r.country,
  region: r.region,
  region_name: r.regionName,
  timezone: r.timezone,
  lat: r.lat,
  lng: r.lng,
  device: r.device as ClickEventDto["device"],
  platform: r.platform,
  browser: r.browser,
  referer: r.referer,
  rule: r.rule as ClickEventDto["rule"],
});

/**
 * The newest clicks of each link in the range, at most `perLink` each, newest first overall.
 * One query: a window over the primary key keeps it an index scan per link.
 */
export async function listClicks(db: DbOrTx, linkIds: LinkIds, range: Range = {}, perLink = CLICKS_PER_LINK): Promise<ClickRow[]> {
  const b = bounds(range);
  if ((Array.isArray(linkIds) && !linkIds.length) || !b) return [];
  const where = and(inArray(clicks.linkId, linkIds), tsBetween(b.lo, b.hi));
  if (Array.isArray(linkIds) && linkIds.length === 1) {
    return db.select(clickColumns).from(clicks).where(where).orderBy(desc(clicks.ts)).limit(perLink);
  }
  const ranked = db
    .select({ ...clickColumns, rn: sql<number>`row_number() over (partition by ${clicks.linkId} order by ${clicks.ts} desc)`.as("rn") })
    .from(clicks)
    .where(where)
    .as("ranked");
  const rows = await db
    .select({
      linkId: ranked.linkId,
      ts: ranked.ts,
      timestamp: ranked.timestamp,
      country: ranked.country,
      region: ranked.region,
      regionName: ranked.regionName,
      timezone: ranked.timezone,
      lat: ranked.lat,
      lng: ranked.lng,
      device: ranked.device,
      platform: ranked.platform,
      browser: ranked.browser,
      referer: ranked.referer,
      rule: ranked.rule,
      visitor: ranked.visitor,
    })
    .from(ranked)
    .where(lte(ranked.rn, perLink))
    .orderBy(desc(ranked.ts), ranked.linkId);
  return rows as ClickRow[];
}

/** `GET /links/{id}/analytics`: any link of the workspace, deleted ones included. */
export async function linkAnalytics(app: Pick<AppServices, "db">, actor: Actor, id: string, range: Range): Promise<{ count: number; clicks: ClickEventDto[] }> {
  const link = await findOwnLink(app.db, actor, id);
  const [count, rows] = await Promise.all([countClicksTotal(app.db, [link.id], range), listClicks(app.db, [link.id], range)]);
  return { count, clicks: rows.map(toClickEvent) };
}

/**
 * `GET /analytics`: every short link of the workspace (deleted ones included, linktree-owned
 * ones excluded), or the one `linkId`, which must be such a link (else 404).
 */
export async function workspaceAnalytics(
  app: Pick<AppServices, "db">,
  actor: Actor,
  linkId: string | undefined,
  range: Range,
): Promise<{ count: number; clicks: WorkspaceClickEventDto[] }> {
  const { ids } = await workspaceLinkIds(app, actor, linkId);
  const [count, rows] = await Promise.all([countClicksTotal(app.db, ids, range), listClicks(app.db, ids, range)]);
  return { count, clicks: rows.map((r) => ({ ...toClickEvent(r), link_id: r.linkId })) };
}

/**
 * The short links `/analytics` covers: every one of the workspace (deleted ones included,
 * linktree-owned ones excluded), or the one `linkId`, which must be such a link (else 404).
 */
export async function workspaceLinkIds(app: Pick<AppServices, "db">, actor: Actor, linkId: string | undefined): Promise<{ ids: LinkIds }> {
  const own = and(eq(links.workspaceId, actor.workspaceId), eq(links.kind, "link"));
  if (linkId !== undefined) {
    const [one] = await app.db
      .select({ id: links.id })
      .from(links)
      .where(and(own, eq(links.id, linkId)))
      .limit(1);
    if (!one) throw notFound();
    return { ids: [one.id] };
  }
  // A subquery, not an id list: a workspace keeps every deleted link, and one bound parameter
  // per link would eventually pass PostgreSQL's 65,535-parameter limit. (Wrapped: a query builder is a thenable.)
  return { ids: app.db.select({ id: links.id }).from(links).where(own) };
}

/** The dashboard's CSV export: the clicks of `/analytics` with each click's visitor key (not part of the REST answer). */
export async function exportClicks(app: Pick<AppServices, "db">, actor: Actor, linkId: string | undefined, range: Range) {
  const rows = await listClicks(app.db, (await workspaceLinkIds(app, actor, linkId)).ids, range);
  return rows.map((r) => ({ ...toClickEvent(r), link_id: r.linkId, visitor: r.visitor }));
}

/** Clicks and unique visitors (distinct visitor keys) per UTC day, oldest first; days without clicks are left out. */
export async function dailyVisitors(app: Pick<AppServices, "db">, actor: Actor, linkId: string | undefined, range: Range) {
  const b = bounds(range);
  if (!b) return [];
  const { ids } = await workspaceLinkIds(app, actor, linkId);
  const day = sql<string>`to_char(to_timestamp(${clicks.timestamp} / 1000.0) at time zone 'UTC', 'YYYY-MM-DD')`;
  const rows = await app.db
    .select({ day, clicks: sql<number>`count(*)`.mapWith(Number), visitors: sql<number>`count(distinct ${clicks.visitor})`.mapWith(Number) })
    .from(clicks)
    .where(and(inArray(clicks.linkId, ids), tsBetween(b.lo, b.hi)))
    .groupBy(day)
    .orderBy(day);
  return rows;
}
