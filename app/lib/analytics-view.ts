/** The analytics page's state, all of it in the URL query string (shareable, works without JavaScript). */

/** A filter value for "unknown / none" (server/routers/analytics/breakdown.schema.ts). */
export const NONE = "(none)";

export const FILTERS = [
  ["link", "Link"],
  ["referrer", "Referrer"],
  ["country", "Country"],
  ["city", "City"],
  ["device", "Device"],
  ["browser", "Browser"],
  ["platform", "System"],
  ["rule", "Targeting rule"],
  ["trigger", "Visited through"],
] as const;
export type FilterKey = (typeof FILTERS)[number][0];

export const RANGES = [
  ["today", "Today", 1],
  ["7d", "Last 7 days", 7],
  ["30d", "Last 30 days", 30],
  ["90d", "Last 90 days", 90],
  ["all", "All time", 0],
] as const;

const DAY_RE = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;
const addDays = (day: string, n: number) => new Date(Date.parse(day) + n * DAY_MS).toISOString().slice(0, 10);

/** True when the runtime knows the zone (a cookie could say anything). */
export function knownZone(tz: string | null | undefined): tz is string {
  if (!tz || tz.length > 64) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

export const dayIn = (ms: number, tz: string) =>
  new Intl.DateTimeFormat("en-CA", { timeZone: tz, year: "numeric", month: "2-digit", day: "2-digit" }).format(ms);

/** The days of the view: a preset counted back from today in `tz`, or explicit days (`from`/`to`). */
export function viewRange(sp: URLSearchParams, tz: string, now = Date.now()) {
  const from = sp.get("from") ?? "";
  const to = sp.get("to") ?? "";
  if (from || to) return { preset: "custom", from: from || undefined, to: to || undefined };
  const preset = RANGES.find((r) => r[0] === sp.get("range")) ?? RANGES[2];
  if (preset[2] === 0) return { preset: preset[0], from: undefined, to: undefined };
  const today = dayIn(now, tz);
  return { preset: preset[0], from: addDays(today, 1 - preset[2]), to: today };
}

/** The current query with `key` set (or removed when `value` is null); `from`/`to` kept, page-only keys dropped. */
export function withParam(sp: URLSearchParams, key: string, value: string | null): string {
  const next = new URLSearchParams(sp);
  if (value === null) next.delete(key);
  else next.set(key, value);
  const s = next.toString();
  return s ? `?${s}` : "?";
}

export const isDay = (s: string | undefined) => !s || DAY_RE.test(s);
