// The analytics page's rankings: the clicks of the top values of every attribute it shows, in one
// statement. Whole UTC days of a workspace without filters come from the per-day counts the click
// storage keeps (click_day_values); the rest of the range, and any filtered selection, from the clicks.
import { and, inArray, sql, type SQL } from "drizzle-orm";
import { clicks } from "../../../db/schema";
import { dayValueRows } from "../../core/click-pipeline/summary";
import type { AppServices } from "../../core/services";
import type { Actor } from "../../trpc/context";
import { bounds, tsBetween, workspaceLinkIds } from "./analytics.service";
import { filterConditions, rowsOf } from "./breakdown";
import { TOP_DIMENSIONS, type TopDimension, type TopValuesDto, type TopValuesInput } from "./top-values.schema";

const DAY_MS = 86_400_000;

type Row = { dim: string; value: string | null; n: unknown; country: string | null; slug: string | null };

/** The top `limit` values of each attribute by clicks (most first, values in byte order on ties, none last), and the selection's clicks. */
export async function topValues(app: Pick<AppServices, "db">, actor: Actor, input: TopValuesInput): Promise<TopValuesDto> {
  const { link_id, limit, from, to, ...selection } = input;
  const { ids } = await workspaceLinkIds(app, actor, link_id);
  const filters = filterConditions(selection);
  const top = Object.fromEntries(TOP_DIMENSIONS.map((d) => [d, []])) as unknown as TopValuesDto["top"];
  const b = bounds({ from, to });
  if (!b) return { clicks: 0, top };

  // The per-day counts cover a whole workspace's short links and every click of a UTC day.
  const { whole, days, ranges } =
    link_id === undefined && !filters.length ? fromDays(b.lo, b.hi) : { whole: null, days: [], ranges: [{ lo: b.lo, hi: b.hi, sign: 1 as const }] };
  // Rows (dim, value, detail, n): the per-day counts of the days read from them, and the clicks
  // counted (or taken away) range by range: two ranges joined by `or` read every click of a link in between.
  const parts: SQL[] = [];
  if (whole && (whole.from < whole.to || days.length))
    parts.push(sql`select dim, value, detail, clicks::bigint as n from click_day_values
      where workspace_id = ${actor.workspaceId} and (day >= ${whole.from} and day < ${whole.to} or day = any(${`{${days.join(",")}}`}::int[]))`);
  if (ranges.length) {
    const read = ranges.map(
      ({ lo, hi, sign }) => sql`select ${sql.raw(String(sign))} as sign, link_id, country, city, device, platform, browser, referer, rule, trigger
        from ${clicks} where ${and(inArray(clicks.linkId, ids), tsBetween(lo, hi), ...filters)}`,
    );
    parts.push(sql`select v.dim, v.value, v.detail, sum(c.sign) as n from (${sql.join(read, sql` union all `)}) c
      cross join lateral ${sql.raw(dayValueRows("c"))} v(dim, value, detail) group by 1, 2, 3`);
  }
  const rows = await rowsOf<Row>(
    app,
    sql`with s as materialized (${sql.join(parts, sql` union all `)}),
      g as (select dim, value, sum(n) as n from s group by 1, 2 having sum(n) > 0),
      r as (select dim, value, n, row_number() over (partition by dim order by n desc, value = '', value collate "C") as rn from g),
      cities as (
        select distinct on (value) value, detail from (select value, detail, sum(n) as n from s where dim = 'city' group by 1, 2 having sum(n) > 0) x
        order by value, n desc, detail = '', detail collate "C"
      )
      select r.dim, r.value, r.n, cities.detail as country, l.slug from r
        left join cities on r.dim = 'city' and cities.value = r.value
        left join links l on r.dim = 'link' and l.id = r.value
      where r.rn <= ${limit}
      union all select 'total', null, coalesce(sum(n), 0), null, null from g where dim = 'trigger'`,
  );
  let total = 0;
  for (const r of rows.sort((x, y) => Number(y.n) - Number(x.n) || byteOrder(x.value, y.value))) {
    if (r.dim === "total") {
      total = Number(r.n);
      continue;
    }
    const key = r.value === "" ? null : r.value;
    top[r.dim as TopDimension].push({
      key,
      clicks: Number(r.n),
      ...(r.dim === "link" ? { slug: r.slug ?? r.value ?? "" } : {}),
      ...(r.dim === "city" ? { country: r.country ? r.country : null } : {}),
    });
  }
  return { clicks: total, top };
}

type Range = { lo: number; hi: number; sign: 1 | -1 };

/**
 * How [lo, hi) is counted from the per-day counts: the UTC days read from them (the whole ones
 * [from, to) and the partial `days`), and the clicks to add (sign 1) or take away (-1). A part of a
 * day is read from its clicks when it is at most half the day; a longer part is the whole day less
 * the clicks of the rest (the last day of a range that ends in the future has none to take away).
 */
export function fromDays(lo: number, hi: number): { whole: { from: number; to: number }; days: number[]; ranges: Range[] } {
  const d0 = Math.ceil(lo / DAY_MS);
  const d1 = Math.floor(hi / DAY_MS);
  const parts =
    d0 > d1
      ? [[lo, hi]]
      : [
          [lo, d0 * DAY_MS],
          [d1 * DAY_MS, hi],
        ].filter(([a, z]) => a < z);
  const days: number[] = [];
  const ranges: Range[] = [];
  for (const [a, z] of parts) {
    if (z - a <= DAY_MS / 2) {
      ranges.push({ lo: a, hi: z, sign: 1 });
      continue;
    }
    const d = Math.floor(a / DAY_MS);
    days.push(d);
    if (d * DAY_MS < a) ranges.push({ lo: d * DAY_MS, hi: a, sign: -1 });
    if (z < (d + 1) * DAY_MS) ranges.push({ lo: z, hi: (d + 1) * DAY_MS, sign: -1 });
  }
  return { whole: { from: d0, to: Math.max(d0, d1) }, days, ranges };
}

/** Byte order of UTF-8 text, '' (no value) last. */
function byteOrder(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (!a) return 1;
  if (!b) return -1;
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
