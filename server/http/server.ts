import http from "node:http";
import type { Duplex } from "node:stream";
import { randomUUID } from "node:crypto";
import express from "express";
import type { AppServices } from "../core/services";
import { apiErrorHandler, apiSecurityHeaders, createApiRouter, securityHeaders } from "./app";
import { createAdminEndpoint } from "../admin/endpoint";
import { assertRemixBuild, createRemixHandler } from "./remix";
import { createRedirectParts, type LinktreePageHandler } from "../redirect/adapter";
import { createLinktreePageHandler } from "./linktree-page";
import { sendError, trpcBodyParser } from "./rest";
import { AppError } from "../domain/errors";
import { isLocalScrape } from "../lib/metrics";
import { createReadiness } from "./readiness";
import { requestTimers } from "./metrics-routes";
import { composeRedirectHost, type RequestListener } from "./redirect-host";

type OriginKind = "app" | "api" | "redirect";
type Origin = { kind: OriginKind; url: URL; handler: RequestListener; prefix: string };

const portOf = (u: URL) => Number(u.port || (u.protocol === "https:" ? 443 : 80));

function subApp(app: AppServices) {
  const e = express();
  e.disable("x-powered-by");
  e.set("trust proxy", app.config.trustProxy);
  return e;
}

/** How long a stop waits for in-flight requests before cutting their connections. */
export const DRAIN_GRACE_MS = 5_000;

export type RunningServers = { servers: http.Server[]; close(graceMs?: number): Promise<void>; ports: number[] };

/** The three origins: the API, the dashboard (Remix) and the redirect host, each a plain request handler. */
function createOrigins(app: AppServices, opts: { remix?: boolean }): Origin[] {
  const { config } = app;

  const api = subApp(app);
  api.use(apiSecurityHeaders(config.apiUrl.protocol === "https:"));
  // Before the router's express.json: the /trpc body is read like a REST body (charset, encoding, `__proto__`).
  api.use("/trpc", trpcBodyParser());
  api.use(createApiRouter(app));

  const web = subApp(app);
  web.use(createAdminEndpoint(app)); // loopback-only, for the command line (server/cli.ts)
  web.use(securityHeaders());
  if (config.appUrl.protocol !== "https:") web.use((_q, s, n) => (s.removeHeader("Strict-Transport-Security"), n()));
  // The Remix build (React, charts: the largest part of the process) is imported on the first
  // request that needs it, so start is quick and a redirect-only instance never holds it.
  if (opts.remix !== false) {
    assertRemixBuild();
    web.use(lazyHandler(() => createRemixHandler(app)));
  }
  if (opts.remix === false) web.use((_q, s) => s.status(404).type("text").send("Not found"));
  // Express's own handler would print the stack to stderr (and into the page outside production).
  web.use(apiErrorHandler(app));

  // Linktree pages are rendered by a Remix route, so they exist only when Remix is on.
  let linktreePage: Promise<LinktreePageHandler> | undefined;
  // The redirect host: its fast path answers slugs before Express; Express has the rest.
  const redirectParts = createRedirectParts(app, {
    linktreePage:
      opts.remix !== false
        ? async (req, res, link, countView) => (await (linktreePage ??= createLinktreePageHandler(app)))(req, res, link, countView)
        : undefined,
  });
  const redirect = composeRedirectHost(redirectParts);

  return [
    {
      kind: "api",
      url: config.apiUrl,
      handler: (q, s) => api(q as express.Request, s as express.Response),
      prefix: config.apiUrl.pathname.replace(/\/+$/, ""),
    },
    { kind: "app", url: config.appUrl, handler: (q, s) => web(q as express.Request, s as express.Response), prefix: "" },
    { kind: "redirect", url: config.redirectUrl, handler: redirect, prefix: "" },
  ];
}

/**
 * One process, three origins. Each origin listens on the port of its URL; when
 * origins share a port, the Host header (and the API's path prefix) picks the origin.
 */
export async function startServers(app: AppServices, opts: { remix?: boolean } = {}): Promise<RunningServers> {
  const { config } = app;
  const origins = createOrigins(app, opts);
  const ports = [...new Set(origins.map((o) => portOf(o.url)))];
  const servers: http.Server[] = [];
  // Redirects are logged at debug only; below that level they skip the logging set-up entirely.
  const logRedirects = app.log.isLevelEnabled("debug");
  const readiness = createReadiness(app); // /_/live and /_/ready, on every origin
  const timers = requestTimers(app.metrics.requestDurations);

  for (const port of ports) {
    const pick = originPicker(origins.filter((o) => portOf(o.url) === port));
    const server = http.createServer((req, res) => {
      // Service endpoints of every origin: Prometheus metrics, to this machine only (isLocalScrape).
      if (req.url === "/_/metrics" && req.method === "GET") return void serveMetrics(app, req, res);
      if (req.url?.startsWith("/_/") && readiness.handle(req, res)) return;
      const origin = pick(req);
      if (!origin) return sendError(res as express.Response, new AppError("NOT_FOUND"));
      timers.start(origin.kind, res);
      if (origin.kind !== "redirect" || logRedirects) logRequest(app, req, res);
      if (origin.prefix) req.url = req.url!.slice(origin.prefix.length) || "/";
      if (req.url && !req.url.startsWith("/")) req.url = "/" + req.url;
      origin.handler(req, res);
    });
    server.on("clientError", answerClientError);
    server.keepAliveTimeout = 65_000;
    // A client may half-close once its request is sent (HTTP/1.0 tools, `printf … | nc`): by default
    // node:http then drops a request whose answer is still pending (a cache miss, any API call) and
    // the client gets nothing. With this the answer is written and the connection closed after it.
    (server as http.Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, () => resolve());
    });
    servers.push(server);
  }
  app.log.info({ app: config.appUrl.href, api: config.apiUrl.href, redirect: config.redirectUrl.href }, "listening");
  return {
    servers,
    ports,
    async close(graceMs = DRAIN_GRACE_MS) {
      readiness.close();
      // A request still unanswered after the grace (a client that stopped reading, a handler
      // waiting on something that never came) would hold the stop up for ever: its connection is cut.
      const cut = setTimeout(() => {
        void Promise.all(servers.map((s) => new Promise<number>((r) => s.getConnections((_e, n) => r(n ?? 0))))).then((open) => {
          app.log.warn({ connections: open.reduce((a, b) => a + b, 0), graceMs }, "connections still open after the drain's grace were cut");
          for (const s of servers) s.closeAllConnections();
        });
      }, graceMs);
      await Promise.all(
        servers.map(
          (s) =>
            new Promise<void>((resolve) => {
              s.close(() => resolve());
              s.closeIdleConnections();
            }),
        ),
      );
      clearTimeout(cut);
    },
  };
}

