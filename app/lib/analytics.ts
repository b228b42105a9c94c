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

type Click = {
  timestamp: number;
  country: string | null;
  device: string;
  platform: string | null;
  browser: string | null;
  referer: string | null;
  rule?: string | null;
};
export type Breakdown = { label: string; count: number }[];

function top(clicks: Click[], key: (c: Click) => string, n = 8): Breakdown {
  const counts = new Map<string, number>();
  for (const c of clicks) counts.set(key(c), (counts.get(key(c)) ?? 0) + 1);
  const sorted = [...counts].sort((a, b) => b[1] - a[1]);
  const head = sorted.slice(0, n).map(([label, count]) => ({ label, count }));
  const rest = sorted.slice(n).reduce((s, [, c]) => s + c, 0);
  return rest ? [...head, { label: "Other", count: rest }] : head;
}

const refererHost = (r: string | null) => {
  if (!r) return "Direct / none";
  try {
    return new URL(r).host || r;
  } catch {
    return r;
  }
};

export function summarise(clicks: Click[], range: Range, now = Date.now()) {
  const first = range.from ?? (clicks.length ? dayStart(Math.min(...clicks.map((c) => c.timestamp))) : dayStart(now));
  const last = dayStart(range.to ?? now);
  const days = new Map<string, number>();
  // Bounded: at most ~2 years of daily points in the chart.
  for (let d = Math.max(dayStart(first), last - 730 * DAY); d <= last; d += DAY) days.set(iso(d), 0);
  for (const c of clicks) {
    const k = iso(c.timestamp);
    if (days.has(k)) days.set(k, days.get(k)! + 1);
  }
  return {
    series: [...days].map(([day, clicks]) => ({ day, clicks })),
    breakdowns: {
      country: top(clicks, (c) => c.country ?? "Unknown"),
      device: top(clicks, (c) => c.device),
      platform: top(clicks, (c) => c.platform ?? "Unknown"),
      browser: top(clicks, (c) => c.browser ?? "Unknown"),
      referer: top(clicks, (c) => refererHost(c.referer)),
      rule: top(clicks, (c) => c.rule ?? "url"),
    },
  };
}
