import type { AppLoadContext } from "@remix-run/node";
import type { Actor } from "../../server/trpc/context";
import { toSignIn } from "./errors.server";

/** The signed-in browser user, or a redirect to sign-in that comes back here afterwards. */
export async function requireActor(context: AppLoadContext, request: Request): Promise<Actor> {
  const { actor } = await context.auth();
  if (!actor || actor.via !== "session") throw toSignIn(request);
  return actor;
}

export async function optionalActor(context: AppLoadContext): Promise<Actor | null> {
  const { actor } = await context.auth();
  return actor?.via === "session" ? actor : null;
}

export async function requireAdmin(context: AppLoadContext, request: Request): Promise<Actor> {
  const actor = await requireActor(context, request);
  if (!actor.isAdmin) throw new Response("Not found", { status: 404 });
  return actor;
}

const SELF = "http://app.invalid";

/**
 * A safe local path to go back to after sign-in (never another origin). Browsers drop tabs and
 * newlines anywhere in a URL and read a backslash in the path as "/", so "/\t/evil.com" is
 * "//evil.com" to them: judge the string as a browser reads it, resolve it against our origin with
 * the same URL parser, and answer the normalised path.
 */
export function safeRedirect(to: FormDataEntryValue | string | null | undefined, fallback = "/links"): string {
  if (typeof to !== "string") return fallback;
  // Other control characters have no business in a path either.
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(to)) return fallback;
  const seen = to.replace(/[\t\n\r]/g, "");
  if (seen[0] !== "/" || seen[1] === "/" || seen[1] === "\\") return fallback;
  let url: URL;
  try {
    url = new URL(seen, SELF);
  } catch {
    return fallback;
  }
  const out = url.pathname + url.search + url.hash;
  // Dot segments can collapse to "//host" ("/.//evil.com"), which would leave as a scheme-relative URL.
  if (url.origin !== SELF || !out.startsWith("/") || out.startsWith("//")) return fallback;
  return out;
}
