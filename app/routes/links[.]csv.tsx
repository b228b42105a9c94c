import { Readable } from "node:stream";
import type { LoaderFunctionArgs } from "@remix-run/node";
import { exportLinksCsv } from "../lib/imports.server";
import { requireActor } from "../lib/session.server";

/**
 * Every link of the workspace as CSV: `id, slug, domain, short_url, url, title, tags, created_at,
 * expires_at, expiration_url, targeting, og_title, og_description, og_image, clicks, has_password`
 * (server/routers/imports/export.ts), streamed a page of links at a time, so it imports back
 * unchanged (Links → Import). Visit passwords cannot be exported; `has_password` says which links had one.
 */
export async function loader({ context, request }: LoaderFunctionArgs) {
  const actor = await requireActor(context, request);
  const csv = exportLinksCsv(context.app.db, context.app.config, actor.workspaceId);
  const name = `links-${new Date().toISOString().slice(0, 10)}.csv`;
  return new Response(Readable.toWeb(csv) as ReadableStream<Uint8Array>, {
    headers: { "Content-Type": "text/csv; charset=utf-8", "Content-Disposition": `attachment; filename="${name}"`, "Cache-Control": "no-store" },
  });
}
