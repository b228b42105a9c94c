// The analytics page's overview: totals, a series and breakdowns of the workspace's clicks (analytics.dashboard).
import { and, eq, inArray, isNull, sql, type SQL } from "drizzle-orm";
import { clicks, links } from "../../../db/schema";
import { validation } from "../../domain/errors";
import type { AppServices } from "../../core/services";
import type { Actor } from "../../trpc/context";
import { tsBetween, workspaceLinkIds, type LinkIds } from "./analytics.service";
import {
  BREAKDOWNS,
  MAX_HOURLY_DAYS,
  NONE,
  type BreakdownKey,
  type BreakdownRow,
  type DashboardDto,
  type DashboardFilterKey,
  type DashboardInput,
} from "./overview.schema";

/** Rows per breakdown. */
export const TOP = 10;
const DAY_MS = 86_400_000;

// The host of a referrer URL (userinfo and port dropped), or the raw value when it is not a URL.
const referrerDomain = sql<
  string | null
>`lower(coalesce(substring(${clicks.referer} from '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#@]*@)?([^/?#:]+)'), ${clicks.referer}))`;

/** The SQL value of each filterable dimension. */
const DIMENSIONS: Record<DashboardFilterKey, SQL> = {
  referrer: referrerDomain,
  country: sql`${clicks.country}`,
  city: sql`${clicks.city}`,
  device: sql`${clicks.device}`,
  browser: sql`${clicks.browser}`,
  platform: sql`${clicks.platform}`,
  rule: sql`${clicks.rule}`,
};

const UNKNOWN: Record<DashboardFilterKey, string> = {
  referrer: "Direct / none",
  country: "Unknown",
  city: "Unknown",
  device: "Unknown",
  browser: "Unknown",
  platform: "Unknown",
  rule: "url",
};

const filterConditions = (input: DashboardInput): SQL[] =>
  (Object.keys(DIMENSIONS) as DashboardFilterKey[]).flatMap((k) => {
    const v = input[k];
    if (v === undefined) return [];
    return [v === NONE ? isNull(DIMENSIONS[k]) : eq(DIMENSIONS[k], v)];
  });

const addDays = (day: string, n: number) => new Date(Date.parse(day) + n * DAY_MS).toISOString().slice(0, 10);
const daysBetween = (from: string, to: string) => Math.round((Date.parse(to) - Date.parse(from)) / DAY_MS);
/** The calendar day of `ms` in `tz` (en-CA formats as YYYY-MM-DD). */
const dayIn = (ms: number, tz: string) => new Intl.DateTimeFormat("en-CA", { timeZone: tz, year: "numeric", month: "2-digit", day: "2-digit" }).format(ms);

/** Rows of a raw query: node-postgres and PGlite answer `{rows}`, postgres.js the array itself. */
async function rowsOf<T>(app: Pick<AppServices, "db">, query: SQL): Promise<T[]> {
  const r = (await app.db.execute(query)) as unknown as { rows: T[] } | T[];
  return Array.isArray(r) ? r : r.rows;
}

/**
 * ms bounds of whole local days, computed by PostgreSQL so that its time-zone rules (the ones the
 * buckets use) decide where a day starts, DST changes included. A zone ICU knows but PostgreSQL
 * does not is the caller's error, not ours.
 */
async function dayBounds(app: Pick<AppServices, "db">, tz: string, ranges: [string, string][]): Promise<{ lo: number; hi: number }[]> {
  try {
    return await Promise.all(
      ranges.map(async ([from, to]) => {
        const [r] = await rowsOf<{ lo: unknown; hi: unknown }>(
          app,
          sql`select
          (extract(epoch from (${from}::date::timestamp at time zone ${tz})) * 1000)::bigint as lo,
          (extract(epoch from ((${to}::date + 1)::timestamp at time zone ${tz})) * 1000)::bigint as hi`,
        );
        return { lo: Number(r.lo), hi: Number(r.hi) };
      }),
    );
  } catch (e) {
    if (/time zone/i.test(String((e as Error)?.message))) throw validation({ tz: ["is not a time zone this server knows"] });
    throw e;
  }
}

