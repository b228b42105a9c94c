import type { Targeting } from "../../../db/schema/links";

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ["year", 365 * 86_400_000],
  ["month", 30 * 86_400_000],
  ["week", 7 * 86_400_000],
  ["day", 86_400_000],
  ["hour", 3_600_000],
  ["minute", 60_000],
];

/**
 * "3 days ago" for `ms` as seen at `now`. `now` comes from the loader, so the server's and the
 * browser's first render agree (no hydration mismatch).
 */
export function relativeTime(ms: number, now: number): string {
  const rtf = new Intl.RelativeTimeFormat("en", { numeric: "auto" });
  const diff = ms - now;
  for (const [unit, size] of UNITS) if (Math.abs(diff) >= size) return rtf.format(Math.trunc(diff / size), unit);
  return "just now";
}

/** Which targeting rules a link has: "iOS, Android, geo (2)". */
export function targetingSummary(t: Targeting | null | undefined): string | null {
  if (!t) return null;
  const parts: string[] = [];
  if (t.ios) parts.push("iOS");
  if (t.android) parts.push("Android");
  const geo = Object.keys(t.geo ?? {}).length;
  if (geo) parts.push(`geo (${geo})`);
  return parts.length ? parts.join(", ") : null;
}
