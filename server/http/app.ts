import express, { type NextFunction, type Request, type Response } from "express";
import helmet from "helmet";
import { randomBytes } from "node:crypto";
import { createExpressMiddleware } from "@trpc/server/adapters/express";
import type { AppServices } from "../services";
import { appRouter } from "../trpc/router";
import { createHttpContext } from "../trpc/context";
import { openApiDocuments } from "../trpc/openapi";
import { createRestHandler, MAX_BODY_BYTES, sendError } from "./rest";
import { AppError, toPublicError } from "./errors";

/** The API origin: every REST path, /openapi.json|yaml, and the typed tRPC endpoint. */
export function createApiRouter(app: AppServices): express.Router {
  const api = express.Router();
  api.get("/openapi.json", (_req, res) => {
    res.type("application/json").setHeader("Access-Control-Allow-Origin", "*");
    res.send(openApiDocuments(app.config).json);
  });
  api.get("/openapi.yaml", (_req, res) => {
    res.type("application/yaml").setHeader("Access-Control-Allow-Origin", "*");
    res.send(openApiDocuments(app.config).yaml);
  });
  api.use(
    "/trpc",
    express.json({ limit: MAX_BODY_BYTES, strict: false }),
    createExpressMiddleware({
      router: appRouter,
      createContext: createHttpContext(app),
      onError: ({ error }) => {
        if (toPublicError(error).status >= 500) app.log.error({ err: error.cause ?? error }, "trpc request failed");
      },
    }),
  );
  api.use(cors);
  api.use(createRestHandler(app));
  api.use(apiErrorHandler(app));
  return api;
}

/**
 * Scripts on other origins may call the API with a bearer token, so answers allow any origin.
 * Requests carrying the session cookie never get Access-Control-Allow-Origin: a browser on another
 * site cannot read what the signed-in user's cookie fetched (and the cookie is ignored for their writes).
 */
function cors(req: Request, res: Response, next: NextFunction) {
  if (req.headers.cookie) return req.method === "OPTIONS" ? void res.status(204).end() : next();
  res.setHeader("Access-Control-Allow-Origin", "*");
  res.setHeader("Access-Control-Expose-Headers", "RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After");
  if (req.method !== "OPTIONS") return next();
  res.setHeader("Access-Control-Allow-Methods", "GET, POST, PATCH, DELETE");
  res.setHeader("Access-Control-Allow-Headers", "Authorization, Content-Type");
  res.setHeader("Access-Control-Max-Age", "86400");
  res.status(204).end();
}

/** Last resort for the API: never a stack trace, always `{error}`. */
export function apiErrorHandler(app: AppServices) {
  return (err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const e = err as { type?: string; status?: number };
    if (e?.type === "entity.too.large") return sendError(res, new AppError("PAYLOAD_TOO_LARGE"));
    if (e?.type === "entity.parse.failed") return sendError(res, new AppError("VALIDATION_FAILED", { fields: { body: ["must be a JSON object"] } }));
    const pub = toPublicError(err);
    if (pub.status >= 500) app.log.error({ err }, "request failed");
    sendError(res, pub);
  };
}

/** A fresh nonce per response: the dashboard's inline Remix scripts carry it (res.locals.cspNonce). */
const cspNonce = (_req: Request, res: Response, next: NextFunction) => {
  res.locals.cspNonce = randomBytes(16).toString("base64");
  next();
};

export const securityHeaders = () => [
  cspNonce,
  helmet({
    contentSecurityPolicy: {
      directives: {
        "default-src": ["'self'"],
        "script-src": ["'self'", (_req, res) => `'nonce-${(res as Response).locals.cspNonce}'`],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:", "https:", "http:"],
        "connect-src": ["'self'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'"],
        "upgrade-insecure-requests": null,
      },
    },
    // HSTS only means something on https; helmet sends it regardless, so the server strips it on http.
    crossOriginEmbedderPolicy: false,
    // helmet's default "no-referrer" makes Chromium send `Origin: null` on form posts, and Remix
    // refuses actions whose Origin does not match the host: same-origin keeps forms working without
    // JavaScript and still sends no referrer to other sites.
    referrerPolicy: { policy: "same-origin" },
  }),
];
