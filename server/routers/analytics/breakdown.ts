// Aggregated analytics: clicks and daily unique visitors grouped by one dimension (analytics.breakdown).
import { and, eq, inArray, isNull, or, sql, type SQL } from "drizzle-orm";
import { clicks } from "../../../db/schema";
import { validation } from "../../domain/errors";
import type { AppServices } from "../../core/services";
import type { Actor } from "../../trpc/context";
import { findOwnLink } from "../links";
import { referrerHostOf } from "../../core/click-pipeline/summary";
import { bounds, tsBetween, workspaceLinkIds, type LinkIds } from "./analytics.service";
import {
  BREAKDOWN_LIMIT_DEFAULT,
  FILTER_DIMENSIONS,
  MAX_DAY_BUCKETS,
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

/** The host of the referrer URL in lower case (userinfo and port dropped); null without a referrer or when it is not a URL. */
export const referrerDomainSql = sql.raw(referrerHostOf(`"clicks"."referer"`));

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

export function filterConditions(q: Pick<BreakdownQuery, FilterDimension>): SQL[] {
  return FILTER_DIMENSIONS.flatMap((k) => {
    const v = q[k];
    if (v === undefined) return [];
    return [v === NONE ? isNull(ATTRIBUTE[k]) : eq(ATTRIBUTE[k], v)];
  });
}

/** Rows of a raw query: node-postgres and PGlite answer `{rows}`, postgres.js the array itself. */
export async function rowsOf<T>(app: Pick<AppServices, "db">, query: SQL): Promise<T[]> {
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
 * hourly counts and those of the minutes before the first whole hour and after the last from the
 * clicks; visitors (distinct per UTC day, so the days add up) of each UTC day, or of each part of it
 * a local day holds, from the day's count when the whole day is in, from the day's first and last
 * hours when its start or end is (see splitPieces). By day this needs buckets starting on whole
 * hours; null when the summaries cannot answer (the caller reads the clicks instead). Two
 * statements: one over the summaries, one over the few clicks they cannot answer for, read once.
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
  if (Math.ceil(lo / DAY_MS) >= Math.floor(hi / DAY_MS) || starts.some((s) => s % HOUR_MS !== 0)) return null;
  const h0 = Math.ceil(lo / HOUR_MS) * HOUR_MS;
  const h1 = Math.floor(hi / HOUR_MS) * HOUR_MS;
  const bucketOf = sql`${`{${starts.join(",")}}`}::bigint[]`;
  // Rows (part, k, n): 'c' clicks and 'r' visitors of key k, 't' visitors of the whole selection.
  const days = splitPieces(dayPieces(lo, hi, []));
  const keyed = by === "country" ? { dim: "country" as const, ...days } : { dim: "total" as const, ...splitPieces(dayPieces(lo, hi, starts)) };
  const counted = [
    sql`select 'c' as part, (${by === "country" ? sql`country` : sql`width_bucket(hour, ${bucketOf})`})::text as k, sum(clicks) as n
      from click_hour_countries where workspace_id = ${workspaceId} and hour >= ${h0} and hour < ${h1} group by 2`,
    ...countedVisitors(workspaceId, "r", keyed),
    ...countedVisitors(workspaceId, "t", { dim: "total", ...days }),
  ];
  // The minutes outside the whole hours, and the parts of a day that are neither its start nor its end.
  const fragments = [...(lo < h0 ? [[lo, h0]] : []), ...(h1 < hi ? [[h1, hi]] : [])];
  const fromClicks = [
    ...(fragments.length
      ? [
          sql`select 'c' as part, (${by === "country" ? sql`coalesce(f.country, '')` : sql`width_bucket(f.t, ${bucketOf})`})::text as k, count(*) as n
            from f where ${readIn(fragments)} group by 2`,
        ]
      : []),
    ...minuteVisitors(workspaceId, "r", keyed),
    ...minuteVisitors(workspaceId, "t", { dim: "total", ...days }),
  ];
  const ranges = mergeRanges([...fragments, ...keyed.minutes.flatMap((p) => p.ranges), ...days.minutes.flatMap((p) => p.ranges)]);
  const [summed, read] = await Promise.all([
    rowsOf<{ part: string; k: string | null; n: unknown }>(app, sql.join(counted, sql` union all `)),
    fromClicks.length
      ? rowsOf<{ part: string; k: string | null; n: unknown }>(
          app,
          sql`with f as materialized (select * from ${clicksIn(ids, ranges)}) ${sql.join(fromClicks, sql` union all `)}`,
        )
      : [],
  ]);
  const rows = new Map<string | number | null, Counts>();
  const total = { clicks: 0, visitors: 0 };
  for (const r of [...summed, ...read]) {
    const n = Number(r.n);
    if (r.part === "t") {
      total.visitors += n;
      continue;
    }
    const k = by === "country" ? (r.k === "" || r.k === null ? null : r.k) : Number(r.k);
    const c = rows.get(k) ?? { clicks: 0, visitors: 0 };
    if (r.part === "c") {
      c.clicks += n;
      total.clicks += n;
    } else c.visitors += n;
    rows.set(k, c);
  }
  return { rows, total };
}

/** A click of the clicks read once (`f`, see fromSummaries) in one of the ranges [lo, hi). */
const readIn = (ranges: number[][]) => sql`(${or(...ranges.map(([a, b]) => sql`(f.t >= ${a} and f.t < ${b})`))})`;

/** Sorted, non-overlapping ranges covering the given [lo, hi) ranges. */
function mergeRanges(ranges: number[][]): number[][] {
  const out: number[][] = [];
  for (const [a, b] of [...ranges].sort((x, y) => x[0] - y[0])) {
    const last = out[out.length - 1];
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/** The links of `ids` as a row source `l(id)`, for a lateral join. */
const linkRows = (ids: LinkIds) => (Array.isArray(ids) ? sql`unnest(${`{${ids.join(",")}}`}::text[]) as l(id)` : sql`(${ids}) as l(id)`);

/**
 * The clicks of `ids` in the ranges [lo, hi) as a row source `c(t, country, visitor)`. Link by link
 * and range by range through the primary key (link, ts): a few minutes of each link are a short
 * index range, where one scan of the range over every link read the whole month's partition, and
 * two ranges joined by `or` read all of a link's clicks in a month. `offset 0` keeps the planner
 * from turning the lateral subquery back into that scan.
 */
const clicksIn = (ids: LinkIds, ranges: number[][]) => {
  const one = ([a, b]: number[]) =>
    sql`select ${clicks.timestamp} as t, ${clicks.country} as country, ${clicks.visitor} as visitor from ${clicks} where ${clicks.linkId} = l.id and ${tsBetween(a, b)}`;
  return sql`(select c.t, c.country, c.visitor from ${linkRows(ids)} cross join lateral (${sql.join(ranges.map(one), sql` union all `)} offset 0) c) c`;
};

/** The part [s, e) (ms) of the UTC day `d` (its number) counted under the bucket `b` (0 without buckets). */
type Piece = { d: number; s: number; e: number; b: number };

/** The parts of each UTC day [lo, hi) touches, split at the bucket starts; `b` is width_bucket's number of the part. */
function dayPieces(lo: number, hi: number, starts: number[]): Piece[] {
  const out: Piece[] = [];
  let b = 0;
  for (let d = Math.floor(lo / DAY_MS); d * DAY_MS < hi; d++) {
    const end = Math.min(hi, (d + 1) * DAY_MS);
    for (let s = Math.max(lo, d * DAY_MS); s < end;) {
      while (b < starts.length && starts[b] <= s) b++;
      const e = b < starts.length ? Math.min(end, starts[b]) : end;
      out.push({ d, s, e, b });
      s = e;
    }
  }
  return out;
}

/** A day's first hours [0, hr) or last hours [hr, 24) counted under the bucket `b`. */
type HourCut = { d: number; hr: number; b: number };
/** The hours of a day in `mask` (bit h: hour h), counted under the bucket `b`. */
type HourMask = { d: number; mask: number; b: number };
/** Minutes of a day (ranges [s, e) in ms) whose visitors come from the clicks; `unseen` keeps only keys no hour of the same day counted already (their hour mask `v.hours`). */
type Minutes = { d: number; b: number; ranges: number[][]; unseen?: SQL };
type Split = { whole: Piece[]; starts: HourCut[]; ends: HourCut[]; middles: HourMask[]; minutes: Minutes[] };

/**
 * How the visitors of each piece of a day are counted. A whole day: the day's count. A day's start
 * [0, e): the keys whose first hour is before e's hour, and its end [s, 24 h): those whose last hour
 * is s's or later (click_visitor_hours). Whole hours in the middle of a day: the day's keys whose
 * hour mask meets them. The minutes of a part hour at either edge add the keys that clicked in them
 * and in no hour counted already.
 */
function splitPieces(pieces: Piece[]): Split {
  const split: Split = { whole: [], starts: [], ends: [], middles: [], minutes: [] };
  for (const p of pieces) {
    const day = p.d * DAY_MS;
    const { d, b } = p;
    if (p.s === day && p.e === day + DAY_MS) split.whole.push(p);
    else if (p.s === day) {
      const hr = Math.floor((p.e - day) / HOUR_MS);
      split.starts.push({ d, hr, b });
      if (p.e % HOUR_MS) split.minutes.push({ d, b, ranges: [[day + hr * HOUR_MS, p.e]], unseen: sql`(v.hours & ${(1 << hr) - 1}) = 0` });
    } else if (p.e === day + DAY_MS) {
      const hr = Math.ceil((p.s - day) / HOUR_MS);
      split.ends.push({ d, hr, b });
      if (p.s % HOUR_MS) split.minutes.push({ d, b, ranges: [[p.s, day + hr * HOUR_MS]], unseen: sql`(v.hours >> ${hr}) = 0` });
    } else {
      const from = Math.ceil((p.s - day) / HOUR_MS);
      const to = Math.floor((p.e - day) / HOUR_MS);
      if (from >= to) {
        split.minutes.push({ d, b, ranges: [[p.s, p.e]] });
        continue;
      }
      const mask = ((1 << to) - 1) & ~((1 << from) - 1);
      split.middles.push({ d, mask, b });
      const ranges = [...(p.s < day + from * HOUR_MS ? [[p.s, day + from * HOUR_MS]] : []), ...(day + to * HOUR_MS < p.e ? [[day + to * HOUR_MS, p.e]] : [])];
      if (ranges.length) split.minutes.push({ d, b, ranges, unseen: sql`(v.hours & ${mask}) = 0` });
    }
  }
  return split;
}

type Counting = Split & { dim: "total" | "country" };

/** Rows (part, k, n) of the visitors the summaries count: k the country for `dim` 'country', the piece's bucket for 'total'. */
function countedVisitors(workspaceId: string, part: string, { dim, whole, starts, ends, middles }: Counting): SQL[] {
  const key = dim === "country" ? sql`v.value` : sql`m.b::text`;
  const list = <T extends object>(xs: T[], f: (x: T) => number) => `{${xs.map(f).join(",")}}`;
  // The days named again as a range of the table's own key: the planner then reads them through the primary key.
  const daysOf = (xs: { d: number }[]) => sql`v.workspace_id = ${workspaceId} and v.dim = ${dim} and v.day >= ${xs[0].d} and v.day <= ${xs[xs.length - 1].d}`;
  const cut = (xs: HourCut[], n: SQL, hours: SQL) =>
    sql`select ${part} as part, ${key} as k, sum(${n}) as n from unnest(${list(xs, (x) => x.d)}::int[], ${list(xs, (x) => x.hr)}::int[], ${list(xs, (x) => x.b)}::int[]) m(d, hr, b)
      join click_visitor_hours v on v.day = m.d and ${hours} and ${daysOf(xs)} group by 2`;
  return [
    ...(whole.length
      ? [
          sql`select ${part} as part, ${key} as k, sum(v.visitors) as n from unnest(${list(whole, (x) => x.d)}::int[], ${list(whole, (x) => x.b)}::int[]) m(d, b)
            join click_day_visitors v on v.day = m.d and ${daysOf(whole)} group by 2`,
        ]
      : []),
    ...(starts.length ? [cut(starts, sql`v.firsts`, sql`v.hour < m.hr`)] : []),
    ...(ends.length ? [cut(ends, sql`v.lasts`, sql`v.hour >= m.hr`)] : []),
    ...(middles.length
      ? [
          sql`select ${part} as part, ${dim === "country" ? sql`v.country` : sql`m.b::text`} as k, count(*) as n
            from unnest(${list(middles, (x) => x.d)}::int[], ${list(middles, (x) => x.mask)}::int[], ${list(middles, (x) => x.b)}::int[]) m(d, mask, b)
            join ${visitorSets(dim)} v on v.day = m.d and (v.hours & m.mask) <> 0
            where v.workspace_id = ${workspaceId} and v.day >= ${middles[0].d} and v.day <= ${middles[middles.length - 1].d} group by 2`,
        ]
      : []),
  ];
}

/** The table of each day's visitor keys with their hour masks: per country, or of the whole workspace. */
const visitorSets = (dim: "total" | "country") => (dim === "country" ? sql`click_visitor_countries` : sql`click_visitor_days`);

/** Rows (part, k, n) of the visitors of the minutes, from the clicks `f(t, country, visitor)`. */
function minuteVisitors(workspaceId: string, part: string, { dim, minutes }: Counting): SQL[] {
  return minutes.map(
    (p) =>
      sql`select ${part} as part, k, count(*) as n from (
        select distinct ${dim === "country" ? sql`coalesce(f.country, '')` : sql`${String(p.b)}`}::text as k, f.visitor from f
        ${
          p.unseen
            ? sql`join ${visitorSets(dim)} v on v.workspace_id = ${workspaceId} and v.day = ${p.d} and v.visitor = f.visitor
                ${dim === "country" ? sql`and v.country = coalesce(f.country, '')` : sql``} and ${p.unseen}`
            : sql``
        }
        where ${readIn(p.ranges)} and f.visitor is not null) x group by 2`,
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
  // With a link it is that link's breakdown, GET /links/{id}/analytics/breakdown's answer (any link of the workspace).
  if (link_id !== undefined) return linkBreakdown(app, actor, { ...q, id: link_id }, now);
  // The summaries cover a whole workspace's short links.
  return breakdownOf(app, (await workspaceLinkIds(app, actor, undefined)).ids, q, now, actor.workspaceId);
}

/** `GET /links/{id}/analytics/breakdown`: any link of the workspace, deleted ones included (as `GET /links/{id}/analytics`). */
export async function linkBreakdown(app: Pick<AppServices, "db">, actor: Actor, input: LinkBreakdownInput, now = Date.now()): Promise<BreakdownDto> {
  const { id, ...q } = input;
  const link = await findOwnLink(app.db, actor, id);
  return breakdownOf(app, [link.id], q, now);
}
