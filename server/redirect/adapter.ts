import type { IncomingMessage, ServerResponse } from "node:http";
import express from "express";
import { base } from "../config";
import { composeRedirectHost, type RedirectParts, type RequestListener } from "../http/redirect-host";
import { lookupDomainByHost, lookupLinkBySlug, peekDomainByHost, peekLinkBySlug, peekLinkOnDomain, type CachedLink, type ServedDomain } from "../core/lookup";
import type { AppServices } from "../core/services";
import { hostFromHeader, hostNameOf, hostPart } from "../lib/hostnames";
import { decodeUnreserved } from "../lib/urls";
import { methodNotAllowedPage, page } from "./html";
import { mountOwnPaths, ogImageRoute } from "./own-paths";
import { submitPassword } from "./password-submit";
import { METHOD_NOT_ALLOWED, sendError, sendRedirect } from "./respond";
import { createVisits, type Visits } from "./visit";
import { NO_TRUST, readVisitor, type TrustFn } from "./visitor";

/**
 * Renders a linktree's public page for a slug whose link record is the linktree's own
 * (`kind === "linktree"`). It answers 404 while unpublished; when it serves the page it hands
 * the sending to `countView(send)`, which counts the view (not for bots or HEAD) and calls `send`
 * once the view is in the write-ahead spool, as a redirect's answer waits for its click.
 */
export type LinktreePageHandler = (req: express.Request, res: express.Response, link: CachedLink, countView: (send: () => void) => void) => Promise<void>;

const SLUG_PATH = /^\/([0-9A-Za-z-]{1,50})\/?$/;

/**
 * `/{slug}` → the lower-cased slug (slugs match whatever their case, and percent-encoded letters,
 * digits and hyphens read as themselves), or null when the path is no slug.
 */
export function slugFromPath(path: string): string | null {
  const m = SLUG_PATH.exec(decodeUnreserved(path));
  return m ? m[1].toLowerCase() : null;
}

type RedirectOptions = { linktreePage?: LinktreePageHandler };

/** What the fast path and the Express routes share. */
type HostContext = {
  app: AppServices;
  trust: TrustFn;
  /** The default redirect domain's origin (a short link's og:url there). */
  redirectBase: string;
  visits: Visits;
  /** The default redirect domain's `Host`, lower-cased. */
  defaultHost: string;
  brandedHost: (host: string | undefined) => string | null | undefined;
};

/**
 * The redirect host (REDIRECT_URL), and every verified branded domain by the request's `Host`.
 * Paths under `/_` are the service's own, never a slug, on every host.
 */
export function createRedirectApp(app: AppServices, opts: RedirectOptions = {}): RequestListener {
  return composeRedirectHost(createRedirectParts(app, opts));
}

/** The redirect host's fast path and its Express routes, for composeRedirectHost. */
export function createRedirectParts(app: AppServices, opts: RedirectOptions = {}): RedirectParts {
  const { config } = app;
  const r = express();
  r.disable("x-powered-by");
  r.disable("etag");
  r.set("trust proxy", config.trustProxy);
  const redirectBase = base(config.redirectUrl);
  const ctx: HostContext = {
    app,
    trust: config.trustProxy === false ? NO_TRUST : (r.get("trust proxy fn") as TrustFn),
    redirectBase,
    visits: createVisits(app, redirectBase),
    defaultHost: config.redirectUrl.host.toLowerCase(),
    brandedHost: brandedHostReader(config.redirectUrl),
  };
  const routes: RequestListener = (req, res) => r(req as express.Request, res as express.Response);
  const fastPath = createFastPath(ctx, routes, Boolean(opts.linktreePage));
  mountOwnPaths(r, app, ctx.visits);
  mountRoutes(r, ctx, opts);
  return { fastPath, routes };
}

/**
 * Which domain a `Host` header names: undefined for the default redirect domain (also when the
 * header is absent, or differs only in case, port or a trailing dot), else the host name of a
 * possible branded domain, or null when it cannot be one (an IP address, no dots…).
 */
