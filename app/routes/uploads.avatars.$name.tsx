import type { LoaderFunctionArgs } from "@remix-run/node";
import { AVATAR_NAME_RE, avatarPath } from "../lib/avatars.server";
import { fileResponse } from "../lib/static.server";

/** Serves stored avatars. Names are random and never reused, so they can be cached for good. */
export function loader({ context, params }: LoaderFunctionArgs) {
  const name = params.name ?? "";
  if (!AVATAR_NAME_RE.test(name)) return new Response("Not found", { status: 404 });
  return fileResponse(avatarPath(context.app.config.dataDir, name), "image/webp", "public, max-age=31536000, immutable");
}
