import { authedProcedure, contract, router } from "../../trpc/init";
import { qrInput, qrOutput } from "./qr.schema";
import { qrCode } from "./qr.service";

export const qrRouter = router({
  // REST answers the image itself (QR_BINARY_ANSWERS): the adapter writes `base64`'s bytes with `content_type`.
  get: authedProcedure
    .meta({
      scope: "links:read",
      openapi: {
        method: "GET",
        path: "/links/{id}/qr",
        tags: ["links"],
        summary: "QR code of a link",
        description:
          "The QR code of a live link's `short_url` with `?qr=1` added, so a visit through the code is a click with `trigger: qr`. " +
          "SVG (`image/svg+xml`, default) or PNG (`image/png`). A foreground and background with a contrast ratio under 3 answer 400 naming `fg`.",
        protect: true,
      },
    })
    .input(qrInput)
    .output(contract(qrOutput))
    .query(({ ctx, input }) => qrCode(ctx.app, ctx.actor, input)),
});