function brandedHostReader(redirectUrl: URL): HostContext["brandedHost"] {
  const defaultHost = redirectUrl.host.toLowerCase();
  const defaultHostName = hostNameOf(redirectUrl);
  const hostNames = new Map<string, string | null | undefined>();
  return (host) => {
    if (host === undefined || host === defaultHost) return undefined;
    let name = hostNames.get(host);
    if (name === undefined && !hostNames.has(host)) {
      name = hostPart(host) === defaultHostName ? undefined : hostFromHeader(host);
      // Pure and per header value: memoised (bounded), so a branded visit does not re-parse its Host.
      if (hostNames.size >= 1_000) hostNames.clear();
      hostNames.set(host, name);
    }
    return name;
  };
}

/**
 * The fast path: GET/HEAD /{slug} and the share card's image are answered before Express sets
 * anything up; false for everything else (the other `/_` paths, the password POST), which goes to
 * the Express routes, as does a linktree's slug (`toRoutes`).
 */
function createFastPath(ctx: HostContext, toRoutes: RequestListener, linktrees: boolean): RedirectParts["fastPath"] {
  const { defaultHost, brandedHost, visits } = ctx;
  const { serveSlug, serveBranded } = slugServers(ctx, linktrees);
  const ogImage = ogImageRoute(ctx.app, visits, ctx.trust);
  return (req, res) => {
    if (req.method !== "GET" && req.method !== "HEAD") return false;
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q < 0 ? url : url.slice(0, q);
    if (path.startsWith("/_/og/")) return (void ogImage(req, res, path), true);
    const host = req.headers.host;
    if (host !== undefined && host !== defaultHost && !path.startsWith("/_")) {
      const branded = brandedHost(host);
      if (branded !== undefined) return (void serveBranded(req, res, branded, path, () => toRoutes(req, res)), true);
    }
    if (path.startsWith("/_") || path === "/") return false;
    const slug = slugFromPath(path);
    if (slug === null) visits.notFound(req, res);
    else void serveSlug(req, res, slug, () => toRoutes(req, res));
    return true;
  };
}

/** Visits to a slug, on the default redirect domain and on a branded one. */
function slugServers(ctx: HostContext, linktrees: boolean) {
  const { app, visits, redirectBase } = ctx;
  const answer = visits.answer.bind(visits);
  const notFound = visits.notFound.bind(visits);
  const unavailable = visits.unavailable.bind(visits);

  /**
   * Answers a visit to a live link: synchronously, unless the answer depends on the visitor's
   * country or A/B variant (then the returned promise settles after their look-ups). `shortBase` is the short
   * link's own origin (the share card's og:url).
   */
  function respond(req: IncomingMessage, res: ServerResponse, link: CachedLink, now: number, shortBase: string): Promise<void> | undefined {
    const v = readVisitor(req, app.config, ctx.trust);
    const d = visits.decideVisit(link, v, now);
    if (d instanceof Promise) return d.then((decided) => answer(req, res, link, v, decided, shortBase));
    answer(req, res, link, v, d, shortBase);
  }

  /**
   * GET/HEAD /{slug} on the default redirect domain. A cache hit runs to the answer synchronously
   * (this async function awaits nothing then); only a cache miss or a geo-targeted link waits for I/O.
   */
  async function serveSlug(req: IncomingMessage, res: ServerResponse, slug: string, next: () => void): Promise<void> {
    try {
      const now = Date.now();
      let link = peekLinkBySlug(app, slug, now);
      if (link === undefined) link = await lookupLinkBySlug(app, slug);
      if (!link) return notFound(req, res);
      if (link.kind === "linktree") return linktrees ? next() : notFound(req, res);
      const geo = respond(req, res, link, now, redirectBase);
      if (geo) await geo;
    } catch (e) {
      unavailable(req, res, e);
    }
  }

  /** The answer to an unknown slug (and `/`) on a branded domain: its not-found URL, else 404. */
  const domainNotFound = (req: IncomingMessage, res: ServerResponse, domain: ServedDomain) => {
    if (!domain.notFoundUrl) return notFound(req, res);
    sendRedirect(res, 302, domain.notFoundUrl);
    visits.outcome("not_found");
  };

  /**
   * GET/HEAD on a branded domain: `/{slug}` in that domain's namespace only, every rule as on the
   * default domain. As fast: a domain and link in the cache are answered without awaiting.
   */
  async function serveBranded(req: IncomingMessage, res: ServerResponse, host: string | null, path: string, next: () => void): Promise<void> {
    try {
      if (host === null) return notFound(req, res);
      const now = Date.now();
      // From the cache without awaiting when it is there.
      const hit = peekDomainByHost(app, host, now);
      const domain = hit === undefined ? await lookupDomainByHost(app, host) : hit;
      if (!domain) return notFound(req, res);
      const slug = path === "/" ? null : slugFromPath(path);
      if (slug === null) return domainNotFound(req, res, domain);
      let link = peekLinkOnDomain(app, domain, slug, now);
      if (link === undefined) link = await lookupLinkBySlug(app, slug, domain);
      // A linktree page may live on a branded domain (the Express route renders it); its items stay on the default one.
      if (link?.kind === "linktree" && linktrees) return next();
      if (!link || link.kind !== "link") return domainNotFound(req, res, domain);
      const geo = respond(req, res, link, now, domain.base);
      if (geo) await geo;
    } catch (e) {
      unavailable(req, res, e);
    }
  }

  return { serveSlug, serveBranded };
}

