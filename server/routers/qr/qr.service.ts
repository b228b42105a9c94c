import QRCode from "qrcode";
import { notFound } from "../../domain/errors";
import type { AppServices } from "../../core/services";
import type { Actor } from "../../trpc/context";
import { findOwnLink, linkDtos } from "../links";
import type { QrDto, QrInput } from "./qr.schema";

export const QR_DEFAULT_PNG_SIZE = 512;

/** The URL a link's QR code carries: its short URL marked `qr=1`, so visits through the code are told apart. */
export function qrTarget(shortUrl: string): string {
  return `${shortUrl}${shortUrl.includes("?") ? "&" : "?"}qr=1`;
}

/** The QR code of a live link of the caller's workspace, as SVG or PNG bytes. A deleted link has no code: its slug is free. */
export async function qrCode(app: Pick<AppServices, "config" | "db">, actor: Actor, input: QrInput): Promise<QrDto> {
  const row = await findOwnLink(app.db, actor, input.id);
  if (row.deletedAt !== null) throw notFound();
  const [link] = await linkDtos(app.db, app.config, [row]);
  const format = input.format ?? "svg";
  const opts = {
    errorCorrectionLevel: input.ecl ?? "M",
    margin: input.margin ?? 2,
    color: { dark: `${input.fg ?? "#000000"}ff`, light: `${input.bg ?? "#ffffff"}ff` },
  };
  const text = qrTarget(link.short_url);
  const filename = `qr-${link.slug}.${format}`;
  if (format === "png") {
    const png = await QRCode.toBuffer(text, { ...opts, type: "png", width: input.size ?? QR_DEFAULT_PNG_SIZE });
    return { content_type: "image/png", base64: png.toString("base64"), filename };
  }
  const svg = await QRCode.toString(text, { ...opts, type: "svg", ...(input.size !== undefined ? { width: input.size } : {}) });
  return { content_type: "image/svg+xml", base64: Buffer.from(svg, "utf8").toString("base64"), filename };
}
