import { createReadStream, existsSync, statSync } from "node:fs";
import type { Readable } from "node:stream";
import express from "express";
import type { AppServices } from "../core/services";
import { AppError, toPublicError } from "../domain/errors";
import { avatarPath, AVATAR_NAME_RE } from "../lib/avatars";
import { csvText } from "../lib/csv";
import { logFailure } from "../lib/log";
import { createCaller } from "../routers";
import { exportLinksCsv } from "../routers/imports/export";
import { createContextInner, type Actor, type Context } from "../trpc/context";
import { parseRange, rangeQuery } from "../../app/lib/analytics";
import { messageFor } from "../domain/error-messages";
import { sendError } from "./rest";

/**
 * The dashboard's downloads, answered here rather than by Remix pages so the dashboard build holds
 * no service code: the links export, the clicks export, an import's report and the stored avatars.
 * The CSV files need the browser's session (401 without one, 403 for an API token: a token reads
 * the API instead) and name only the caller's workspace's objects (404 for anyone else's).
 */
export function dashboardFiles(app: AppServices): express.Router {
  const router = express.Router();
  router.get("/links.csv", (req, res) =>
    withSession(app, req, res, async (ctx, actor) => {
      const csv = await linksCsv(ctx, actor.workspaceId);
      csv.once("error", (e) => {
        logFailure(app, e, "links export failed");
        res.destroy();
      });
      sendCsvHead(res, `links-${today()}.csv`);
      csv.pipe(res);
    }),
  );
  router.get("/analytics.csv", (req, res) =>
    withSession(app, req, res, async (ctx) => {
      const { name, body } = await clicksCsv(ctx, new URL(req.originalUrl, "http://dashboard.invalid").searchParams);
      sendCsvHead(res, name);
      res.end(body);
    }),
  );
  router.get("/links/import/:id/rejects.csv", (req, res) =>
    withSession(app, req, res, async (ctx) => {
      const { name, body } = await importReportCsv(ctx, req.params.id);
      sendCsvHead(res, name);
      res.end(body);
    }),
  );
  // Names are random and never reused, so a stored avatar can be cached for good; anyone may see it,
  // from any origin: a linktree page on the redirect domain shows it (the other answers stay same-origin).
  router.get("/uploads/avatars/:name", (req, res) => {
    const name = req.params.name;
    const file = AVATAR_NAME_RE.test(name) ? avatarPath(app.config.dataDir, name) : "";
    if (!file || !existsSync(file)) return res.status(404).type("text/plain").send("Not found");
    res.set({
      "Content-Type": "image/webp",
      "Content-Length": String(statSync(file).size),
      "Cache-Control": "public, max-age=31536000, immutable",
      "X-Content-Type-Options": "nosniff",
      "Cross-Origin-Resource-Policy": "cross-origin",
    });
    createReadStream(file)
      .on("error", () => res.destroy())
      .pipe(res);
  });
  return router;
}

/**
 * Every link of the workspace as CSV (the columns of the export, which imports back unchanged),
 * streamed a page of links at a time, read where the workspace's reads go (the replica once its
 * writes have reached it). Visit passwords cannot be exported; `has_password` says which links had one.
 */
export async function linksCsv(ctx: Context, workspaceId: string): Promise<Readable> {
  const db = await ctx.read(async (d) => d);
  return exportLinksCsv(db, ctx.app.config, workspaceId);
}