/** Every bucket label of [lo, hi) in `tz`, oldest first: local days, or local hours (a repeated autumn hour is one bucket). */
async function bucketsOf(app: Pick<AppServices, "db">, tz: string, interval: "hour" | "day", lo: number, hi: number): Promise<string[]> {
  const format = interval === "hour" ? "YYYY-MM-DD HH24:00" : "YYYY-MM-DD";
  const step = interval === "hour" ? "1 hour" : "1 day";
  // Days step in local time (a local day is 23 or 25 hours at a DST change); hours in absolute time.
  const rows = await rowsOf<{ b: string }>(
    app,
    interval === "hour"
      ? sql`select b from (select to_char(g at time zone ${tz}, ${format}) as b, min(g) as o
          from generate_series(to_timestamp(${lo} / 1000.0), to_timestamp(${hi - 1} / 1000.0), ${step}::interval) g group by 1) s order by o`
      : sql`select to_char(g, ${format}) as b
          from generate_series((to_timestamp(${lo} / 1000.0) at time zone ${tz})::date::timestamp, (to_timestamp(${hi - 1} / 1000.0) at time zone ${tz})::date::timestamp, ${step}::interval) g order by g`,
  );
  return rows.map((x) => x.b);
}

async function seriesOf(app: Pick<AppServices, "db">, where: SQL, tz: string, interval: "hour" | "day", lo: number, hi: number) {
  const format = interval === "hour" ? "YYYY-MM-DD HH24:00" : "YYYY-MM-DD";
  const bucket = sql<string>`to_char(to_timestamp(${clicks.timestamp} / 1000.0) at time zone ${tz}, ${format})`;
  const [labels, rows] = await Promise.all([
    bucketsOf(app, tz, interval, lo, hi),
    // Grouped by position: the expression's parameters would not match a repeated GROUP BY expression.
    app.db
      .select({ b: bucket, n: sql<number>`count(*)`.mapWith(Number) })
      .from(clicks)
      .where(where)
      .groupBy(sql`1`),
  ]);
  const counts = new Map(rows.map((r) => [r.b, r.n]));
  return labels.map((b) => ({ bucket: b, clicks: counts.get(b) ?? 0 }));
}

const COLUMNS: Record<BreakdownKey, string> = {
  link: "link_id",
  referrer: "refd",
  country: "country",
  city: "city",
  device: "device",
  browser: "browser",
  platform: "platform",
  rule: "rule",
};
type ScanRow = { k: BreakdownKey | "bucket"; bucket: string | null; city_country: string | null; n: unknown } & Record<string, string | null>;

/** Nulls last, then by value (ties in a stable order). */
const byCount = (a: { value: string | null; clicks: number }, b: { value: string | null; clicks: number }) =>
  b.clicks - a.clicks || (a.value === null ? 1 : b.value === null ? -1 : a.value < b.value ? -1 : a.value > b.value ? 1 : 0);

/**
 * The series' counts and every breakdown in one pass over the clicks (GROUPING SETS), instead of a
 * scan per dimension.
 */
async function scan(app: Pick<AppServices, "db">, where: SQL, tz: string, interval: "hour" | "day") {
  const format = interval === "hour" ? "YYYY-MM-DD HH24:00" : "YYYY-MM-DD";
  const rows = await rowsOf<ScanRow>(
    app,
    sql`select case when grouping(bucket) = 0 then 'bucket' when grouping(link_id) = 0 then 'link' when grouping(refd) = 0 then 'referrer'
        when grouping(country) = 0 then 'country' when grouping(city) = 0 then 'city' when grouping(device) = 0 then 'device'
        when grouping(browser) = 0 then 'browser' when grouping(platform) = 0 then 'platform' else 'rule' end as k,
      bucket, link_id, refd, country, city, device, browser, platform, rule, min(country) as city_country, count(*) as n
    from (select ${clicks.linkId} as link_id, ${referrerDomain} as refd, ${clicks.country} as country, ${clicks.city} as city,
        ${clicks.device} as device, ${clicks.browser} as browser, ${clicks.platform} as platform, ${clicks.rule} as rule,
        to_char(to_timestamp(${clicks.timestamp} / 1000.0) at time zone ${tz}, ${format}) as bucket
      from ${clicks} where ${where}) c
    group by grouping sets ((bucket), (link_id), (refd), (country), (city), (device), (browser), (platform), (rule))`,
  );
  const series = new Map<string, number>();
  const tops = Object.fromEntries(BREAKDOWNS.map((k) => [k, [] as (BreakdownRow & { country: string | null })[]])) as Record<
    BreakdownKey,
    (BreakdownRow & { country: string | null })[]
  >;
  for (const r of rows) {
    if (r.k === "bucket") series.set(r.bucket!, Number(r.n));
    else tops[r.k].push({ value: r[COLUMNS[r.k]], label: "", clicks: Number(r.n), country: r.city_country });
  }
  for (const k of BREAKDOWNS) tops[k] = tops[k].sort(byCount).slice(0, TOP);
  return { series, tops };
}