/** The Express routes: the password form's post, linktree pages, 404 for the rest, and plain error pages. */
function mountRoutes(r: express.Express, ctx: HostContext, opts: RedirectOptions) {
  const { app, visits } = ctx;
  const notFound = visits.notFound.bind(visits);
  const unavailable = visits.unavailable.bind(visits);

  // The password form's submission.
  r.post("/:slug", express.urlencoded({ extended: false, limit: "8kb", parameterLimit: 20 }), async (req, res) => {
    const slug = slugFromPath(req.path);
    if (slug === null) return notFound(req, res);
    try {
      // On a branded domain, that domain's namespace (its own links only: no linktrees there).
      const host = ctx.brandedHost(req.headers.host);
      const domain = host === undefined ? undefined : host === null ? null : await lookupDomainByHost(app, host);
      if (domain === null) return notFound(req, res);
      const link = await lookupLinkBySlug(app, slug, domain);
      if (!link || link.kind === "linktree" || (domain && link.kind !== "link")) return notFound(req, res);
      await submitPassword(app, visits, req, res, link, readVisitor(req, app.config, ctx.trust));
    } catch (e) {
      unavailable(req, res, e);
    }
  });

  // Reached from the fast path for linktree pages only, on the default domain or a branded one (its namespace).
  r.get("/:slug", async (req, res) => {
    const slug = slugFromPath(req.path);
    try {
      const host = ctx.brandedHost(req.headers.host);
      const domain = host === undefined ? undefined : host === null ? null : await lookupDomainByHost(app, host);
      const link = slug === null || domain === null ? null : await lookupLinkBySlug(app, slug, domain);
      if (!link || link.kind !== "linktree" || !opts.linktreePage) return notFound(req, res);
      const v = readVisitor(req, app.config, ctx.trust);
      let counted = false;
      const countView = (send: () => void) => {
        if (counted) return send();
        counted = true;
        visits.afterCount(visits.count(req, link, v, "url"), send);
        visits.outcome("linktree");
      };
      await opts.linktreePage(req, res, link, countView);
    } catch (e) {
      unavailable(req, res, e);
    }
  });

  r.use((req, res) => {
    // `/{slug}` is a known path: visited (GET, HEAD) or its password form posted (POST).
    if (slugFromPath(req.path) !== null) return sendError(req, res, 405, METHOD_NOT_ALLOWED, methodNotAllowedPage, { Allow: "GET, HEAD, POST" });
    notFound(req, res);
  });
  // Body parser failures (too large, bad encoding): the service's error, never a stack.
  r.use((err: { status?: number }, req: express.Request, res: express.Response, _next: express.NextFunction) => {
    const status = err?.status === 413 ? 413 : err?.status && err.status >= 400 && err.status < 500 ? 400 : 500;
    if (status === 500) app.log.error({ err }, "redirect host error");
    const error =
      status === 413
        ? { error: "PAYLOAD_TOO_LARGE" }
        : status === 400
          ? { error: "VALIDATION_FAILED", fields: { body: ["must be a URL-encoded form in UTF-8"] } }
          : { error: "INTERNAL_ERROR" };
    sendError(req, res, status, error, () => page("Error", status === 500 ? "<h1>Something went wrong</h1>" : "<h1>Bad request</h1>"));
  });
}
