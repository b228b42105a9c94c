// The breakdown summaries (db/schema/analytics.ts), written only here and by retention. They are fed
// the clicks a statement has just stored (never a click already there), so a retried batch or a
// replayed spool counts nothing twice; the visitor tables are sets, so the visitor counts grow only
// by keys new to their day.
import type { ClickRecord } from "./types";

/**
 * The host of a referrer URL (SQL over the column `col`) in lower case, userinfo and port dropped, an
 * IPv6 literal with its brackets (`[::1]`); null without a referrer or when it is not a URL.
 */
export const referrerHostOf = (col: string) => `lower(substring(${col} from '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#@]*@)?(\\[[0-9A-Fa-f:.]+\\]|[^/?#:\\[]+)'))`;

/**
 * The attributes click_day_values counts, as rows (dim, value, detail) of the clicks `a`: '' stands
 * for no value, and a city carries its country.
 */
export const dayValueRows = (a: string) => `(values ('link', ${a}.link_id, ''), ('country', coalesce(${a}.country, ''), ''),
    ('city', coalesce(${a}.city, ''), coalesce(${a}.country, '')), ('device', ${a}.device, ''), ('os', coalesce(${a}.platform, ''), ''),
    ('browser', coalesce(${a}.browser, ''), ''), ('referrer_domain', coalesce(${referrerHostOf(`${a}.referer`)}, ''), ''),
    ('rule', ${a}.rule, ''), ('trigger', ${a}.trigger, ''))`;

/**
 * The per-day counts of a batch about to be stored, made as the batch is read (JSON for
 * `dayValuesOfCounts`): the rows of `dayValueRows` summed per workspace (the click's, which is its
 * link's: a link never changes workspace) and UTC day, the referrer still whole (SQL takes its host,
 * in one place). A batch of varied visitors has about as many
 * distinct attribute combinations as clicks; counted here, PostgreSQL upserts from a few hundred
 * summed rows instead of exploding every click into nine.
 */
export function dayValueCounts(rows: readonly ClickRecord[]): string {
  const days = new Map<string, { workspace: string; day: number; dims: Map<string, number>[] }>();
  const bump = (m: Map<string, number>, value: string) => m.set(value, (m.get(value) ?? 0) + 1);
  for (const r of rows) {
    const day = Math.floor(r.timestamp / 86_400_000);
    const at = `${r.workspaceId}\u0001${day}`;
    let d = days.get(at);
    if (!d) days.set(at, (d = { workspace: r.workspaceId, day, dims: DAY_VALUE_DIMS.map(() => new Map()) }));
    const [link, country, city, device, os, browser, referrer, rule, trigger] = d.dims;
    bump(link, r.linkId);
    bump(country, r.country ?? "");
    bump(city, `${r.city ?? ""}\u0001${r.country ?? ""}`);
    bump(device, r.device);
    bump(os, r.platform ?? "");
    bump(browser, r.browser ?? "");
    bump(referrer, r.referer ?? "");
    bump(rule, r.rule);
    bump(trigger, r.trigger ?? "link");
  }
  const out: { w: string; d: number; k: string; v: string; t: string; n: number }[] = [];
  for (const { workspace, day, dims } of days.values())
    dims.forEach((m, i) => {
      for (const [value, n] of m) {
        const cut = i === CITY ? value.indexOf("\u0001") : -1;
        out.push({ w: workspace, d: day, k: DAY_VALUE_DIMS[i], v: cut < 0 ? value : value.slice(0, cut), t: cut < 0 ? "" : value.slice(cut + 1), n });
      }
    });
  return JSON.stringify(out);
}

/** The dimensions of `dayValueRows`, in its order: what the analytics page ranks. */
export const DAY_VALUE_DIMS = ["link", "country", "city", "device", "os", "browser", "referrer_domain", "rule", "trigger"] as const;
const CITY = DAY_VALUE_DIMS.indexOf("city");

/**
 * The per-day counts rows (workspace_id, day, dim, value, detail, n) for summaryCtes, from
 * `dayValueCounts(…)` (the JSON parameter `json`), less the clicks among `source` whose link is
 * not a short link (a linktree page's views, or a link no longer there), which the counting could
 * not tell apart. Refers to summaryCtes' `lk`.
 */
