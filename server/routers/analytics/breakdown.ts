// Aggregated analytics: clicks and daily unique visitors grouped by one dimension (analytics.breakdown).
import { and, eq, inArray, isNull, or, sql, type SQL } from "drizzle-orm";
import { clicks } from "../../../db/schema";
import { validation } from "../../domain/errors";
import type { AppServices } from "../../core/services";
import type { Actor } from "../../trpc/context";
import { findOwnLink } from "../links";
import { bounds, tsBetween, workspaceLinkIds, type LinkIds } from "./analytics.service";
import {
  BREAKDOWN_LIMIT_DEFAULT,
  FILTER_DIMENSIONS,
  MAX_HOUR_BUCKETS,
  type BreakdownBy,
  type BreakdownDto,
  type BreakdownQuery,
  type FilterDimension,
  type LinkBreakdownInput,
  type WorkspaceBreakdownInput,
  NONE,
} from "./breakdown.schema";

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** Day buckets per answer: a century, far more than any range of real clicks. */
const MAX_DAY_BUCKETS = 36_600;

/** The host of the referrer URL in lower case (userinfo and port dropped); null without a referrer or when it is not a URL. */
export const referrerDomainSql = sql`lower(substring(${clicks.referer} from '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#@]*@)?([^/?#:]+)'))`;

/** The SQL value of each click attribute. `os` is the stored `platform`. */
const ATTRIBUTE: Record<FilterDimension | "link", SQL> = {
  link: sql`${clicks.linkId}`,
  country: sql`${clicks.country}`,
  region: sql`${clicks.region}`,
  city: sql`${clicks.city}`,
  device: sql`${clicks.device}`,
  os: sql`${clicks.platform}`,
  browser: sql`${clicks.browser}`,
  referrer_domain: referrerDomainSql,
  rule: sql`${clicks.rule}`,
  variant: sql`${clicks.variant}`,
  trigger: sql`${clicks.trigger}`,
};

function filterConditions(q: BreakdownQuery): SQL[] {
  return FILTER_DIMENSIONS.flatMap((k) => {
    const v = q[k];
    if (v === undefined) return [];
    return [v === NONE ? isNull(ATTRIBUTE[k]) : eq(ATTRIBUTE[k], v)];
  });
}

/** Rows of a raw query: node-postgres and PGlite answer `{rows}`, postgres.js the array itself. */
async function rowsOf<T>(app: Pick<AppServices, "db">, query: SQL): Promise<T[]> {
  const r = (await app.db.execute(query)) as unknown as { rows: T[] } | T[];
  return Array.isArray(r) ? r : r.rows;
}

/** A zone ICU knows but PostgreSQL does not is the caller's 400, not our 500. */
async function inZone<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (/time zone/i.test(String((e as Error)?.message))) throw validation({ tz: ["is not a time zone this server knows"] });
    throw e;
  }
}

/**
 * The start (ms) of every local day or hour bucket that [lo, hi) touches, oldest first, computed by
 * PostgreSQL's zone rules. Hours are found in absolute time (a local hour starts where the local
 * minute is 0, checked every 15 minutes, which every zone's offset is a multiple of), so the hour a
 * DST change repeats is two buckets and the hour it skips is none.
 */
async function bucketStarts(app: Pick<AppServices, "db">, by: "day" | "hour", tz: string, lo: number, hi: number): Promise<number[]> {
  const rows = await inZone(() =>
    rowsOf<{ s: unknown }>(
      app,
      by === "day"
        ? sql`select (extract(epoch from (g::timestamp at time zone ${tz})) * 1000)::bigint as s
            from generate_series((to_timestamp(${lo} / 1000.0) at time zone ${tz})::date::timestamp,
              (to_timestamp(${hi - 1} / 1000.0) at time zone ${tz})::date::timestamp, interval '1 day') g order by 1`
        : sql`select (extract(epoch from g) * 1000)::bigint as s
            from generate_series(to_timestamp(${Math.floor((lo - HOUR_MS) / 900_000) * 900} ), to_timestamp(${hi - 1} / 1000.0), interval '15 minutes') g
            where extract(minute from (g at time zone ${tz})) = 0 order by 1`,
    ),
  );
  const starts = rows.map((r) => Number(r.s));
  // The first bucket is the one holding `lo`.
  let first = 0;
  while (first + 1 < starts.length && starts[first + 1] <= lo) first++;
  return starts.slice(first);
}

