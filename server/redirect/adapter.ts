import express from "express";
import type { AppServices } from "../services";
import type { CachedLink } from "./lookup";

/**
 * Renders a linktree's public page for a slug whose link record is the linktree's own
 * (`kind === "linktree"`). It answers 404 while unpublished, and calls `countView()` only
 * when it serves the page (countView is a no-op for bots and HEAD).
 */
export type LinktreePageHandler = (req: express.Request, res: express.Response, link: CachedLink, countView: () => void) => Promise<void>;

/** The redirect host (REDIRECT_URL). Paths under `/_` are the service's own, never a slug. */
export function createRedirectApp(app: AppServices, opts: { linktreePage?: LinktreePageHandler } = {}): express.Express {
  const r = express();
  r.disable("x-powered-by");
  r.set("trust proxy", app.config.trustProxy);
  r.get("/_/health", async (_req, res) => {
    let db = "ok";
    try {
      await app.database.ping();
    } catch {
      db = "unavailable";
    }
    res.status(db === "ok" ? 200 : 503).setHeader("Cache-Control", "no-store").json({ status: db === "ok" ? "ok" : "degraded", database: db });
  });
  r.use((_req, res) => {
    res.status(404).type("html").setHeader("Cache-Control", "no-store").send("<!doctype html><title>Not found</title><h1>Link not found</h1>");
  });
  return r;
}
