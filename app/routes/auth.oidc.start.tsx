import type { LoaderFunctionArgs } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { safeRedirect } from "../lib/session.server";

/**
 * The sign-in page's single sign-on button: sends the browser to the identity provider, with the
 * flow's cookie (state, nonce, PKCE verifier) set on this answer. Not configured: 404.
 */
export async function loader({ context, request }: LoaderFunctionArgs) {
  const redirectTo = safeRedirect(new URL(request.url).searchParams.get("redirectTo"));
  let url: string;
  try {
    ({ url } = await context.caller.auth.oidcStart({ redirect_to: redirectTo }));
  } catch (e) {
    if ((e as { code?: string }).code === "NOT_FOUND") throw new Response("Not found", { status: 404 });
    throw redirect(`/login?sso=unavailable&redirectTo=${encodeURIComponent(redirectTo)}`);
  }
  return redirect(url);
}