/** A handler built on first use (a failed build is retried by the next request). */
function lazyHandler(make: () => Promise<express.RequestHandler>): express.RequestHandler {
  let made: Promise<express.RequestHandler> | undefined;
  return (req, res, next) => {
    (made ??= make().catch((e) => ((made = undefined), Promise.reject(e)))).then((h) => h(req, res, next), next);
  };
}

const REQUEST_ID_RE = /^[\w.:-]{1,64}$/;

/**
 * One structured log line per answered request, with a request id (echoed as X-Request-Id).
 * Redirects log at debug: at tens of thousands a second they would drown everything else.
 */
function logRequest(app: AppServices, req: http.IncomingMessage, res: http.ServerResponse) {
  const incoming = req.headers["x-request-id"];
  const id = typeof incoming === "string" && REQUEST_ID_RE.test(incoming) ? incoming : randomUUID();
  res.setHeader("X-Request-Id", id);
  const started = process.hrtime.bigint();
  res.once("finish", () => {
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const host = (req.headers.host ?? "").toLowerCase();
    const level = host === app.config.redirectUrl.host.toLowerCase() && res.statusCode < 500 ? "debug" : res.statusCode >= 500 ? "error" : "info";
    if (!app.log.isLevelEnabled(level)) return;
    // The path only: query strings may carry anything a caller pasted; an invitation's path is its secret.
    const path = (req.url ?? "").split("?")[0].replace(/^\/invites\/[^/]+/, "/invites/…");
    app.log[level]({ reqId: id, method: req.method, path, status: res.statusCode, ms: Math.round(ms * 10) / 10 }, "request");
  });
}

/**
 * A request node:http refuses before any handler sees it (the request line and headers over its
 * 16 KiB, a malformed request): answered with the service's error body, as every other error,
 * instead of node's empty one. A timeout keeps node's answer; a connection already gone gets none.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex) {
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent) return void socket.destroy();
  if (err.code === "ERR_HTTP_REQUEST_TIMEOUT") return void socket.end("HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n");
  const [status, reason, fields] =
    err.code === "HPE_HEADER_OVERFLOW"
      ? [431, "Request Header Fields Too Large", { headers: ["the request line and headers must be at most 16 KiB in all"] }]
      : [400, "Bad Request", { request: ["must be a well-formed HTTP/1.1 request"] }];
  const body = JSON.stringify({ error: "VALIDATION_FAILED", fields });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
  );
}

async function serveMetrics(app: AppServices, req: http.IncomingMessage, res: http.ServerResponse) {
  if (!isLocalScrape(req.socket.remoteAddress, req.headers)) {
    res.statusCode = 404;
    res.setHeader("Content-Type", "application/json");
    return void res.end(JSON.stringify({ error: "NOT_FOUND" }));
  }
  app.metrics.clicksBuffered.set(app.clicks?.buffered ?? 0);
  res.setHeader("Content-Type", app.metrics.registry.contentType);
  res.setHeader("Cache-Control", "no-store");
  res.end(await app.metrics.registry.metrics());
}

/**
 * Which origin answers a request on one port: the origins whose host matches the Host header
 * (the redirect host, else all of them, when none does), longest path prefix first so the API under APP_URL/api wins over
 * the app itself. Worked out once per port, not per request.
 */
function originPicker(origins: Origin[]): (req: http.IncomingMessage) => Origin | undefined {
  const byPrefix = (list: Origin[]) => [...list].sort((a, b) => b.prefix.length - a.prefix.length);
  const byHost = new Map<string, Origin[]>();
  for (const o of origins) byHost.set(o.url.host.toLowerCase(), byPrefix(origins.filter((x) => x.url.host.toLowerCase() === o.url.host.toLowerCase())));
  // A Host naming none of them may be a branded domain's: the redirect host answers
  // it when it listens on this port (404 for no served domain); otherwise, the origins by prefix.
  const redirect = origins.filter((o) => o.kind === "redirect");
  const fallback = redirect.length ? redirect : byPrefix(origins);
  return (req) => {
    const pool = byHost.get((req.headers.host ?? "").toLowerCase()) ?? fallback;
    if (pool.length === 1 && !pool[0].prefix) return pool[0];
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q < 0 ? url : url.slice(0, q);
    // Only an API-only port/host with a path outside its prefix finds nothing.
    return pool.find((o) => o.prefix === "" || path === o.prefix || path.startsWith(o.prefix + "/"));
  };
}
