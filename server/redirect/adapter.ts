import type { IncomingMessage, ServerResponse } from "node:http";
import express from "express";
import { eq } from "drizzle-orm";
import { RateLimiterRes } from "rate-limiter-flexible";
import { links } from "../../db/schema";
import { base } from "../config";
import { isDatabaseUnavailable } from "../http/errors";
import { verifyPassword } from "../lib/crypto";
import { retryAfterSeconds, type LimitName } from "../lib/rate-limit";
import type { AppServices } from "../services";
import { logSafeError, type Rule } from "./clicks";
import { decide, needsCountry, type Answer } from "./decide";
import { lookupGeo, type GeoInfo } from "./geo";
import { expiredPage, notFoundPage, page } from "./html";
import { lookupLinkBySlug, peekLinkBySlug, type CachedLink } from "./lookup";
import { OgImageCache } from "./og-image";
import { passwordFormPage, type FormState } from "./password-form";
import { shareCardPage } from "./share-card";
import { NO_TRUST, readVisitor, type RequestVisitor, type TrustFn } from "./visitor";

/**
 * Renders a linktree's public page for a slug whose link record is the linktree's own
 * (`kind === "linktree"`). It answers 404 while unpublished, and calls `countView()` only
 * when it serves the page (countView is a no-op for bots and HEAD).
 */
export type LinktreePageHandler = (req: express.Request, res: express.Response, link: CachedLink, countView: () => void) => Promise<void>;

const SLUG_PATH = /^\/([0-9A-Za-z-]{1,50})\/?$/;
const OG_PATH = /^\/_\/og\/([0-9a-z]{8})\.png$/;

/** `/{slug}` → the lower-cased slug (decisions §4), or null when the path is no slug. */
export function slugFromPath(path: string): string | null {
  const m = SLUG_PATH.exec(path);
  return m ? m[1].toLowerCase() : null;
}

// Pages of our own (form, card, 404) are never framed, never cached, never leak the referrer.
const HTML_HEADERS = {
  "Content-Type": "text/html; charset=utf-8",
  "Cache-Control": "no-store",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
  "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src https: http: data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
};
// The password form posts to itself, but the answer is a 302 to the destination (another origin),
// and CSP 3 applies form-action to redirects too: any http(s) destination must be allowed.
const PASSWORD_FORM_HEADERS = {
  "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src https: http: data:; form-action 'self' http: https:; frame-ancestors 'none'; base-uri 'none'",
};

function sendHtml(res: ServerResponse, status: number, html: string, head: boolean, extra: Record<string, string> = {}) {
  const body = Buffer.from(html);
  res.writeHead(status, { ...HTML_HEADERS, ...extra, "Content-Length": String(body.length) });
  res.end(head ? undefined : body);
}

const VISIBLE_ASCII = /^[\x21-\x7e]*$/;