/** The click events of a link (or the workspace) and a range, with each click's visitor key (unique visitors). */
export async function clicksCsv(ctx: Context, sp: URLSearchParams): Promise<{ name: string; body: string }> {
  const linkId = sp.get("link") || null;
  // `start`/`end` (ms, inclusive): the analytics page's exact range, whose days are the viewer's; else UTC days.
  const [start, end] = [sp.get("start"), sp.get("end")];
  const query =
    start !== null || end !== null
      ? { ...(linkId ? { link_id: linkId } : {}), ...(start !== null ? { from: start } : {}), ...(end !== null ? { to: end } : {}) }
      : rangeQuery(linkId, parseRange(sp));
  const { clicks } = await createCaller(ctx).analytics.export(query);
  // The service's one CSV writer: a referer or browser name cannot break a row or run as a formula.
  const body = csvText(
    CLICK_COLUMNS,
    clicks.map((c) => ({ ...c, timestamp_iso: new Date(c.timestamp).toISOString() })),
  );
  return { name: `clicks-${linkId ?? "workspace"}-${today()}.csv`, body };
}

/**
 * An import's report: each rejected row (1-based, header excluded) with its slug, URL, code and
 * what is wrong, then each row that went in under a new short URL because its slug was taken.
 */
export async function importReportCsv(ctx: Context, id: string): Promise<{ name: string; body: string }> {
  const job = await createCaller(ctx).imports.get({ id });
  const rejected = job.rejects.map((r) => ({
    row: r.row,
    slug: r.slug ?? "",
    url: r.url ?? "",
    error: r.error,
    reason:
      Object.entries(r.fields ?? {})
        .map(([field, msgs]) => `${field}: ${msgs.join(", ")}`)
        .join("; ") || messageFor(r.error),
    new_short_url: "",
  }));
  const moved = job.moved.map((m) => ({
    row: m.row,
    slug: m.slug,
    url: m.url,
    error: "",
    reason: "the slug was taken: imported under a new short URL",
    new_short_url: m.short_url,
  }));
  const body = csvText(
    REPORT_COLUMNS,
    [...rejected, ...moved].sort((a, b) => a.row - b.row),
  );
  return { name: `import-${job.id}-report.csv`, body };
}

const CLICK_COLUMNS = [
  "timestamp_iso",
  "timestamp",
  "ts",
  "link_id",
  "country",
  "region",
  "region_name",
  "timezone",
  "lat",
  "lng",
  "device",
  "platform",
  "browser",
  "referer",
  "rule",
  "visitor",
] as const;

const REPORT_COLUMNS = ["row", "slug", "url", "error", "reason", "new_short_url"] as const;

const today = () => new Date().toISOString().slice(0, 10);

function sendCsvHead(res: express.Response, name: string) {
  res.status(200).set({ "Content-Type": "text/csv; charset=utf-8", "Content-Disposition": `attachment; filename="${name}"`, "Cache-Control": "no-store" });
}

/** The request's procedure context, as the dashboard's pages get it. */
export function dashboardContext(app: AppServices, req: express.Request, res: express.Response): Context {
  return createContextInner(
    app,
    { method: req.method, headers: req.headers, ip: req.ip ?? "" },
    {
      setHeader: (n, v) => void (!res.headersSent && res.setHeader(n, v)),
      appendHeader: (n, v) => void (!res.headersSent && res.appendHeader(n, v)),
    },
    // A dashboard write marks its workspace's reads for the primary until it is answered.
    (done) => res.once("close", done),
  );
}

/** The signed-in browser's actor, or why not: no session is 401, an API token is 403 SESSION_REQUIRED. */
export async function sessionActor(ctx: Context): Promise<Actor> {
  const { actor } = await ctx.auth();
  if (!actor) throw new AppError("UNAUTHORIZED");
  if (actor.via !== "session") throw new AppError("SESSION_REQUIRED");
  return actor;
}

/** Runs a download for the signed-in browser; any failure is the service's `{error}` answer. */
async function withSession(app: AppServices, req: express.Request, res: express.Response, fn: (ctx: Context, actor: Actor) => Promise<void>) {
  try {
    const ctx = dashboardContext(app, req, res);
    await fn(ctx, await sessionActor(ctx));
  } catch (e) {
    const pub = toPublicError(e);
    if (pub.status >= 500) logFailure(app, e, "dashboard download failed", { path: req.path });
    sendError(res, pub);
  }
}
