import { createRequestHandler, type ServerBuild } from "@remix-run/node";
import { PAGE_FRESH_UNTIL_HEADER } from "../../app/lib/page-freshness";
import { base } from "../config";
import { LruCache } from "../lib/lru";
import { loadRemixBuild, remixContext } from "./remix";
import type { AppServices } from "../core/services";
import type { CachedLink } from "../core/lookup";
import type { LinktreePageHandler } from "../redirect/adapter";
import { wantsHtml } from "../lib/accept";
import { NOT_FOUND, sendError } from "../redirect/respond";

/** The Remix resource route that renders the page by its link record's id: app/routes/[_]linktree-page.$linkId.tsx. */
export const LINKTREE_PAGE_ROUTE = "/_linktree-page";

/** Load-context member that tells the route it was reached from the redirect host. */
export type LinktreePageContext = { linktreePage: true };

/** Response headers not to copy: the body is re-sent whole, so Express sets its own length; the freshness header is ours. */
const SKIP_HEADERS = new Set(["content-length", "transfer-encoding", "content-encoding", "connection", PAGE_FRESH_UNTIL_HEADER]);

/**
 * Rendered pages kept per process. A 50-item page is about 11 KB, so this bounds the cache near
 * 11 MB for such pages; a page pushed out is rendered again on its next visit.
 */
export const PAGE_CACHE_SIZE = 1_000;

/** A rendered answer of the route, the same for every visitor. */
export type RenderedPage = {
  status: number;
  headers: [string, string][];
  /** The body, encoded once: each visit writes these bytes as they are. */
  body: Buffer;
  /** The link cache's snapshot of the page's record this was rendered for: the copy holds while the cache still has it. */
  link: CachedLink;
  /** When a scheduled item appears or goes (ms); Infinity when none will. */
  until: number;
};

/**
 * The public page of a linktree on the redirect host or its branded domain. The adapter hands over
 * requests for slugs whose link record (found in the visited domain's namespace) is a linktree's
 * own; the route is given that record's id, so a slug taken on several domains cannot mix up their
 * pages. The page itself is rendered by a Remix route
 * through the same `linktree.publicPage` procedure as everything else, so no rule lives here.
 * A view is counted only when the published page is served (200).
 *
 * Rendering costs milliseconds of CPU, so the rendered answer is kept, keyed by the record's id and
 * tied to the link cache's snapshot of that record: every write to the linktree, its items or its
 * domain drops that snapshot here and on every other instance (the link store's invalidation), and
 * the page is rendered afresh for the new one. The snapshot's own expiry re-renders at least that
 * often, and a page with scheduled items is dropped at the next window edge. The page holds nothing
 * per visitor (no nonce: its one inline style is allowed by its hash), so one copy serves everyone.
 */
export async function createLinktreePageHandler(
  app: AppServices,
  build?: ServerBuild,
  pages = new LruCache<RenderedPage>(PAGE_CACHE_SIZE),
): Promise<LinktreePageHandler> {
  const handle = createRequestHandler(build ?? (await loadRemixBuild()), "production");
  const redirectBase = base(app.config.redirectUrl);
  /** Renders under way, so a burst of visits after a change renders the page once. */
  const rendering = new Map<string, { link: CachedLink; page: Promise<RenderedPage> }>();

  async function render(req: Parameters<LinktreePageHandler>[0], res: Parameters<LinktreePageHandler>[1], link: CachedLink): Promise<RenderedPage> {
    // Always GET and without the visitor's headers: the page is the same for every visitor.
    const request = new Request(`${redirectBase}${LINKTREE_PAGE_ROUTE}/${encodeURIComponent(link.id)}`, { method: "GET" });
    const context: LinktreePageContext & ReturnType<typeof remixContext> = { ...remixContext(app, req, res), linktreePage: true };
    const response = await handle(request, context as never);
    // A failure inside the route (database away): the adapter's catch answers 503.
    if (response.status >= 500) throw new Error(`linktree page render failed with ${response.status}`);
    const body = Buffer.from(await response.text());
    const headers: [string, string][] = [];
    response.headers.forEach((value, name) => {
      if (!SKIP_HEADERS.has(name)) headers.push([name, value]);
    });
    const freshUntil = response.headers.get(PAGE_FRESH_UNTIL_HEADER);
    return { status: response.status, headers, body, link, until: freshUntil === null ? Infinity : Number(freshUntil) };
  }

  async function renderAndKeep(req: Parameters<LinktreePageHandler>[0], res: Parameters<LinktreePageHandler>[1], link: CachedLink): Promise<RenderedPage> {
    const page = await render(req, res, link);
    // Kept even if the record changed meanwhile: the next visit brings the new snapshot, which this copy does not match.
    pages.set(link.id, page);
    return page;
  }

  /** The kept page for this snapshot of the record, or a new rendering (shared with visits arriving meanwhile). */
  function pageFor(req: Parameters<LinktreePageHandler>[0], res: Parameters<LinktreePageHandler>[1], link: CachedLink): RenderedPage | Promise<RenderedPage> {
    const kept = pages.get(link.id);
    if (kept && kept.link === link && Date.now() < kept.until) return kept;
    const pending = rendering.get(link.id);
    if (pending && pending.link === link) return pending.page;
    const page = renderAndKeep(req, res, link);
    const entry = { link, page };
    rendering.set(link.id, entry);
    const done = () => {
      if (rendering.get(link.id) === entry) rendering.delete(link.id);
    };
    page.then(done, done);
    return page;
  }

  return async (req, res, link, countView) => {
    const found = pageFor(req, res, link);
    let page = found instanceof Promise ? await found : found;
    // A rendering joined just before a scheduled item's edge is already out of date after it.
    if (Date.now() >= page.until) page = await renderAndKeep(req, res, link);
    // An unpublished page: the readable page for a browser, the service's 404 body for any other client.
    if (page.status === 404 && !wantsHtml(req)) return sendError(req, res, 404, NOT_FOUND, () => "");
    res.statusCode = page.status;
    for (const [name, value] of page.headers) res.setHeader(name, value);
    res.setHeader("Content-Length", page.body.length);
    // Written as they are: Express's send would hash the body for an ETag on every visit, and no-store pages are never revalidated.
    const send = () => void (req.method === "HEAD" ? res.end() : res.end(page.body));
    if (page.status === 200) countView(send);
    else send();
  };
}