type Grouped = { gk: unknown; k: string | number | null; clicks: unknown; visitors: unknown };

/**
 * One pass over the selected clicks: clicks per key, daily visitor keys per key (distinct per UTC
 * day, then summed over days) and the same two for the whole selection (a visitor counted under
 * two keys is one visitor of the total).
 */
async function grouped(app: Pick<AppServices, "db">, key: SQL, where: SQL, opts: { text: boolean; limit?: number }): Promise<Grouped[]> {
  // Byte order ("C") for text: keys sort the same on every database, and grouping a million
  // visitor keys by byte comparison is twice as fast as by the database's language collation.
  const k = opts.text ? sql`${key} collate "C"` : key;
  const query = sql`with sel as (select ${k} as k, ${clicks.timestamp} / ${DAY_MS} as d, ${clicks.visitor} collate "C" as v from ${clicks} where ${where}),
      g as (select k, d, v, grouping(k) as gk, count(*) as n from sel group by grouping sets ((k, d, v), (d, v)))
    select gk, k, sum(n) as clicks, count(v) as visitors from g group by gk, k
    order by gk desc, clicks desc, k asc nulls last${opts.limit !== undefined ? sql` limit ${opts.limit + 1}` : sql``}`;
  // A group per visitor and day: with the default 4 MB of work memory the planner sorts on disk
  // instead of hashing in memory, several times slower on a million clicks.
  return app.db.transaction(async (tx) => {
    await tx.execute(sql`set local work_mem = '64MB'`);
    const r = (await tx.execute(query)) as unknown as { rows: Grouped[] } | Grouped[];
    return Array.isArray(r) ? r : r.rows;
  });
}

const DAYS_OR_HOURS = new Set<BreakdownBy>(["day", "hour"]);

type Counts = { clicks: number; visitors: number };
type Summed = { rows: Map<string | number | null, Counts>; total: Counts };

/**
 * A breakdown of a whole workspace without filters, by country or by day, from the summaries the
 * click storage keeps (db/schema/analytics.ts): clicks of every whole hour of [lo, hi) from the
 * hourly counts, visitors of whole UTC days from the daily counts, and a partial day's visitors
 * from the day's visitor sets, each key with the hours it clicked in (a bitmask), joined with the
 * keys of the clicks of the minutes before the first whole hour and after the last. Visitors are
 * distinct per UTC day, so the days add up. By day, a local day's visitors of a UTC day are the
 * keys that clicked in one of the local day's hours, so this needs buckets starting on whole hours;
 * null when the summaries cannot answer (the caller reads the clicks instead).
 */
