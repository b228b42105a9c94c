import type { IncomingMessage, ServerResponse } from "node:http";
import type express from "express";
import { RateLimiterRes } from "rate-limiter-flexible";
import { lookupDomainByHost } from "../core/lookup";
import { avatarDataUrl, linktreeCard, shareCardTitle } from "../core/share-cards";
import type { AppServices } from "../core/services";
import { hostFromHeader } from "../lib/hostnames";
import { retryAfterSeconds, type LimitName } from "../lib/rate-limit";
import { methodNotAllowedPage } from "./html";
import { ogImagesIn, OgImagesBusy } from "./og-image";
import { METHOD_NOT_ALLOWED, sendError } from "./respond";
import type { Visits } from "./visit";
import { readVisitor, type TrustFn } from "./visitor";

const OG_PATH = /^\/_\/og\/([0-9a-z]{8})\.png$/;

/** The service's own paths on the redirect host (`/_…`, never a slug): health and the TLS question (the share card's image: ogImageRoute). */
export function mountOwnPaths(r: express.Express, app: AppServices, visits: Visits) {
  r.get("/_/health", async (_req, res) => {
    // After SIGTERM (main.ts): out of the load balancer's rotation while requests still finish.
    if (app.draining) return void res.status(503).setHeader("Cache-Control", "no-store").json({ status: "draining" });
    let db = "ok";
    try {
      await app.database.ping();
    } catch {
      db = "unavailable";
    }
    // Redis lost is degraded but still serving: each instance then counts rate limits on its own.
    const rateLimits = app.limits.store();
    res
      .status(db === "ok" ? 200 : 503)
      .setHeader("Cache-Control", "no-store")
      .json({ status: db === "ok" && rateLimits !== "memory fallback" ? "ok" : "degraded", database: db, rate_limits: rateLimits });
  });

  // Caddy's on-demand TLS `ask`: 200 for a verified branded domain, else 404, so a
  // certificate is only ever requested for a host this service serves. Host names compare without
  // regard to case, as the redirect host serves them; a port or a trailing dot is no domain's name.
  r.get("/_/tls/ask", async (req, res) => {
    const asked = typeof req.query.domain === "string" ? req.query.domain.toLowerCase() : "";
    const host = hostFromHeader(asked);
    try {
      const domain = host && host === asked ? await lookupDomainByHost(app, host) : null;
      res
        .status(domain ? 200 : 404)
        .setHeader("Cache-Control", "no-store")
        .type("text/plain")
        .send(domain ? "ok" : "not a verified domain");
    } catch (e) {
      visits.unavailable(req, res, e);
    }
  });

  r.all(["/_/health", "/_/tls/ask"], (req, res) => sendError(req, res, 405, METHOD_NOT_ALLOWED, methodNotAllowedPage, { Allow: "GET, HEAD" }));
}

const REFUSAL_PAUSE_MS = 1000;
const REFUSALS_HELD = 1000;
const limitedBody = Buffer.from(JSON.stringify({ error: "RATE_LIMITED" }));
const busyBody = Buffer.from(JSON.stringify({ error: "SERVICE_UNAVAILABLE" }));

/**
 * GET/HEAD `/_/og/{id}.png`, the share card's generated image: 1200×630 PNG of the link's og_title.
 * The redirect fast path calls it before Express: a client cycling through ids at full speed is
 * answered 429 for about what a redirect costs, so the redirects keep their share of the thread.
 * Images are rendered off this thread and kept on disk; each client address has a budget of images
 * (checked before the database is asked) and a smaller one of renders; a full render queue answers
 * 503 at once. Errors are the service's JSON shape: the image's client is a program.
 */
export function ogImageRoute(app: AppServices, visits: Visits, trust: TrustFn) {
  const rejected = new Map<LimitName, { inc(): void }>();
  /** Spends one point of the address's budget; the refusal (not an Error: no stack to build) when it is out. */
  const spend = async (name: LimitName, ip: string): Promise<RateLimiterRes | null> => {
    try {
      await app.limits.get(name).consume(ip, 1);
      return null;
    } catch (e) {
      if (!(e instanceof RateLimiterRes)) throw e;
      let c = rejected.get(name);
      if (!c) rejected.set(name, (c = app.metrics.rateLimited.labels(name)));
      c.inc();
      return e;
    }
  };
  const sendRefusal = (req: IncomingMessage, res: ServerResponse, status: number, body: Buffer, retryAfter: number) => {
    res.writeHead(status, {
      "Content-Type": "application/json",
      "Content-Length": String(body.length),
      "Cache-Control": "no-store",
      "Retry-After": String(retryAfter),
    });
    res.end(req.method === "HEAD" ? undefined : body);
  };

  // A client past its image budget gets its 429 after a pause: one hammering on a few connections
  // then waits instead of spending the request thread at full speed. Bounded, so held answers
  // never pile up (past the bound they go at once).
  let held = 0;
  const refuse = (req: IncomingMessage, res: ServerResponse, over: RateLimiterRes) => {
    if (held >= REFUSALS_HELD) return sendRefusal(req, res, 429, limitedBody, retryAfterSeconds(over));
    held++;
    setTimeout(() => {
      held--;
      sendRefusal(req, res, 429, limitedBody, retryAfterSeconds(over));
    }, REFUSAL_PAUSE_MS).unref();
  };

  return async (req: IncomingMessage, res: ServerResponse, path: string): Promise<void> => {
    const m = OG_PATH.exec(path);
    if (!m) return visits.notFound(req, res);
    const ip = readVisitor(req, app.config, trust).ip;
    try {
      const over = await spend("ogImagePerAddress", ip);
      if (over) return refuse(req, res, over);
      const title = await shareCardTitle(app.db, m[1]);
      // A linktree page's card shows its title and avatar.
      const tree = title === null ? await linktreeCard(app.db, m[1]) : null;
      if (title === null && tree === null) return visits.notFound(req, res);
      const avatar = tree?.avatarUrl ? await avatarDataUrl(tree.avatarUrl, app.config.webhookAllowPrivate, app.config) : null;
      // Looked up per request, not once: tests may set the images of a data directory up first.
      const images = ogImagesIn(app.config.dataDir);
      const png = await images.get({ title: title ?? tree!.title, subtitle: app.config.redirectDomain, ...(avatar ? { avatar } : {}) }, async () => {
        const refused = await spend("ogRenderPerAddress", ip);
        if (refused) throw refused; // answered 429 below
      });
      res.writeHead(200, {
        "Content-Type": "image/png",
        "Content-Length": String(png.length),
        "Cache-Control": "public, max-age=300",
        "X-Content-Type-Options": "nosniff",
      });
      res.end(req.method === "HEAD" ? undefined : png);
    } catch (e) {
      if (e instanceof RateLimiterRes) return sendRefusal(req, res, 429, limitedBody, retryAfterSeconds(e));
      if (e instanceof OgImagesBusy) return sendRefusal(req, res, 503, busyBody, e.retryAfterSeconds);
      visits.unavailable(req, res, e);
    }
  };
}
