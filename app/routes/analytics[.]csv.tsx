import type { LoaderFunctionArgs } from "@remix-run/node";
import { csvText } from "../../server/lib/csv";
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
  // The service's one CSV writer: a referer or browser name cannot break a row or run as a formula.
  const body = csvText(
    COLUMNS,
    clicks.map((c) => ({ ...c, timestamp_iso: new Date(c.timestamp).toISOString() })),
  );
  const name = `clicks-${linkId ?? "workspace"}-${new Date().toISOString().slice(0, 10)}.csv`;
  return new Response(body, {
    headers: { "Content-Type": "text/csv; charset=utf-8", "Content-Disposition": `attachment; filename="${name}"`, "Cache-Control": "no-store" },
  });
}
