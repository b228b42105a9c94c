import { z } from "zod";
import { text } from "../../lib/input";
import { linkIdSchema } from "../links";
import { contrastRatio, QR_MIN_CONTRAST } from "../../domain/contrast";

export const QR_FORMATS = ["svg", "png"] as const;
export const QR_ECLS = ["L", "M", "Q", "H"] as const;
export const QR_SIZE_MIN = 64;
export const QR_SIZE_MAX = 2048;
export const QR_MARGIN_MAX = 16;

const COLOR_RE = /^#[0-9a-fA-F]{6}$/;
const color = text()
  .regex(COLOR_RE, "must be a colour #rrggbb")
  .transform((s) => s.toLowerCase());
const intBetween = (lo: number, hi: number) =>
  text()
    .regex(/^\d{1,5}$/, `must be an integer from ${lo} to ${hi}`)
    .transform(Number)
    .refine((n) => n >= lo && n <= hi, `must be an integer from ${lo} to ${hi}`);

export const qrInput = z
  .object({
    id: linkIdSchema,
    format: z.enum(QR_FORMATS).describe("`svg` (default, image/svg+xml) or `png` (image/png).").optional(),
    size: intBetween(QR_SIZE_MIN, QR_SIZE_MAX).describe(`Width and height in pixels, ${QR_SIZE_MIN}-${QR_SIZE_MAX} (default 512 for png).`).optional(),
    fg: color.describe("Colour of the modules, `#rrggbb` (default `#000000`).").optional(),
    bg: color.describe("Colour of the background, `#rrggbb` (default `#ffffff`).").optional(),
    margin: intBetween(0, QR_MARGIN_MAX).describe(`Quiet zone around the code in modules, 0-${QR_MARGIN_MAX} (default 2).`).optional(),
    ecl: z.enum(QR_ECLS).describe("Error correction level: `L`, `M` (default), `Q` or `H`.").optional(),
  })
  .strict()
  .superRefine((v, ctx) => {
    const ratio = contrastRatio(v.fg ?? "#000000", v.bg ?? "#ffffff");
    if (ratio < QR_MIN_CONTRAST)
      ctx.addIssue({
        code: "custom",
        path: ["fg"],
        message: `must contrast with the background by a ratio of at least ${QR_MIN_CONTRAST} (this pair: ${ratio.toFixed(2)})`,
      });
  });
export type QrInput = z.output<typeof qrInput>;

export const qrOutput = z.object({
  content_type: z.enum(["image/svg+xml", "image/png"]),
  /** The image's bytes in base64; REST answers the bytes themselves. */
  base64: z.string(),
  /** A name for a download, `qr-<slug>.<format>`. */
  filename: z.string(),
});
export type QrDto = z.infer<typeof qrOutput>;
