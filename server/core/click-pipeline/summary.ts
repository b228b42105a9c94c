// The breakdown summaries (db/schema/analytics.ts), written only here and by retention. They are fed
// the clicks a statement has just stored (never a click already there), so a retried batch or a
// replayed spool counts nothing twice; the visitor tables are sets, so the visitor counts grow only
// by keys new to their day.

/**
 * Common table expressions (to follow `with` or a comma) that add the clicks of `source` to the
 * summaries. `source` has the columns `link_id`, `timestamp`, `country` and `visitor` of the clicks
 * just stored. The workspace is the link's, and linktree pages are left out, as the workspace's
 * analytics count them.
 */
export const summaryCtes = (source: string) => `
  sb as (
    select l.workspace_id, s."timestamp" as t, coalesce(s.country, '') as country, s.visitor
    from ${source} s join links l on l.id = s.link_id and l.kind = 'link'
  ), sh as (
    insert into click_hour_countries (workspace_id, hour, country, clicks)
    select workspace_id, (t / 3600000) * 3600000, country, count(*)::int from sb group by 1, 2, 3
    on conflict (workspace_id, hour, country) do update set clicks = click_hour_countries.clicks + excluded.clicks
  ), sv as (
    insert into click_visitor_days (workspace_id, day, visitor, hours)
    select workspace_id, (t / 86400000)::int, visitor, bit_or(1 << ((t / 3600000) % 24)::int) from sb where visitor is not null group by 1, 2, 3
    on conflict (workspace_id, day, visitor) do update set hours = click_visitor_days.hours | excluded.hours
    returning workspace_id, day, xmax = 0 as added
  ), sc as (
    insert into click_visitor_countries (workspace_id, day, country, visitor, hours)
    select workspace_id, (t / 86400000)::int, country, visitor, bit_or(1 << ((t / 3600000) % 24)::int) from sb where visitor is not null group by 1, 2, 3, 4
    on conflict (workspace_id, day, country, visitor) do update set hours = click_visitor_countries.hours | excluded.hours
    returning workspace_id, day, country, xmax = 0 as added
  ), sd as (
    insert into click_day_visitors (workspace_id, day, dim, value, visitors)
    select workspace_id, day, dim, value, count(*)::int from (
      select workspace_id, day, 'total' as dim, '' as value from sv where added
      union all select workspace_id, day, 'country', country from sc where added
    ) n group by 1, 2, 3, 4
    on conflict (workspace_id, day, dim, value) do update set visitors = click_day_visitors.visitors + excluded.visitors
  )`;

/** Retention: the summaries of the days before `horizon` (ms, a UTC day's start) go with their clicks. */
export const dropSummariesBefore = (horizon: number): string[] => {
  const day = Math.floor(horizon / 86_400_000);
  return [
    `delete from click_hour_countries where hour < ${Math.trunc(horizon)}`,
    `delete from click_visitor_days where day < ${day}`,
    `delete from click_visitor_countries where day < ${day}`,
    `delete from click_day_visitors where day < ${day}`,
  ];
};
