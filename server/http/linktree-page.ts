import { createRequestHandler, type ServerBuild } from "@remix-run/node";
import { base } from "../config";
import { loadRemixBuild, remixContext } from "./remix";
import type { AppServices } from "../core/services";
import type { LinktreePageHandler } from "../redirect/adapter";

/** The Remix resource route that renders the page: app/routes/[_]linktree-page.$slug.tsx. */
export const LINKTREE_PAGE_ROUTE = "/_linktree-page";

/** Load-context member that tells the route it was reached from the redirect host. */
export type LinktreePageContext = { linktreePage: true };

/** Response headers not to copy: the body is re-sent whole, so Express sets its own length. */
const SKIP_HEADERS = new Set(["content-length", "transfer-encoding", "content-encoding", "connection"]);

/**
 * The public page of a linktree on the redirect host. The adapter hands over requests for
 * slugs whose link record is a linktree's own; the page itself is rendered by a Remix route
 * through the same `linktree.publicPage` procedure as everything else, so no rule lives here.
 * A view is counted only when the published page is served (200).
 */
export async function createLinktreePageHandler(app: AppServices, build?: ServerBuild): Promise<LinktreePageHandler> {
  const handle = createRequestHandler(build ?? (await loadRemixBuild()), "production");
  const redirectBase = base(app.config.redirectUrl);

  return async (req, res, link, countView) => {
    const headers = new Headers();
    for (const name of ["user-agent", "accept-language"]) {
      const v = req.headers[name];
      if (typeof v === "string") headers.set(name, v);
    }
    // Always GET: Express drops the body itself when the visitor asked with HEAD.
    const request = new Request(`${redirectBase}${LINKTREE_PAGE_ROUTE}/${encodeURIComponent(link.slug)}`, { method: "GET", headers });
    const context: LinktreePageContext & ReturnType<typeof remixContext> = { ...remixContext(app, req, res), linktreePage: true };
    const response = await handle(request, context as never);
    // A failure inside the route (database away): the adapter's catch answers 503.
    if (response.status >= 500) throw new Error(`linktree page render failed with ${response.status}`);
    const body = await response.text();
    res.status(response.status);
    response.headers.forEach((value, name) => {
      if (!SKIP_HEADERS.has(name)) res.setHeader(name, value);
    });
    const send = () => void res.send(body);
    if (response.status === 200) countView(send);
    else send();
  };
}
