import type { LoaderFunctionArgs } from "@remix-run/node";
import { stringify } from "csv-stringify/sync";
import { load } from "../lib/errors.server";
import { messageFor } from "../lib/messages";
import { requireActor } from "../lib/session.server";

/** An import's report of rejected rows as CSV: the row (1-based, header excluded), the code, and what is wrong. */
export async function loader({ context, request, params }: LoaderFunctionArgs) {
  await requireActor(context, request);
  const job = await load(request, () => context.caller.imports.get({ id: String(params.id ?? "") }));
  const rows = job.rejects.map((r) => [
    r.row,
    r.error,
    Object.entries(r.fields ?? {})
      .map(([field, msgs]) => `${field}: ${msgs.join(", ")}`)
      .join("; ") || messageFor(r.error),
  ]);
  const body = stringify([["row", "error", "reason"], ...rows], { record_delimiter: "windows" });
  return new Response(body, {
    headers: {
      "Content-Type": "text/csv; charset=utf-8",
      "Content-Disposition": `attachment; filename="import-${job.id}-rejected.csv"`,
      "Cache-Control": "no-store",
    },
  });
}
