// The analytics page's numbers: totals and series from the breakdown procedure (the API's
// GET /analytics/breakdown), the cards from the rankings procedure (analytics.top), which counts
// clicks as the breakdowns do (a test compares them).
import type { AppLoadContext } from "@remix-run/node";
import { dayIn, type FilterKey } from "../../lib/analytics-view";

type Caller = AppLoadContext["caller"];
type BreakdownArgs = Parameters<Caller["analytics"]["breakdown"]>[0];
type TopArgs = Parameters<Caller["analytics"]["top"]>[0];
type Top = Awaited<ReturnType<Caller["analytics"]["top"]>>;

/** Hourly series are drawn for at most this many days. */
export const MAX_HOURLY_DAYS = 31;
/** Rows per breakdown card. */
export const TOP = 10;
const DAY_MS = 86_400_000;

/** The page's filter names (in its URL) → the breakdown's dimension names. */
const DIMENSION: Record<Exclude<FilterKey, "link">, Exclude<BreakdownArgs["by"], "day" | "hour">> = {
  referrer: "referrer_domain",
  country: "country",
  city: "city",
  device: "device",
  browser: "browser",
  platform: "os",
  rule: "rule",
  trigger: "trigger",
};
const CARDS: FilterKey[] = ["link", "referrer", "country", "city", "device", "browser", "platform", "rule", "trigger"];
/** Each card's ranking in analytics.top. */
const TOP_OF: Record<FilterKey, keyof Top["top"]> = { link: "link", ...DIMENSION } as Record<FilterKey, keyof Top["top"]>;

const UNKNOWN: Record<FilterKey, string> = {
  link: "Unknown",
  referrer: "Direct / none",
  country: "Unknown",
  city: "Unknown",
  device: "Unknown",
  browser: "Unknown",
  platform: "Unknown",
  rule: "url",
  trigger: "link",
};
/** How the trigger values read: a click through the link itself, or a scan of its QR code. */
const TRIGGER_LABEL: Record<string, string> = { link: "Link", qr: "QR code" };

export type BreakdownRow = { value: string | null; label: string; clicks: number };
export type Overview = {
  tz: string;
  interval: "hour" | "day";
  from_day: string;
  to_day: string;
  from: number;
  to: number;
  total: number;
  visitors: number;
  previous: { from_day: string; to_day: string; from: number; to: number; total: number } | null;
  change: number | null;
  series: { bucket: string; clicks: number; previous: number | null }[];
  breakdowns: Record<FilterKey, BreakdownRow[]>;
};

const addDays = (day: string, n: number) => new Date(Date.parse(day) + n * DAY_MS).toISOString().slice(0, 10);
const daysBetween = (from: string, to: string) => Math.round((Date.parse(to) - Date.parse(from)) / DAY_MS);

/** ms offset of `tz` from UTC at the instant `ms`. */
function offsetAt(ms: number, tz: string): number {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: tz,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  }).formatToParts(ms);
  const n = (t: string) => Number(parts.find((p) => p.type === t)?.value);
  return Date.UTC(n("year"), n("month") - 1, n("day"), n("hour"), n("minute"), n("second")) - Math.floor(ms / 1000) * 1000;
}

/** The instant a local day starts in `tz` (twice corrected: the offset may change on that very day). */
export function dayStart(day: string, tz: string): number {
  const wall = Date.parse(`${day}T00:00:00Z`);
  let t = wall - offsetAt(wall, tz);
  t = wall - offsetAt(t, tz);
  return t;
}

/** A bucket's label in `tz`: "YYYY-MM-DD" or "YYYY-MM-DD HH:00". */
function bucketLabel(ms: number, tz: string, interval: "hour" | "day"): string {
  const day = dayIn(ms, tz);
  if (interval === "day") return day;
  const hour = new Intl.DateTimeFormat("en-US", { timeZone: tz, hourCycle: "h23", hour: "2-digit" }).format(ms);
  return `${day} ${hour}:00`;
}

export type OverviewInput = {
  tz: string;
  /** First and last day in `tz`, inclusive; without `from`, from the first click. */
  from?: string;
  to?: string;
  interval?: "hour" | "day";
  linkId?: string;
  /** The page's filters by their URL names. */
  filters: Partial<Record<Exclude<FilterKey, "link">, string>>;
};

/** A field of the page's form whose value the numbers could not use, and why. */
export class OverviewFieldError extends Error {
  constructor(
    readonly field: "from" | "to" | "interval",
    message: string,
  ) {
    super(message);
  }
}

/**
 * Totals, the series with the previous period of as many days, and the top values of each
 * dimension, all of the clicks every filter selects (cross-filtering), from breakdown calls.
 */
