import type { AppLoadContext } from "@remix-run/node";
import type { Actor } from "../../server/trpc/context";
import { toSignIn } from "./errors.server";

/** The signed-in browser user, or a redirect to sign-in that comes back here afterwards. */
export async function requireActor(context: AppLoadContext, request: Request): Promise<Actor> {
  const { actor } = await context.ctx.auth();
  if (!actor || actor.via !== "session") throw toSignIn(request);
  return actor;
}

export async function optionalActor(context: AppLoadContext): Promise<Actor | null> {
  const { actor } = await context.ctx.auth();
  return actor?.via === "session" ? actor : null;
}

export async function requireAdmin(context: AppLoadContext, request: Request): Promise<Actor> {
  const actor = await requireActor(context, request);
  if (!actor.isAdmin) throw new Response("Not found", { status: 404 });
  return actor;
}

/** A safe local path to go back to after sign-in (never another origin). */
export function safeRedirect(to: FormDataEntryValue | string | null | undefined, fallback = "/links"): string {
  if (typeof to !== "string" || !to.startsWith("/") || to.startsWith("//") || to.startsWith("/\\")) return fallback;
  return to;
}
