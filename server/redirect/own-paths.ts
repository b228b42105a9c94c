import type express from "express";
import { eq } from "drizzle-orm";
import { links } from "../../db/schema";
import { lookupDomainByHost } from "../core/lookup";
import type { AppServices } from "../core/services";
import { hostFromHeader } from "../lib/hostnames";
import { OgImageCache } from "./og-image";
import type { Visits } from "./visit";

const OG_PATH = /^\/_\/og\/([0-9a-z]{8})\.png$/;

/** The service's own paths on the redirect host (`/_…`, never a slug): health, the share card's image, the TLS question. */
export function mountOwnPaths(r: express.Express, app: AppServices, visits: Visits) {
  const ogImages = new OgImageCache();

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

  // The share card's generated image: 1200×630 PNG of the link's og_title.
  r.get("/_/og/:file", async (req, res) => {
    const m = OG_PATH.exec(req.path);
    if (!m) return visits.notFound(req, res);
    try {
      const [link] = await app.db.select({ id: links.id, ogTitle: links.ogTitle, deletedAt: links.deletedAt }).from(links).where(eq(links.id, m[1])).limit(1);
      if (!link || link.deletedAt !== null || !link.ogTitle) return visits.notFound(req, res);
      const png = await ogImages.get(link.id, link.ogTitle, app.config.redirectDomain);
      res.writeHead(200, {
        "Content-Type": "image/png",
        "Content-Length": String(png.length),
        "Cache-Control": "public, max-age=300",
        "X-Content-Type-Options": "nosniff",
      });
      res.end(req.method === "HEAD" ? undefined : png);
    } catch (e) {
      visits.unavailable(req, res, e);
    }
  });
}