async function fromSummaries(
  app: Pick<AppServices, "db">,
  workspaceId: string,
  ids: LinkIds,
  by: "country" | "day",
  lo: number,
  hi: number,
  starts: number[] = [],
): Promise<Summed | null> {
  const d0 = Math.ceil(lo / DAY_MS);
  const d1 = Math.floor(hi / DAY_MS);
  if (d0 >= d1 || starts.some((s) => s % HOUR_MS !== 0)) return null;
  const h0 = Math.ceil(lo / HOUR_MS) * HOUR_MS;
  const h1 = Math.floor(hi / HOUR_MS) * HOUR_MS;
  const rows = new Map<string | number | null, Counts>();
  const total = { clicks: 0, visitors: 0 };
  const add = (k: string | number | null, c: number, v: number) => {
    const r = rows.get(k) ?? { clicks: 0, visitors: 0 };
    r.clicks += c;
    r.visitors += v;
    rows.set(k, r);
  };
  const keyOf = (k: unknown) => (by === "country" ? (k === "" || k === null ? null : String(k)) : Number(k));
  const bucketOf = sql`${`{${starts.join(",")}}`}::bigint[]`;
  // The minutes outside the whole hours, read from the clicks.
  const fragments = [...(lo < h0 ? [tsBetween(lo, h0)] : []), ...(h1 < hi ? [tsBetween(h1, hi)] : [])];
  // Link by link through the primary key (link, ts): a few minutes of each link are a short index
  // range, where one scan of the range over every link read the whole month's partition. `offset 0`
  // keeps the planner from turning the lateral subquery back into that scan.
  const inFragments = fragments.length
    ? sql`(select c.t, c.country, c.visitor from ${linkRows(ids)} cross join lateral (
        select ${clicks.timestamp} as t, ${clicks.country} as country, ${clicks.visitor} as visitor from ${clicks}
        where ${clicks.linkId} = l.id and (${fragments.length === 1 ? fragments[0] : or(...fragments)}) offset 0) c) f`
    : null;
  const clickKey = by === "country" ? sql`coalesce(f.country, '') collate "C"` : sql`width_bucket(f.t, ${bucketOf})`;
  const days = sql`workspace_id = ${workspaceId} and day >= ${d0} and day < ${d1}`;
  const [clicked, fragmentClicks, visited, [all], edges] = await Promise.all([
    rowsOf<{ k: unknown; n: unknown }>(
      app,
      sql`select ${by === "country" ? sql`country` : sql`width_bucket(hour, ${bucketOf})`} as k, sum(clicks) as n
        from click_hour_countries where workspace_id = ${workspaceId} and hour >= ${h0} and hour < ${h1} group by 1`,
    ),
    inFragments ? rowsOf<{ k: unknown; n: unknown }>(app, sql`select ${clickKey} as k, count(*) as n from ${inFragments} group by 1`) : [],
    by === "country"
      ? rowsOf<{ k: unknown; n: unknown }>(app, sql`select value as k, sum(visitors) as n from click_day_visitors where ${days} and dim = 'country' group by 1`)
      : visitorsByBucket(app, workspaceId, bucketMasks(d0, d1, starts)),
    rowsOf<{ n: unknown }>(app, sql`select coalesce(sum(visitors), 0) as n from click_day_visitors where ${days} and dim = 'total'`),
    edgeVisitors(app, workspaceId, by, { lo, hi, d0, d1, h0, h1, starts, bucketOf, clickKey, inFragments }),
  ]);
  for (const r of [...clicked, ...fragmentClicks]) {
    add(keyOf(r.k), Number(r.n), 0);
    total.clicks += Number(r.n);
  }
  for (const r of visited) add(keyOf(r.k), 0, Number(r.n));
  total.visitors += Number(all?.n ?? 0);
  for (const r of edges) {
    if (Number(r.gk) === 1) total.visitors += Number(r.n);
    else add(keyOf(r.k), 0, Number(r.n));
  }
  return { rows, total };
}

/** The links of `ids` as a row source `l(id)`, for a lateral join. */
const linkRows = (ids: LinkIds) => (Array.isArray(ids) ? sql`unnest(${`{${ids.join(",")}}`}::text[]) as l(id)` : sql`(${ids}) as l(id)`);

/** A UTC day (its number), a bucket (width_bucket's number over the starts) and the hours of that day in it (bit h: hour h). */
type DayMask = { d: number; b: number; mask: number };

