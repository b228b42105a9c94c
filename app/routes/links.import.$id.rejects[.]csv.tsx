import type { LoaderFunctionArgs } from "@remix-run/node";
import { load } from "../lib/errors.server";
import { csvText } from "../lib/imports.server";
import { messageFor } from "../lib/messages";
import { requireActor } from "../lib/session.server";

const COLUMNS = ["row", "slug", "url", "error", "reason", "new_short_url"] as const;

/**
 * An import's report as CSV, through the service's one safe CSV writer (a slug, URL or reason from
 * the file cannot break a row or run as a spreadsheet formula): each rejected row (1-based, header
 * excluded) with its slug, URL, code and what is wrong, then each row that went in under a new
 * short URL because its slug was taken.
 */
export async function loader({ context, request, params }: LoaderFunctionArgs) {
  await requireActor(context, request);
  const job = await load(request, () => context.caller.imports.get({ id: String(params.id ?? "") }));
  const rejected = job.rejects.map((r) => ({
    row: r.row,
    slug: r.slug ?? "",
    url: r.url ?? "",
    error: r.error,
    reason:
      Object.entries(r.fields ?? {})
        .map(([field, msgs]) => `${field}: ${msgs.join(", ")}`)
        .join("; ") || messageFor(r.error),
    new_short_url: "",
  }));
  const moved = job.moved.map((m) => ({
    row: m.row,
    slug: m.slug,
    url: m.url,
    error: "",
    reason: "the slug was taken: imported under a new short URL",
    new_short_url: m.short_url,
  }));
  const body = csvText(
    COLUMNS,
    [...rejected, ...moved].sort((a, b) => a.row - b.row),
  );
  return new Response(body, {
    headers: {
      "Content-Type": "text/csv; charset=utf-8",
      "Content-Disposition": `attachment; filename="import-${job.id}-report.csv"`,
      "Cache-Control": "no-store",
    },
  });
}
