import path from "node:path";
import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import express from "express";
import { createRequestHandler, writeReadableStreamToWritable, type ServerBuild } from "@remix-run/node";
import type { AppServices } from "../core/services";
import type { AuthResult } from "../core/auth";
import { databaseUnavailable, logFailure } from "../lib/log";
import { createCaller } from "../routers";
import type { Context } from "../trpc/context";
import { mapCallerErrors } from "../trpc/init";
import { formBodies, type FormBodyRequest } from "./app";
import { dashboardFiles, dashboardContext } from "./dashboard-files";
import { dashboardUploads } from "./dashboard-uploads";
import { sendError } from "./rest";
import { wantsHtml } from "../lib/accept";
import { remixRouteLabels, setRoute } from "./metrics-routes";
import { AppError, toPublicError } from "../domain/errors";

export const BUILD_DIR = path.resolve("build");

/**
 * What Remix loaders and actions get, and nothing more: the dashboard is a client of the routers.
 * The caller (the same procedures as the API, with the request's auth), the auth result, the CSP
 * nonce, the public URLs, and a way to report what failed into the server's log. No services, no
 * database, no configuration: the dashboard build then holds none of the server's modules.
 */
export type RemixLoadContext = {
  caller: ReturnType<typeof createCaller>;
  /** The request's auth (memoised); with the database away, the outage page instead. */
  auth: () => Promise<AuthResult>;
  /** The response's CSP nonce (securityHeaders), for Remix's inline scripts. */
  nonce: string;
  /** Without a trailing slash. */
  urls: { app: string; api: string; redirect: string; redirectDomain: string };
  report: {
    /** A request or render that failed, as one log line (a database outage is tracked instead). */
    failure(e: unknown, msg: string, extra?: Record<string, unknown>): void;
    /** A page answered 503 because the database is away. */
    outage(): void;
  };
};

export function remixContext(app: AppServices, req: express.Request, res: express.Response): RemixLoadContext {
  const ctx: Context = res.locals.dashboardContext ?? dashboardContext(app, req, res);
  // Every page reads the session first: with the database away that is a 503 page with Retry-After
  // (a Response Remix renders as the route's error), not an unexpected error's 500.
  const auth = ctx.auth;
  ctx.auth = () => auth().catch((e) => Promise.reject(unavailablePage(e) ?? e));
  const base = (u: URL) => u.href.replace(/\/+$/, "");
  const { config } = app;
  return {
    caller: mapCallerErrors(createCaller(ctx), (e) => dashboardFailure(app, e)),
    auth: ctx.auth,
    nonce: String(res.locals.cspNonce ?? ""),
    urls: { app: base(config.appUrl), api: base(config.apiUrl), redirect: base(config.redirectUrl), redirectDomain: config.redirectDomain },
    report: {
      failure: (e, msg, extra) => logFailure(app, e, msg, extra),
      outage: () => databaseUnavailable(app),
    },
  };
}

/**
 * The caller as the dashboard sees it: a procedure's failure rejects with the service's public
 * fields only (`code`, `status`, `fields`, `headers`), so the dashboard recognises it without the
 * server's error classes; a 5xx is logged here, with its cause (a database outage is tracked
 * instead). A Response a guard threw (the outage page) passes through as it is.
 */
export function dashboardFailure(app: AppServices, e: unknown): unknown {
  for (let cur = e, i = 0; cur && typeof cur === "object" && i < 5; cur = (cur as { cause?: unknown }).cause, i++) if (cur instanceof Response) return cur;
  const pub = toPublicError(e);
  if (pub.status >= 500) logFailure(app, e, "dashboard call failed");
  const fields = "fields" in pub.body ? pub.body.fields : undefined;
  return Object.assign(new Error(pub.body.error), { code: pub.body.error, status: pub.status, fields, headers: pub.headers });
}

/** The dashboard's answer while the database cannot be reached, or undefined for another error. */
export function unavailablePage(e: unknown): Response | undefined {
  const pub = toPublicError(e);
  if (pub.status !== 503) return undefined;
  return new Response("The service is briefly unavailable. Try again shortly.", { status: 503, headers: { ...pub.headers, "Content-Type": "text/plain" } });
}

const BUILD_FILE = path.join(BUILD_DIR, "index.js");

