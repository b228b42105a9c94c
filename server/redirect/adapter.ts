import type { IncomingMessage, ServerResponse } from "node:http";
import express from "express";
import { base } from "../config";
import { lookupLinkBySlug, peekLinkBySlug, type CachedLink } from "../core/lookup";
import type { AppServices } from "../core/services";
import type { GeoInfo } from "../lib/geo";
import { decide, needsCountry } from "./decide";
import { page } from "./html";
import { mountOwnPaths } from "./own-paths";
import { submitPassword } from "./password-submit";
import { sendHtml } from "./respond";
import { createVisits } from "./visit";
import { NO_TRUST, readVisitor, type TrustFn } from "./visitor";

/**
 * Renders a linktree's public page for a slug whose link record is the linktree's own
 * (`kind === "linktree"`). It answers 404 while unpublished, and calls `countView()` only
 * when it serves the page (countView is a no-op for bots and HEAD).
 */
export type LinktreePageHandler = (req: express.Request, res: express.Response, link: CachedLink, countView: () => void) => Promise<void>;

const SLUG_PATH = /^\/([0-9A-Za-z-]{1,50})\/?$/;

/** `/{slug}` → the lower-cased slug (decisions §4), or null when the path is no slug. */
export function slugFromPath(path: string): string | null {
  const m = SLUG_PATH.exec(path);
  return m ? m[1].toLowerCase() : null;
}

/** The redirect host (REDIRECT_URL). Paths under `/_` are the service's own, never a slug. */
export function createRedirectApp(app: AppServices, opts: { linktreePage?: LinktreePageHandler } = {}): express.Express {
  const { config } = app;
  const r = express();
  r.disable("x-powered-by");
  r.disable("etag");
  r.set("trust proxy", config.trustProxy);
  const trust = config.trustProxy === false ? NO_TRUST : (r.get("trust proxy fn") as TrustFn);
  const redirectBase = base(config.redirectUrl);

  const visits = createVisits(app, redirectBase);
  const { answer, notFound, unavailable } = visits;

  /**
   * GET/HEAD /{slug}. A cache hit runs to the answer synchronously (this async function awaits
   * nothing then); only a cache miss or a geo-targeted link waits for I/O.
   */
  async function serveSlug(req: IncomingMessage, res: ServerResponse, slug: string, next: () => void): Promise<void> {
    try {
      const now = Date.now();
      let link = peekLinkBySlug(app, slug, now);
      if (link === undefined) link = await lookupLinkBySlug(app, slug);
      if (!link) return notFound(req, res);
      if (link.kind === "linktree") return opts.linktreePage ? next() : notFound(req, res);
      const v = readVisitor(req, config, trust);
      let country: string | null = null;
      let geo: GeoInfo | undefined;
      if (needsCountry(link, now)) ({ country, geo } = await visits.visitorGeo(v));
      answer(req, res, link, v, decide(link, { os: v.os, country, socialCrawler: v.agent.isSocialCrawler }, now), geo);
    } catch (e) {
      unavailable(req, res, e);
    }
  }

  // The fast path: GET/HEAD /{slug} is answered before Express sets anything up. Everything
  // else (the `/_` paths, the password POST, linktree pages) goes through the Express routes.
  const expressHandle = (r as unknown as { handle: (req: IncomingMessage, res: ServerResponse, done: () => void) => void }).handle.bind(r);
  (r as unknown as { handle: typeof expressHandle }).handle = (req, res, done) => {
    if (req.method === "GET" || req.method === "HEAD") {
      const url = req.url ?? "/";
      const q = url.indexOf("?");
      const path = q < 0 ? url : url.slice(0, q);
      if (!path.startsWith("/_") && path !== "/") {
        const slug = slugFromPath(path);
        if (slug === null) return notFound(req, res);
        void serveSlug(req, res, slug, () => expressHandle(req, res, done));
        return;
      }
    }
    expressHandle(req, res, done);
  };

  mountOwnPaths(r, app, visits);

  // The password form's submission (service.md: request shape not shown; decisions §4).
  r.post("/:slug", express.urlencoded({ extended: false, limit: "8kb", parameterLimit: 20 }), async (req, res) => {
    const slug = slugFromPath(req.path);
    if (slug === null) return notFound(req, res);
    try {
      const link = await lookupLinkBySlug(app, slug);
      if (!link || link.kind === "linktree") return notFound(req, res);
      await submitPassword(app, visits, req, res, link, readVisitor(req, config, trust));
    } catch (e) {
      unavailable(req, res, e);
    }
  });

  // Reached from the fast path for linktree pages only.
  r.get("/:slug", async (req, res) => {
    const slug = slugFromPath(req.path);
    try {
      const link = slug === null ? null : await lookupLinkBySlug(app, slug);
      if (!link || link.kind !== "linktree" || !opts.linktreePage) return notFound(req, res);
      const v = readVisitor(req, config, trust);
      let counted = false;
      const countView = () => {
        if (counted) return;
        counted = true;
        visits.count(req, link, v, "url");
        visits.outcome("linktree");
      };
      await opts.linktreePage(req, res, link, countView);
    } catch (e) {
      unavailable(req, res, e);
    }
  });

  r.use((req, res) => notFound(req, res));
  // Body parser failures (too large, bad encoding): a plain page, never a stack.
  r.use((err: { status?: number }, req: express.Request, res: express.Response, _next: express.NextFunction) => {
    const status = err?.status === 413 ? 413 : err?.status && err.status >= 400 && err.status < 500 ? 400 : 500;
    if (status === 500) app.log.error({ err }, "redirect host error");
    sendHtml(res, status, page("Error", status === 500 ? "<h1>Something went wrong</h1>" : "<h1>Bad request</h1>"), req.method === "HEAD");
  });
  return r;
}