export const dayValuesOfCounts = (json: string, source: string) => `
    select a.w, a.d, a.k, case when a.k = 'referrer_domain' then coalesce(${referrerHostOf("a.v")}, '') else a.v end, a.t, a.n
    from json_to_recordset(${json}) as a(w text, d int, k text, v text, t text, n int)
    union all
    select c.workspace_id, (c."timestamp" / 86400000)::int, v.dim, v.value, v.detail, -1
    from ${source} s join clicks c on c.link_id = s.link_id and c.ts = s.ts
    cross join lateral ${dayValueRows("c")} v(dim, value, detail)
    where s.link_id not in (select link_id from lk)`;

/**
 * The same rows from the clicks themselves: `counted` has the clicks' columns and how many of the
 * clicks just stored have them (`n`). Refers to summaryCtes' `lk`.
 */
export const dayValuesOfClicks = (counted: string) => `
    select lk.workspace_id, (a."timestamp" / 86400000)::int, v.dim, v.value, v.detail, a.n
    from ${counted} join lk on lk.link_id = a.link_id cross join lateral ${dayValueRows("a")} v(dim, value, detail)`;

/** The per-day counts (click_day_values) of the clicks stored so far of the workspaces `where` selects (a condition on `l.workspace_id`). */
export const dayValuesFromClicks = (where: string) => `
  insert into click_day_values (workspace_id, day, dim, value, detail, clicks)
  select l.workspace_id, (c."timestamp" / 86400000)::int, v.dim, v.value, v.detail, count(*)::int
  from clicks c join links l on l.id = c.link_id and l.kind = 'link' cross join lateral ${dayValueRows("c")} v(dim, value, detail)
  where ${where} group by 1, 2, 3, 4, 5`;

/** The lowest and the highest hour (0-23) set in an hour mask; null for an empty mask. */
const firstHour = (mask: string) => `case when ${mask} <> 0 then 24 - length(rtrim(${mask}::bit(24)::text, '0')) end`;
const lastHour = (mask: string) => `case when ${mask} <> 0 then 24 - position('1' in ${mask}::bit(24)::text) end`;

/** Rows (hour, firsts, lasts) counting a mask of `x.hours` once, less the mask `x.${prior}` when given. */
const hourCounts = (prior?: string) =>
  `(values (${firstHour("x.hours")}, 1, 0), (${lastHour("x.hours")}, 0, 1)${
    prior ? `, (${firstHour(`x.${prior}`)}, -1, 0), (${lastHour(`x.${prior}`)}, 0, -1)` : ""
  }) e(hour, f, l)`;

/**
 * The visitor hour counts (click_visitor_hours) of the visitor sets of the workspaces `where`
 * selects (a condition on `workspace_id`): how a summary is rebuilt from the sets.
 */
export const visitorHoursFromSets = (where: string) => `
  insert into click_visitor_hours (workspace_id, day, dim, value, hour, firsts, lasts)
  select x.workspace_id, x.day, x.dim, x.value, e.hour, sum(e.f)::int, sum(e.l)::int from (
    select workspace_id, day, 'total' as dim, '' as value, hours from click_visitor_days where ${where}
    union all select workspace_id, day, 'country', country, hours from click_visitor_countries where ${where}
  ) x cross join lateral ${hourCounts()} where e.hour is not null group by 1, 2, 3, 4, 5`;

/**
 * Common table expressions (to follow `with` or a comma) that add the clicks of `source` to the
 * summaries. `source` has the columns `link_id`, `timestamp`, `country` and `visitor` of the clicks
 * just stored; `dayValues` is their per-day counts (`dayValuesOfCounts` or `dayValuesOfClicks`). The
 * workspace is the link's, and linktree pages are left out, as the workspace's analytics count them:
 * `lk` holds the short links among the clicks' links, each looked up once.
 *
 * A visitor key seen again in an hour it already clicked in changes nothing, and its row is not
 * rewritten (most clicks of a busy link are such repeats). Every upsert goes in key order, so two
 * writers storing clicks of the same visitors lock the rows they share in the same order instead
 * of deadlocking.
 */