/** The masks of the hours [from, to) (whole hours) of each UTC day, split by bucket; one bucket (0) without starts. */
function bucketMasks(from: number, to: number, starts: number[], fromHour = 0, toHour = 24): DayMask[] {
  const masks = new Map<string, DayMask>();
  let b = 0;
  for (let d = from; d < to; d++) {
    for (let h = d === from ? fromHour : 0; h < (d === to - 1 ? toHour : 24); h++) {
      const t = d * DAY_MS + h * HOUR_MS;
      while (b < starts.length && starts[b] <= t) b++;
      const key = `${d} ${b}`;
      const m = masks.get(key) ?? { d, b, mask: 0 };
      m.mask |= 1 << h;
      masks.set(key, m);
    }
  }
  return [...masks.values()];
}

/**
 * Visitors of the partial UTC days at either edge of [lo, hi): per key and in total (`gk` 1), each
 * day's keys that clicked in its whole hours inside the range (the summaries' hour masks) together
 * with the keys of the clicks of the minutes outside them, distinct per day.
 */
async function edgeVisitors(
  app: Pick<AppServices, "db">,
  workspaceId: string,
  by: "country" | "day",
  r: { lo: number; hi: number; d0: number; d1: number; h0: number; h1: number; starts: number[]; bucketOf: SQL; clickKey: SQL; inFragments: SQL | null },
): Promise<{ gk: unknown; k: unknown; n: unknown }[]> {
  const masks: DayMask[] = [];
  // The lower edge day's hours [h0, next midnight), the upper one's [midnight, h1).
  if (r.lo < r.d0 * DAY_MS && r.h0 < r.d0 * DAY_MS)
    masks.push(...bucketMasks(r.d0 - 1, r.d0, by === "day" ? r.starts : [], (r.h0 - (r.d0 - 1) * DAY_MS) / HOUR_MS, 24));
  if (r.d1 * DAY_MS < r.h1) masks.push(...bucketMasks(r.d1, r.d1 + 1, by === "day" ? r.starts : [], 0, (r.h1 - r.d1 * DAY_MS) / HOUR_MS));
  if (!masks.length && !r.inFragments) return [];
  const arr = (f: (m: DayMask) => number) => `{${masks.map(f).join(",")}}`;
  const m = sql`unnest(${arr((x) => x.d)}::int[], ${arr((x) => x.b)}::int[], ${arr((x) => x.mask)}::int[]) as m(d, b, mask)`;
  // The days named again as a condition of the table's own: the planner then reads those days
  // through the primary key, where it joined the unnested list against a scan of the whole table.
  const onDays = sql`v.workspace_id = ${workspaceId} and v.day = any(${arr((x) => x.d)}::int[])`;
  const summarized =
    by === "country"
      ? sql`select v.day as d, v.country collate "C" as k, v.visitor collate "C" as v from ${m}
          join click_visitor_countries v on v.day = m.d and (v.hours & m.mask) <> 0 where ${onDays}`
      : sql`select v.day as d, m.b as k, v.visitor collate "C" as v from ${m}
          join click_visitor_days v on v.day = m.d and (v.hours & m.mask) <> 0 where ${onDays}`;
  const parts = [
    ...(masks.length ? [summarized] : []),
    ...(r.inFragments
      ? [sql`select (f.t / ${DAY_MS})::int as d, ${r.clickKey} as k, f.visitor collate "C" as v from ${r.inFragments} where f.visitor is not null`]
      : []),
  ];
  return rowsOf(
    app,
    sql`select gk, k, sum(n) as n from (
        select grouping(k) as gk, k, count(distinct v) as n from (${sql.join(parts, sql` union all `)}) s group by grouping sets ((d, k), (d))
      ) g group by gk, k`,
  );
}

