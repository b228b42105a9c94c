import type { LoaderFunctionArgs } from "@remix-run/node";
import { parseRange, rangeQuery } from "../lib/analytics";
import { load } from "../lib/errors.server";
import { requireActor } from "../lib/session.server";

const COLUMNS = [
  "timestamp_iso",
  "timestamp",
  "ts",
  "link_id",
  "country",
  "region",
  "region_name",
  "timezone",
  "lat",
  "lng",
  "device",
  "platform",
  "browser",
  "referer",
  "rule",
  "visitor",
] as const;

/** RFC 4180 quoting; a leading = + - @ is neutralised so spreadsheets do not run it as a formula. */
function cell(v: unknown): string {
  if (v === null || v === undefined) return "";
  let s = String(v);
  if (typeof v === "string" && /^[=+\-@\t\r]/.test(s)) s = "'" + s;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The click events of the analytics page's link and range, as CSV, with each click's visitor key (unique visitors). */
export async function loader({ context, request }: LoaderFunctionArgs) {
  await requireActor(context, request);
  const sp = new URL(request.url).searchParams;
  const linkId = sp.get("link") || null;
  // `start`/`end` (ms, inclusive): the analytics page's exact range, whose days are the viewer's; else UTC days.
  const [start, end] = [sp.get("start"), sp.get("end")];
  const query =
    start !== null || end !== null
      ? { ...(linkId ? { link_id: linkId } : {}), ...(start !== null ? { from: start } : {}), ...(end !== null ? { to: end } : {}) }
      : rangeQuery(linkId, parseRange(sp));
  const { clicks } = await load(request, () => context.caller.analytics.export(query));
  const rows = clicks.map((c) => {
    const r = { ...c, timestamp_iso: new Date(c.timestamp).toISOString() } as Record<string, unknown>;
    return COLUMNS.map((k) => cell(r[k])).join(",");
  });
  const body = [COLUMNS.join(","), ...rows].join("\r\n") + "\r\n";
  const name = `clicks-${linkId ?? "workspace"}-${new Date().toISOString().slice(0, 10)}.csv`;
  return new Response(body, {
    headers: { "Content-Type": "text/csv; charset=utf-8", "Content-Disposition": `attachment; filename="${name}"`, "Cache-Control": "no-store" },
  });
}
