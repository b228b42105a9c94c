import type { LoaderFunctionArgs } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { safeRedirect } from "../lib/session.server";

/**
 * Why the sign-in page is shown again: the procedure's refusal, told apart by the provider's own
 * error answer when it sent one (the person cancelled, the provider is having trouble, or it turned
 * the request down, which is a setup problem).
 */
function reason(code: string | undefined, query: URLSearchParams): string {
  if (code === "FORBIDDEN") return "refused";
  if (code === "SERVICE_UNAVAILABLE") return "unavailable";
  const providerError = query.get("error");
  if (providerError === "access_denied") return "denied";
  if (providerError === "temporarily_unavailable" || providerError === "server_error") return "unavailable";
  return providerError ? "rejected" : "failed";
}

/**
 * Where the identity provider sends the browser back. The procedure checks state, the code exchange
 * and the ID token (nonce, verified e-mail) and sets the session cookie on this answer; a refusal goes
 * back to the sign-in page, which says why in plain words. Not configured: 404.
 */
export async function loader({ context, request }: LoaderFunctionArgs) {
  const url = new URL(request.url);
  let to: string;
  try {
    ({ redirect_to: to } = await context.caller.auth.oidcCallback({ query: url.search }));
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "NOT_FOUND") throw new Response("Not found", { status: 404 });
    throw redirect(`/login?sso=${reason(code, url.searchParams)}`);
  }
  return redirect(safeRedirect(to));
}