/** Rows with their labels: link slugs, cities with their country (there is more than one Springfield), "Unknown". */
async function labelled(app: Pick<AppServices, "db">, tops: Awaited<ReturnType<typeof scan>>["tops"]): Promise<DashboardDto["breakdowns"]> {
  const ids = tops.link.map((r) => r.value!).filter(Boolean);
  const slugs = ids.length ? await app.db.select({ id: links.id, slug: links.slug }).from(links).where(inArray(links.id, ids)) : [];
  const slugOf = new Map(slugs.map((x) => [x.id, x.slug]));
  const label = (k: BreakdownKey, r: { value: string | null; country: string | null }) => {
    if (r.value === null) return UNKNOWN[k as DashboardFilterKey] ?? "Unknown";
    if (k === "link") return slugOf.get(r.value) ?? r.value;
    if (k === "city" && r.country) return `${r.value}, ${r.country}`;
    return r.value;
  };
  return Object.fromEntries(
    BREAKDOWNS.map((k) => [k, tops[k].map((r) => ({ value: r.value, label: label(k, r), clicks: r.clicks }))]),
  ) as DashboardDto["breakdowns"];
}

/**
 * The analytics dashboard: a series in the viewer's time zone, the previous period of the same
 * number of days, and top values of each dimension, all over the clicks every filter selects
 * (cross-filtering). Counts are exact (`count(*)` over the clicks, not samples). The links are those
 * of `GET /analytics`: the workspace's short links, or the one `link_id` (else 404).
 */
export async function dashboard(app: Pick<AppServices, "db">, actor: Actor, input: DashboardInput, now = Date.now()): Promise<DashboardDto> {
  const { ids } = await workspaceLinkIds(app, actor, input.link_id);
  const tz = input.tz;
  const filters = filterConditions(input);
  const scope = (lo?: number, hi?: number) =>
    and(inArray(clicks.linkId, ids as LinkIds), ...(lo !== undefined && hi !== undefined ? [tsBetween(lo, hi)] : []), ...filters)!;

  let toDay = input.to ?? dayIn(now, tz);
  let fromDay = input.from;
  if (!fromDay) {
    const [first] = await app.db
      .select({ t: sql<number | null>`min(${clicks.timestamp})`.mapWith((v) => (v === null ? null : Number(v))) })
      .from(clicks)
      .where(scope());
    fromDay = first?.t != null ? dayIn(first.t, tz) : toDay;
  }
  if (fromDay > toDay) toDay = fromDay;
  const days = daysBetween(fromDay, toDay) + 1;
  const interval = input.interval ?? (days <= 2 ? "hour" : "day");
  if (interval === "hour" && days > MAX_HOURLY_DAYS) throw validation({ interval: [`hourly series cover at most ${MAX_HOURLY_DAYS} days`] });

  // The previous period: the same number of days right before (only for an explicit start).
  const prevDays: [string, string] | null = input.from ? [addDays(fromDay, -days), addDays(fromDay, -1)] : null;
  const [cur, prev] = await dayBounds(app, tz, prevDays ? [[fromDay, toDay], prevDays] : [[fromDay, toDay]]);

  const visitorDays = app.db
    .select({ n: sql<number>`count(distinct (${clicks.timestamp} / ${DAY_MS})::text || ':' || ${clicks.visitor})`.mapWith(Number) })
    .from(clicks)
    .where(scope(cur.lo, cur.hi));
  const [[{ n: visitors }], labels, current, previousSeries] = await Promise.all([
    visitorDays,
    bucketsOf(app, tz, interval, cur.lo, cur.hi),
    scan(app, scope(cur.lo, cur.hi), tz, interval),
    prev ? seriesOf(app, scope(prev.lo, prev.hi), tz, interval, prev.lo, prev.hi) : Promise.resolve(null),
  ]);
  const series = labels.map((b) => ({ bucket: b, clicks: current.series.get(b) ?? 0 }));
  const total = series.reduce((s, p) => s + p.clicks, 0);
  const prevTotal = previousSeries?.reduce((s, p) => s + p.clicks, 0) ?? null;
  return {
    tz,
    interval,
    from_day: fromDay,
    to_day: toDay,
    from: cur.lo,
    to: cur.hi - 1,
    total,
    visitors,
    previous: prev && prevDays ? { from_day: prevDays[0], to_day: prevDays[1], from: prev.lo, to: prev.hi - 1, total: prevTotal ?? 0 } : null,
    change: prevTotal ? Math.round(((total - prevTotal) / prevTotal) * 1000) / 10 : null,
    // The previous period aligned point by point (a DST day may give it one bucket more or less).
    series: series.map((p, i) => ({ ...p, previous: previousSeries ? (previousSeries[i]?.clicks ?? 0) : null })),
    breakdowns: await labelled(app, current.tops),
  };
}