function sendRedirect(res: ServerResponse, status: number, location: string) {
  let loc = location;
  // Stored URLs are validated, but a Location header takes only visible ASCII: encode the rest.
  if (!VISIBLE_ASCII.test(loc)) loc = new URL(loc).href.replace(/[^\x21-\x7e]/g, encodeURIComponent);
  res.writeHead(status, { Location: loc, "Cache-Control": "no-store", "Content-Length": "0" });
  res.end();
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
  const ogImages = new OgImageCache();

  // Pre-bound counter children: no label hashing per request.
  const outcomes = new Map<string, { inc(): void }>();
  const outcome = (name: string) => {
    let c = outcomes.get(name);
    if (!c) outcomes.set(name, (c = app.metrics.redirects.labels(name)));
    c.inc();
  };

  /** Counts a visit unless it is a bot's or a HEAD request (decisions §4). */
  const count = (req: IncomingMessage, link: CachedLink, v: RequestVisitor, rule: Rule, geo?: GeoInfo) => {
    if (req.method === "HEAD" || v.agent.isBot) return;
    app.clicks?.recordVisit({ linkId: link.id, workspaceId: link.workspaceId, timestamp: Date.now(), userAgent: v.userAgent, ip: v.ip, referer: v.referer, rule, edge: v.edge, geo });
  };

  /** The visitor's location when the answer depends on the country: the edge's, else GeoIP. */
  const visitorGeo = async (v: RequestVisitor): Promise<{ country: string | null; geo?: GeoInfo }> => {
    if (config.edgeHeaders !== "none") return { country: v.edge?.country ?? null };
    const geo = await lookupGeo(v.ip);
    return { country: geo.country, geo };
  };

  /** Sends the decided answer; counts the visit when it is one. */
  function answer(req: IncomingMessage, res: ServerResponse, link: CachedLink, v: RequestVisitor, a: Answer, geo?: GeoInfo) {
    const head = req.method === "HEAD";
    switch (a.kind) {
      case "redirect":
        sendRedirect(res, a.status, a.location);
        count(req, link, v, a.rule, geo);
        return outcome(a.rule);
      case "expired":
        sendHtml(res, 404, expiredPage(), head);
        count(req, link, v, a.rule, geo);
        return outcome(a.rule);
      case "card":
        sendHtml(res, 200, shareCardPage(link, redirectBase), head);
        return outcome("card");
      case "password_form":
        sendHtml(res, 200, passwordFormPage(link.slug), head, PASSWORD_FORM_HEADERS);
        return outcome("password_form");
    }
  }

  const notFound = (req: IncomingMessage, res: ServerResponse) => {
    sendHtml(res, 404, notFoundPage(), req.method === "HEAD");
    outcome("not_found");
  };
  // During a database outage every uncached slug fails alike: one line per 10 s with a count,
  // not one per request (and not the driver's error, which repeats the query).
  let outageLoggedAt = 0;
  let outageUnlogged = 0;
  const unavailable = (req: IncomingMessage, res: ServerResponse, err: unknown) => {
    if (!isDatabaseUnavailable(err)) app.log.error({ err }, "redirect lookup failed");
    else if (Date.now() - outageLoggedAt < 10_000) outageUnlogged++;
    else {
      app.log.error({ ...logSafeError(err), notLogged: outageUnlogged }, "redirect lookup failed: database unavailable");
      outageLoggedAt = Date.now();
      outageUnlogged = 0;
    }
    if (!res.headersSent) sendHtml(res, 503, page("Unavailable", "<h1>Temporarily unavailable</h1><p>Please try again in a moment.</p>"), req.method === "HEAD", { "Retry-After": "5" });
    outcome("unavailable");
  };

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
      if (needsCountry(link, now)) ({ country, geo } = await visitorGeo(v));
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

  r.get("/_/health", async (_req, res) => {
    let db = "ok";
    try {
      await app.database.ping();
    } catch {
      db = "unavailable";
    }
    res.status(db === "ok" ? 200 : 503).setHeader("Cache-Control", "no-store").json({ status: db === "ok" ? "ok" : "degraded", database: db });
  });

  // The share card's generated image: 1200×630 PNG of the link's og_title.
  r.get("/_/og/:file", async (req, res) => {
    const m = OG_PATH.exec(req.path);
    if (!m) return notFound(req, res);
    try {
      const [link] = await app.db
        .select({ id: links.id, ogTitle: links.ogTitle, deletedAt: links.deletedAt })
        .from(links)
        .where(eq(links.id, m[1]))
        .limit(1);
      if (!link || link.deletedAt !== null || !link.ogTitle) return notFound(req, res);
      const png = await ogImages.get(link.id, link.ogTitle, config.redirectDomain);
      res.writeHead(200, { "Content-Type": "image/png", "Content-Length": String(png.length), "Cache-Control": "public, max-age=300", "X-Content-Type-Options": "nosniff" });
      res.end(req.method === "HEAD" ? undefined : png);
    } catch (e) {
      unavailable(req, res, e);
    }
  });

  // The password form's submission (service.md: request shape not shown; decisions §4).
  r.post("/:slug", express.urlencoded({ extended: false, limit: "8kb", parameterLimit: 20 }), async (req, res) => {
    const slug = slugFromPath(req.path);
    if (slug === null) return notFound(req, res);
    try {
      const link = await lookupLinkBySlug(app, slug);
      if (!link || link.kind === "linktree") return notFound(req, res);
      const v = readVisitor(req, config, trust);
      const now = Date.now();
      const facts = async () => {
        const g = needsCountry(link, now) ? await visitorGeo(v) : { country: null };
        return { g, facts: { os: v.os, country: g.country, socialCrawler: false } };
      };
      const pass = async () => {
        const { g, facts: f } = await facts();
        answer(req, res, link, v, decide(link, f, now, { passwordPassed: true }), g.geo);
      };
      // The password was removed while this visitor had the form open: let them through.
      // (An expired link still asks for the password first: decide gives its answer after.)
      if (!link.passwordHash) return await pass();
      const password = typeof req.body?.password === "string" ? req.body.password : "";
      const form = (status: number, state: FormState, headers: Record<string, string> = {}) => {
        sendHtml(res, status, passwordFormPage(link.slug, state), false, { ...PASSWORD_FORM_HEADERS, ...headers });
        outcome(state === "limited" ? "password_limited" : "password_wrong");
      };
      if (!password) return form(401, "empty");
      // A try is reserved on both limits before the hash is checked, and given back when the
      // password was right: only wrong tries count, and parallel tries cannot overshoot.
      const reserved: [LimitName, string][] = [];
      const giveBack = () => Promise.all(reserved.map(([n, k]) => app.limits.get(n).reward(k, 1).catch(() => {})));
      const limited = async (name: LimitName, e: RateLimiterRes) => {
        await giveBack();
        app.metrics.rateLimited.inc({ limit: name });
        form(429, "limited", { "Retry-After": String(retryAfterSeconds(e)) });
      };
      let firstTry: boolean;
      try {
        firstTry = (await app.limits.get("passwordPerAddress").consume(v.ip, 1)).consumedPoints <= 1;
        reserved.push(["passwordPerAddress", v.ip]);
      } catch (e) {
        if (!(e instanceof RateLimiterRes)) throw e;
        return limited("passwordPerAddress", e);
      }
      // Past the per-link limit, an address with no failures still gets its password checked:
      // otherwise a few addresses' wrong tries would lock everyone out of the link.
      let linkFull: RateLimiterRes | undefined;
      try {
        await app.limits.get("passwordPerLink").consume(link.id, 1);
        reserved.push(["passwordPerLink", link.id]);
      } catch (e) {
        if (!(e instanceof RateLimiterRes)) throw e;
        if (!firstTry) return limited("passwordPerLink", e);
        linkFull = e;
      }
      if (!(await verifyPassword(password, link.passwordHash))) {
        if (!linkFull) return form(401, "wrong");
        // The wrong try stays on the address's count.
        app.metrics.rateLimited.inc({ limit: "passwordPerLink" });
        return form(429, "limited", { "Retry-After": String(retryAfterSeconds(linkFull)) });
      }
      await giveBack();
      await pass();
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
        count(req, link, v, "url");
        outcome("linktree");
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