/** Visitors per local day bucket of whole UTC days: each visitor key of a day whose hours meet the bucket's hours of that day. */
async function visitorsByBucket(app: Pick<AppServices, "db">, workspaceId: string, list: DayMask[]) {
  const arr = (f: (m: DayMask) => number) => `{${list.map(f).join(",")}}`;
  return rowsOf<{ k: unknown; n: unknown }>(
    app,
    sql`select m.b as k, count(*) as n
      from unnest(${arr((m) => m.d)}::int[], ${arr((m) => m.b)}::int[], ${arr((m) => m.mask)}::int[]) as m(d, b, mask)
      join click_visitor_days v on v.workspace_id = ${workspaceId} and v.day = m.d and (v.hours & m.mask) <> 0
      group by 1`,
  );
}

const byClicks = (a: [string | number | null, Counts], b: [string | number | null, Counts]) =>
  b[1].clicks - a[1].clicks || (a[0] === b[0] ? 0 : a[0] === null ? 1 : b[0] === null ? -1 : a[0] < b[0] ? -1 : 1);

async function breakdownOf(app: Pick<AppServices, "db">, ids: LinkIds, q: BreakdownQuery, now: number, workspaceId?: string): Promise<BreakdownDto> {
  const tz = q.tz ?? "UTC";
  const head = { by: q.by, from: q.from ?? null, to: q.to ?? null, tz };
  const empty = { ...head, total: { clicks: 0, visitors: 0 }, rows: [] };
  const filters = filterConditions(q);
  const scope = (lo: number, hi: number) => and(inArray(clicks.linkId, ids), tsBetween(lo, hi), ...filters)!;
  const part: BreakdownPart = { app, ids, q, tz, head, empty, filtered: filters.length > 0, scope, workspaceId };
  return DAYS_OR_HOURS.has(q.by) ? timeBreakdown(part, now) : attributeBreakdown(part);
}

/** What both kinds of breakdown start from. */
type BreakdownPart = {
  app: Pick<AppServices, "db">;
  ids: LinkIds;
  q: BreakdownQuery;
  tz: string;
  head: Pick<BreakdownDto, "by" | "from" | "to" | "tz">;
  empty: BreakdownDto;
  filtered: boolean;
  scope: (lo: number, hi: number) => SQL;
  workspaceId?: string;
};

/** By an attribute of the click (country, browser, …, link): the largest groups first. */
async function attributeBreakdown({ app, ids, q, tz, head, empty, filtered, scope, workspaceId }: BreakdownPart): Promise<BreakdownDto> {
  const b = bounds({ from: q.from, to: q.to });
  if (!b) return empty;
  if (q.tz !== undefined) await inZone(() => rowsOf(app, sql`select now() at time zone ${tz}`));
  const by = q.by as FilterDimension | "link";
  const summed = workspaceId && !filtered && by === "country" ? await fromSummaries(app, workspaceId, ids, "country", b.lo, b.hi) : null;
  if (summed)
    return {
      ...head,
      total: summed.total,
      rows: [...summed.rows]
        .sort(byClicks)
        .slice(0, q.limit ?? BREAKDOWN_LIMIT_DEFAULT)
        .map(([key, c]) => ({ key: key as string | null, ...c })),
    };
  const numeric = by === "variant";
  const rows = await grouped(app, ATTRIBUTE[by], scope(b.lo, b.hi), { text: !numeric, limit: q.limit ?? BREAKDOWN_LIMIT_DEFAULT });
  const total = rows.find((r) => Number(r.gk) === 1);
  return {
    ...head,
    total: { clicks: Number(total?.clicks ?? 0), visitors: Number(total?.visitors ?? 0) },
    rows: rows
      .filter((r) => Number(r.gk) === 0)
      .slice(0, q.limit ?? BREAKDOWN_LIMIT_DEFAULT)
      .map((r) => ({ key: r.k === null ? null : numeric ? Number(r.k) : String(r.k), clicks: Number(r.clicks), visitors: Number(r.visitors) })),
  };
}