/** Fails fast (at start) when the dashboard was never built. */
export function assertRemixBuild(): void {
  if (!existsSync(BUILD_FILE)) throw new Error(`Remix build missing at ${BUILD_FILE}: run npm run build`);
}

let buildModule: Promise<ServerBuild> | undefined;
/** The Remix server build, imported once on first use (the dashboard and the linktree pages share it). */
export function loadRemixBuild(): Promise<ServerBuild> {
  assertRemixBuild();
  return (buildModule ??= import(pathToFileURL(BUILD_FILE).href) as Promise<ServerBuild>);
}

export async function createRemixHandler(app: AppServices): Promise<express.RequestHandler> {
  const build = await loadRemixBuild();
  const handle = createRequestHandler(build, process.env.NODE_ENV);
  const routeOf = remixRouteLabels(build.routes);
  const router = express.Router();
  router.use("/build", express.static(path.resolve("public/build"), { immutable: true, maxAge: "1y" }));
  router.use(express.static(path.resolve("public"), { maxAge: "1h" }));
  router.use(dashboardFiles(app));
  // @remix-run/express's handler, except that the body is the one formBodies read and bounded.
  router.all("*", sameOriginWrites, formBodies(), dashboardUploads(app), async (req: FormBodyRequest, res, next) => {
    setRoute(res, routeOf(req.path));
    try {
      const response = await handle(remixRequest(req, res), remixContext(app, req, res) as never);
      // A page that does not exist is the service's 404 body for any client but a browser (which
      // asks for HTML by name and gets the page); the app's own data requests keep Remix's answer.
      if (response.status === 404 && (req.method === "GET" || req.method === "HEAD") && !req.path.endsWith(".data") && !wantsHtml(req)) {
        return sendError(res, new AppError("NOT_FOUND"));
      }
      await sendRemixResponse(res, response);
    } catch (e) {
      next(e);
    }
  });
  return router;
}

const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * A write whose Origin names another host than the request's (X-Forwarded-Host, else Host) is a
 * cross-site form post. Remix refuses it too, but by throwing: a 500 with a stack on stderr. The same
 * test here answers 403 first, so Remix never sees one. `Origin: null` and a malformed one are refused.
 */
function sameOriginWrites(req: express.Request, res: express.Response, next: express.NextFunction) {
  const origin = req.get("origin");
  if (!WRITE_METHODS.has(req.method) || !origin) return next();
  const host = req.get("x-forwarded-host")?.split(",")[0]?.trim() || req.get("host");
  let originHost: string | undefined = origin;
  if (origin !== "null") {
    try {
      originHost = new URL(origin).host;
    } catch {
      originHost = undefined;
    }
  }
  if (host && originHost === host) return next();
  req.resume();
  sendError(res, new AppError("FORBIDDEN"));
}

function remixRequest(req: FormBodyRequest, res: express.Response): Request {
  // req.hostname honours "trust proxy"; the port comes from X-Forwarded-Host or Host, as in @remix-run/express.
  const portOf = (h: string | undefined) => Number.parseInt(h?.split(":")[1] ?? "", 10);
  const port = [portOf(req.get("x-forwarded-host")), portOf(req.get("host"))].find(Number.isSafeInteger);
  const url = new URL(`${req.protocol}://${req.hostname}${port ? `:${port}` : ""}${req.originalUrl}`);
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (Array.isArray(v)) for (const x of v) headers.append(k, x);
    else if (v) headers.set(k, v);
  }
  // Abort loaders and actions once no answer can be written any more.
  const controller = new AbortController();
  res.on("close", () => !res.writableFinished && controller.abort());
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return new Request(url.href, {
    method: req.method,
    headers,
    signal: controller.signal,
    body: hasBody ? (req.formStream ?? req.formBody ?? null) : undefined,
    ...(req.formStream ? { duplex: "half" } : {}),
  });
}

async function sendRemixResponse(res: express.Response, response: Response) {
  res.statusMessage = response.statusText;
  res.status(response.status);
  for (const [k, v] of response.headers.entries()) res.append(k, v);
  if (/text\/event-stream/i.test(response.headers.get("content-type") ?? "")) res.flushHeaders();
  if (response.body) await writeReadableStreamToWritable(response.body, res);
  else res.end();
}
