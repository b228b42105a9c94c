import type { LoaderFunctionArgs } from "@remix-run/node";
import { load } from "../lib/errors.server";
import { requireActor } from "../lib/session.server";

/** Options of the image the dashboard passes on to the QR procedure, as the REST path takes them. */
const OPTIONS = ["format", "size", "fg", "bg", "margin", "ecl"] as const;

/**
 * A link's QR code for the dashboard (preview and download), made by the same procedure as
 * `GET /links/{id}/qr`. Options as query parameters; empty ones are left to the defaults. `?download=1`
 * asks the browser to save it.
 */
export async function loader({ context, request, params }: LoaderFunctionArgs) {
  await requireActor(context, request);
  const sp = new URL(request.url).searchParams;
  const options: Partial<Record<(typeof OPTIONS)[number], string>> = {};
  for (const k of OPTIONS) {
    const v = sp.get(k);
    if (v) options[k] = v;
  }
  type QrArgs = Parameters<typeof context.caller.qr.get>[0];
  const qr = await load(request, () => context.caller.qr.get({ id: params.id ?? "", ...options } as QrArgs));
  const headers: Record<string, string> = { "Content-Type": qr.content_type, "Cache-Control": "private, max-age=300" };
  if (sp.get("download")) headers["Content-Disposition"] = `attachment; filename="${qr.filename}"`;
  return new Response(new Uint8Array(Buffer.from(qr.base64, "base64")), { headers });
}