/** By day or hour: every bucket of the range, zeros included. An open start is the first click's. */
async function timeBreakdown({ app, ids, q, tz, head, empty, filtered, scope, workspaceId }: BreakdownPart, now: number): Promise<BreakdownDto> {
  let from = q.from;
  let to = q.to;
  if (from === undefined || to === undefined) {
    const whole = bounds({ from, to });
    if (!whole) return empty;
    const [r] = await rowsOf<{ lo: unknown; hi: unknown }>(
      app,
      sql`select min(${clicks.timestamp}) as lo, max(${clicks.timestamp}) as hi from ${clicks} where ${scope(whole.lo, whole.hi)}`,
    );
    if (from === undefined) {
      if (r?.lo == null) {
        if (q.tz !== undefined) await inZone(() => rowsOf(app, sql`select now() at time zone ${tz}`));
        return empty;
      }
      from = Number(r.lo);
    }
    to ??= Math.max(now, r?.hi == null ? 0 : Number(r.hi));
  }
  const b = bounds({ from, to });
  if (!b) return empty;
  const hours = (b.hi - b.lo) / HOUR_MS;
  if (q.by === "hour" ? hours > MAX_HOUR_BUCKETS : hours / 24 > MAX_DAY_BUCKETS) {
    const most = q.by === "hour" ? `${MAX_HOUR_BUCKETS} hours` : `${MAX_DAY_BUCKETS} days`;
    throw validation({ [q.from === undefined ? "to" : "from"]: [`by=${q.by} covers at most ${most}: narrow from and to`] });
  }
  const starts = await bucketStarts(app, q.by as "day" | "hour", tz, b.lo, b.hi);
  // The bucket of a click is found by binary search over the starts (an integer compare per step),
  // not by time-zone arithmetic per click.
  const summed = workspaceId && !filtered && q.by === "day" ? await fromSummaries(app, workspaceId, ids, "day", b.lo, b.hi, starts) : null;
  if (summed)
    return {
      ...head,
      total: summed.total,
      rows: starts.map((s, i) => ({ key: s, clicks: summed.rows.get(i + 1)?.clicks ?? 0, visitors: summed.rows.get(i + 1)?.visitors ?? 0 })),
    };
  const key = sql`width_bucket(${clicks.timestamp}, ${`{${starts.join(",")}}`}::bigint[])`;
  const rows = await grouped(app, key, scope(b.lo, b.hi), { text: false });
  const byBucket = new Map(rows.filter((r) => Number(r.gk) === 0).map((r) => [Number(r.k), r]));
  const total = rows.find((r) => Number(r.gk) === 1);
  return {
    ...head,
    total: { clicks: Number(total?.clicks ?? 0), visitors: Number(total?.visitors ?? 0) },
    rows: starts.map((s, i) => {
      const r = byBucket.get(i + 1);
      return { key: s, clicks: Number(r?.clicks ?? 0), visitors: Number(r?.visitors ?? 0) };
    }),
  };
}

/**
 * `GET /analytics/breakdown`: the workspace's short links (deleted ones included, linktree-owned
 * ones excluded, as `GET /analytics`), or the one `link_id` (else 404).
 */
export async function workspaceBreakdown(app: Pick<AppServices, "db">, actor: Actor, input: WorkspaceBreakdownInput, now = Date.now()): Promise<BreakdownDto> {
  const { link_id, ...q } = input;
  const { ids } = await workspaceLinkIds(app, actor, link_id);
  // The summaries cover a whole workspace's short links.
  return breakdownOf(app, ids, q, now, link_id === undefined ? actor.workspaceId : undefined);
}

/** `GET /links/{id}/analytics/breakdown`: any link of the workspace, deleted ones included (as `GET /links/{id}/analytics`). */
export async function linkBreakdown(app: Pick<AppServices, "db">, actor: Actor, input: LinkBreakdownInput, now = Date.now()): Promise<BreakdownDto> {
  const { id, ...q } = input;
  const link = await findOwnLink(app.db, actor, id);
  return breakdownOf(app, [link.id], q, now);
}
