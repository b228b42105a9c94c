import type express from "express";
import { eq } from "drizzle-orm";
import { links } from "../../db/schema";
import { lookupDomainByHost } from "../core/lookup";
import type { AppServices } from "../core/services";
import { toPublicError, AppError } from "../domain/errors";
import { hostFromHeader } from "../lib/hostnames";
import { consume, type LimitName } from "../lib/rate-limit";
import { ogImagesIn, OgImagesBusy } from "./og-image";
import type { Visits } from "./visit";

const OG_PATH = /^\/_\/og\/([0-9a-z]{8})\.png$/;

/** The service's own paths on the redirect host (`/_…`, never a slug): health, the share card's image, the TLS question. */
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
    res
      .status(db === "ok" ? 200 : 503)
      .setHeader("Cache-Control", "no-store")
      .json({ status: db === "ok" ? "ok" : "degraded", database: db });
  });

  // Caddy's on-demand TLS `ask` (extensions §2): 200 for a verified branded domain, else 404, so a
  // certificate is only ever requested for a host this service serves.
  r.get("/_/tls/ask", async (req, res) => {
    const q = req.query.domain;
    const host = typeof q === "string" && q === q.toLowerCase() ? hostFromHeader(q) : null;
    try {
      const domain = host && host === q ? await lookupDomainByHost(app, host) : null;
      res
        .status(domain ? 200 : 404)
        .setHeader("Cache-Control", "no-store")
        .type("text/plain")
        .send(domain ? "ok" : "not a verified domain");
    } catch (e) {
      visits.unavailable(req, res, e);
    }
  });

  // The share card's generated image: 1200×630 PNG of the link's og_title. Rendered off this
  // thread and kept on disk; each client address has a budget of images and a smaller one of
  // renders, and a full render queue answers 503 at once, so a client cycling through ids costs
  // the redirects on this thread next to nothing.
  r.get("/_/og/:file", async (req, res) => {
    const m = OG_PATH.exec(req.path);
    if (!m) return visits.notFound(req, res);
    const ip = req.ip ?? "";
    try {
      await limit("ogImagePerAddress", ip);
      const [link] = await app.db.select({ id: links.id, ogTitle: links.ogTitle, deletedAt: links.deletedAt }).from(links).where(eq(links.id, m[1])).limit(1);
      if (!link || link.deletedAt !== null || !link.ogTitle) return visits.notFound(req, res);
      // Looked up per request, not at mount: tests may set the images of a data directory up first.
      const images = ogImagesIn(app.config.dataDir);
      const png = await images.get({ title: link.ogTitle, subtitle: app.config.redirectDomain }, () => limit("ogRenderPerAddress", ip));
      res.writeHead(200, {
        "Content-Type": "image/png",
        "Content-Length": String(png.length),
        "Cache-Control": "public, max-age=300",
        "X-Content-Type-Options": "nosniff",
      });
      res.end(req.method === "HEAD" ? undefined : png);
    } catch (e) {
      if (e instanceof OgImagesBusy)
        return sendError(req, res, new AppError("SERVICE_UNAVAILABLE", { headers: { "Retry-After": String(e.retryAfterSeconds) } }));
      if (e instanceof AppError && e.publicCode === "RATE_LIMITED") return sendError(req, res, e);
      visits.unavailable(req, res, e);
    }
  });

  const limit = async (name: LimitName, ip: string) => {
    try {
      await consume(app.limits, name, ip);
    } catch (e) {
      if (e instanceof AppError) app.metrics.rateLimited.inc({ limit: name });
      throw e;
    }
  };
}

/** An error in the service's JSON shape (the image's client is a program, not a person reading a page). */
function sendError(req: express.Request, res: express.Response, e: AppError) {
  const { status, body, headers } = toPublicError(e);
  const json = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { ...headers, "Content-Type": "application/json", "Content-Length": String(json.length), "Cache-Control": "no-store" });
  res.end(req.method === "HEAD" ? undefined : json);
}