export const summaryCtes = (source: string, dayValues: string) => `
  lk as (
    select l.id as link_id, l.workspace_id from links l where l.kind = 'link' and l.id in (select link_id from ${source})
  ), sb as (
    select lk.workspace_id, s."timestamp" as t, coalesce(s.country, '') as country, s.visitor
    from ${source} s join lk on lk.link_id = s.link_id
  ), sx as (
    insert into click_day_values (workspace_id, day, dim, value, detail, clicks)
    select workspace_id, day, dim, value, detail, sum(n)::int from (${dayValues}) x(workspace_id, day, dim, value, detail, n)
    group by 1, 2, 3, 4, 5 having sum(n) > 0 order by 1, 2, 3, 4, 5
    on conflict (workspace_id, day, dim, value, detail) do update set clicks = click_day_values.clicks + excluded.clicks
  ), sh as (
    insert into click_hour_countries (workspace_id, hour, country, clicks)
    select workspace_id, (t / 3600000) * 3600000, country, count(*)::int from sb group by 1, 2, 3 order by 1, 2, 3
    on conflict (workspace_id, hour, country) do update set clicks = click_hour_countries.clicks + excluded.clicks
  ), sv as (
    insert into click_visitor_days (workspace_id, day, visitor, hours)
    select workspace_id, (t / 86400000)::int, visitor, bit_or(1 << ((t / 3600000) % 24)::int) from sb where visitor is not null group by 1, 2, 3 order by 1, 2, 3
    on conflict (workspace_id, day, visitor) do update set prior_hours = click_visitor_days.hours, hours = click_visitor_days.hours | excluded.hours
    where click_visitor_days.hours | excluded.hours <> click_visitor_days.hours
    returning workspace_id, day, hours, prior_hours, xmax = 0 as added
  ), sc as (
    insert into click_visitor_countries (workspace_id, day, country, visitor, hours)
    select workspace_id, (t / 86400000)::int, country, visitor, bit_or(1 << ((t / 3600000) % 24)::int) from sb where visitor is not null group by 1, 2, 3, 4 order by 1, 2, 3, 4
    on conflict (workspace_id, day, country, visitor) do update set prior_hours = click_visitor_countries.hours, hours = click_visitor_countries.hours | excluded.hours
    where click_visitor_countries.hours | excluded.hours <> click_visitor_countries.hours
    returning workspace_id, day, country, hours, prior_hours, xmax = 0 as added
  ), sd as (
    insert into click_day_visitors (workspace_id, day, dim, value, visitors)
    select workspace_id, day, dim, value, count(*)::int from (
      select workspace_id, day, 'total' as dim, '' as value from sv where added
      union all select workspace_id, day, 'country', country from sc where added
    ) n group by 1, 2, 3, 4 order by 1, 2, 3, 4
    on conflict (workspace_id, day, dim, value) do update set visitors = click_day_visitors.visitors + excluded.visitors
  ), sf as (
    -- The row lock of the upserts above makes prior_hours the hours this write found, also beside
    -- a concurrent writer.
    insert into click_visitor_hours (workspace_id, day, dim, value, hour, firsts, lasts)
    select x.workspace_id, x.day, x.dim, x.value, e.hour, sum(e.f)::int, sum(e.l)::int from (
      select workspace_id, day, 'total' as dim, '' as value, hours, prior_hours from sv
      union all select workspace_id, day, 'country', country, hours, prior_hours from sc
    ) x cross join lateral ${hourCounts("prior_hours")}
    where e.hour is not null group by 1, 2, 3, 4, 5 having sum(e.f) <> 0 or sum(e.l) <> 0 order by 1, 2, 3, 4, 5
    on conflict (workspace_id, day, dim, value, hour) do update
      set firsts = click_visitor_hours.firsts + excluded.firsts, lasts = click_visitor_hours.lasts + excluded.lasts
  )`;

/** Retention: the summaries of the days before `horizon` (ms, a UTC day's start) go with their clicks. */
export const dropSummariesBefore = (horizon: number): string[] => {
  const day = Math.floor(horizon / 86_400_000);
  return [
    `delete from click_hour_countries where hour < ${Math.trunc(horizon)}`,
    `delete from click_visitor_days where day < ${day}`,
    `delete from click_visitor_countries where day < ${day}`,
    `delete from click_day_visitors where day < ${day}`,
    `delete from click_visitor_hours where day < ${day}`,
    `delete from click_day_values where day < ${day}`,
  ];
};
