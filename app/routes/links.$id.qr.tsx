import type { LoaderFunctionArgs } from "@remix-run/node";
import QRCode from "qrcode";
import { load } from "../lib/errors.server";
import { requireActor } from "../lib/session.server";

/** QR code of a link's short URL, as SVG or PNG (`?format=`), optionally as a download. */
export async function loader({ context, request, params }: LoaderFunctionArgs) {
  await requireActor(context, request);
  const link = await load(request, () => context.caller.link.get({ id: params.id ?? "" }));
  const sp = new URL(request.url).searchParams;
  const format = sp.get("format") === "png" ? "png" : "svg";
  const opts = { errorCorrectionLevel: "M" as const, margin: 2 };
  const headers: Record<string, string> = { "Cache-Control": "private, max-age=300" };
  if (sp.get("download")) headers["Content-Disposition"] = `attachment; filename="qr-${link.slug}.${format}"`;
  if (format === "png") {
    const png = await QRCode.toBuffer(link.short_url, { ...opts, type: "png", width: 512 });
    return new Response(new Uint8Array(png), { headers: { ...headers, "Content-Type": "image/png" } });
  }
  const svg = await QRCode.toString(link.short_url, { ...opts, type: "svg" });
  return new Response(svg, { headers: { ...headers, "Content-Type": "image/svg+xml" } });
}
