/** Date ranges of the analytics pages: presets or explicit days (UTC, both inclusive). */
export const PRESETS = [
  ["7d", "Last 7 days", 7],
  ["30d", "Last 30 days", 30],
  ["90d", "Last 90 days", 90],
  ["all", "All time", 0],
] as const;

export type Range = { preset: string; from: number | null; to: number | null; fromDay: string; toDay: string };

const DAY = 86_400_000;
const dayStart = (ms: number) => Math.floor(ms / DAY) * DAY;
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The analytics routers' query for a link (or the whole workspace) and a range. */
export function rangeQuery(linkId: string | null, range: Pick<Range, "from" | "to">) {
  return {
    ...(linkId ? { link_id: linkId } : {}),
    ...(range.from !== null ? { from: String(range.from) } : {}),
    ...(range.to !== null ? { to: String(range.to) } : {}),
  };
}

export function parseRange(sp: URLSearchParams, now = Date.now()): Range {
  const fromDay = sp.get("from") ?? "";
  const toDay = sp.get("to") ?? "";
  const valid = (d: string) => /^\d{4}-\d{2}-\d{2}$/.test(d) && !Number.isNaN(Date.parse(d));
  if (valid(fromDay) || valid(toDay)) {
    const from = valid(fromDay) ? Date.parse(fromDay) : null;
    const to = valid(toDay) ? Date.parse(toDay) + DAY - 1 : null;
    return { preset: "custom", from, to, fromDay: valid(fromDay) ? fromDay : "", toDay: valid(toDay) ? toDay : "" };
  }
  const preset = PRESETS.find((p) => p[0] === sp.get("range")) ?? PRESETS[1];
  if (preset[2] === 0) return { preset: preset[0], from: null, to: null, fromDay: "", toDay: "" };
  const from = dayStart(now) - (preset[2] - 1) * DAY;
  return { preset: preset[0], from, to: null, fromDay: iso(from), toDay: iso(now) };
}
