import { Readable } from "node:stream";
import type { LoaderFunctionArgs } from "@remix-run/node";
import { exportLinksCsv } from "../lib/imports.server";
import { requireActor } from "../lib/session.server";

/**
 * Every link of the workspace as CSV (extensions §3): `id, slug, short_url, url, tags, created_at,
 * expires_at, clicks, og_title, og_description`, streamed a page of links at a time, so it imports
 * back unchanged (Links → Import).
 */
export async function loader({ context, request }: LoaderFunctionArgs) {
  const actor = await requireActor(context, request);
  const csv = exportLinksCsv(context.app.db, context.app.config, actor.workspaceId);
  const name = `links-${new Date().toISOString().slice(0, 10)}.csv`;
  return new Response(Readable.toWeb(csv) as ReadableStream<Uint8Array>, {
    headers: { "Content-Type": "text/csv; charset=utf-8", "Content-Disposition": `attachment; filename="${name}"`, "Cache-Control": "no-store" },
  });
}