export async function overview(caller: Caller, input: OverviewInput, now = Date.now()): Promise<Overview> {
  const { tz } = input;
  const selection: Partial<BreakdownArgs> = { tz, ...(input.linkId ? { link_id: input.linkId } : {}) };
  for (const [k, v] of Object.entries(input.filters) as [Exclude<FilterKey, "link">, string][]) {
    if (v !== undefined) (selection as Record<string, string>)[DIMENSION[k]] = v;
  }
  const call = (by: BreakdownArgs["by"], from: number, to: number, extra: Partial<BreakdownArgs> = {}) =>
    caller.analytics.breakdown({ ...selection, ...extra, by, from: String(from), to: String(to) } as BreakdownArgs);

  let toDay = input.to ?? dayIn(now, tz);
  let fromDay = input.from;
  if (!fromDay) {
    // All time: from the day of the first click the filters select.
    const all = await caller.analytics.breakdown({ ...selection, by: "day", to: String(dayStart(addDays(toDay, 1), tz) - 1) } as BreakdownArgs);
    fromDay = all.rows.length ? dayIn(all.rows[0].key as number, tz) : toDay;
  }
  if (fromDay > toDay) toDay = fromDay;
  const days = daysBetween(fromDay, toDay) + 1;
  const interval = input.interval ?? (days <= 2 ? "hour" : "day");
  if (interval === "hour" && days > MAX_HOURLY_DAYS) throw new OverviewFieldError("interval", `hourly series cover at most ${MAX_HOURLY_DAYS} days`);

  const lo = dayStart(fromDay, tz);
  const hi = dayStart(addDays(toDay, 1), tz) - 1;
  const prevDays = input.from ? ([addDays(fromDay, -days), addDays(fromDay, -1)] as const) : null;
  const prev = prevDays ? { lo: dayStart(prevDays[0], tz), hi: dayStart(addDays(prevDays[1], 1), tz) - 1 } : null;

  const [series, previous, cards] = await Promise.all([
    call(interval, lo, hi),
    prev ? call(interval, prev.lo, prev.hi) : Promise.resolve(null),
    caller.analytics.top({ ...topSelection(selection), from: String(lo), to: String(hi), limit: TOP } as TopArgs),
  ]);
  const total = series.total.clicks;
  const prevTotal = previous?.total.clicks ?? null;
  return {
    tz,
    interval,
    from_day: fromDay,
    to_day: toDay,
    from: lo,
    to: hi,
    total,
    visitors: series.total.visitors,
    previous: prev && prevDays ? { from_day: prevDays[0], to_day: prevDays[1], from: prev.lo, to: prev.hi, total: prevTotal ?? 0 } : null,
    change: prevTotal ? Math.round(((total - prevTotal) / prevTotal) * 1000) / 10 : null,
    // The previous period aligned point by point (a DST day may give it one bucket more or less).
    series: series.rows.map((r, i) => ({
      bucket: bucketLabel(r.key as number, tz, interval),
      clicks: r.clicks,
      previous: previous ? (previous.rows[i]?.clicks ?? 0) : null,
    })),
    breakdowns: Object.fromEntries(
      CARDS.map((k) => [
        k,
        cards.top[TOP_OF[k]].map((r) => {
          const value = r.key;
          const label =
            value === null
              ? UNKNOWN[k]
              : k === "trigger"
                ? (TRIGGER_LABEL[value] ?? value)
                : k === "link"
                  ? (r.slug ?? value)
                  : k === "city" && r.country
                    ? `${value}, ${r.country}`
                    : value;
          return { value, label, clicks: r.clicks };
        }),
      ]),
    ) as Record<FilterKey, BreakdownRow[]>,
  };
}

/** The selection of the breakdown calls as the rankings take it (no time zone: their range is in ms). */
function topSelection(selection: Partial<BreakdownArgs>): Partial<TopArgs> {
  const { tz: _tz, ...rest } = selection;
  return rest as Partial<TopArgs>;
}

/** Clicks and unique visitors per UTC day of the view's link and time, days without clicks left out (no breakdown filter). */
export async function dailyVisitors(caller: Caller, linkId: string | undefined, from: number, to: number) {
  const r = await caller.analytics.breakdown({ by: "day", tz: "UTC", from: String(from), to: String(to), ...(linkId ? { link_id: linkId } : {}) });
  return r.rows.filter((x) => x.clicks > 0).map((x) => ({ day: new Date(x.key as number).toISOString().slice(0, 10), clicks: x.clicks, visitors: x.visitors }));
}
