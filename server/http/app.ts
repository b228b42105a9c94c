import express, { type NextFunction, type Request, type Response } from "express";
import helmet, { type HelmetOptions } from "helmet";
import type { IncomingMessage, ServerResponse } from "node:http";
import { randomBytes } from "node:crypto";
import { Readable, Transform } from "node:stream";
import { createExpressMiddleware } from "@trpc/server/adapters/express";
import type { AppServices } from "../core/services";
import { appRouter } from "../routers";
import { createHttpContext } from "../trpc/context";
import { openApiDocuments } from "./openapi";
import { createRestHandler, MAX_BODY_BYTES, sendError } from "./rest";
import { AppError, toPublicError } from "../domain/errors";
import { AVATAR_MAX_BYTES } from "../lib/avatars";
import { IMPORT_MAX_BYTES } from "../routers/imports/csv-file";
import { logFailure } from "../lib/log";

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
  // They are known paths: another method is a wrong method, not an unknown path (a preflight goes on to cors).
  api.all(["/openapi.json", "/openapi.yaml"], (req, res, next) => {
    if (req.method === "OPTIONS") return next();
    res.setHeader("Allow", "GET");
    sendError(res, new AppError("METHOD_NOT_ALLOWED"));
  });
  api.use(
    "/trpc",
    express.json({ limit: MAX_BODY_BYTES, strict: false }),
    createExpressMiddleware({
      router: appRouter,
      createContext: createHttpContext(app),
      onError: ({ error }) => {
        if (toPublicError(error).status >= 500) logFailure(app, error.cause ?? error, "trpc request failed");
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
    if (pub.status >= 500) logFailure(app, err, "request failed");
    sendError(res, pub);
  };
}

/** Every body the dashboard reads: its forms are small (the longest field is 2,000 characters). */
export const FORM_MAX_BYTES = MAX_BODY_BYTES;
/** The avatar uploads (multipart POST /settings, and /linktrees/{id} for a page's): the 2 MB image plus room for the form around it. */
export const AVATAR_FORM_MAX_BYTES = AVATAR_MAX_BYTES + FORM_MAX_BYTES;
const AVATAR_FORM_PATH = /^\/(settings|linktrees\/[^/]+?)(\.data)?\/?$/;
/** The CSV import upload (multipart POST /links/import): the file (IMPORT_MAX_BYTES, 20 MB) plus room for the form around it. */
export const IMPORT_FORM_MAX_BYTES = IMPORT_MAX_BYTES + FORM_MAX_BYTES;
const IMPORT_FORM_PATH = /^\/links\/import(\.data)?\/?$/;
const FORM_TYPES = new Set(["application/x-www-form-urlencoded", "multipart/form-data"]);

/** The body read by `formBodies`, for the Remix handler (undefined: none). */
export type FormBodyRequest = Request & { formBody?: Buffer<ArrayBuffer>; formStream?: ReadableStream<Uint8Array>; avatarTooLarge?: boolean };

/**
 * Bounds every body that reaches Remix, before any action reads it (request.formData() reads all
 * of it into memory): only HTML form types (else 415), at most FORM_MAX_BYTES (AVATAR_FORM_MAX_BYTES
 * for the avatar upload) by Content-Length or by counting a chunked body (else 413, stopping at
 * the limit; IMPORT_FORM_MAX_BYTES for the CSV import upload), and a multipart body must parse
 * (else 400). The body is kept in `req.formBody`.
 */
export function formBodies() {
  return (req: FormBodyRequest, res: Response, next: NextFunction) => {
    if (req.method === "GET" || req.method === "HEAD") return next();
    const declared = req.headers["content-length"];
    if (req.headers["transfer-encoding"] === undefined && (declared === undefined || Number(declared) === 0)) return next();
    const contentType = req.headers["content-type"] ?? "";
    const type = contentType.split(";")[0].trim().toLowerCase();
    if (!FORM_TYPES.has(type)) return refuseBody(req, res, new AppError("UNSUPPORTED_MEDIA_TYPE"));
    const multipart = type === "multipart/form-data";
    const limit =
      multipart && AVATAR_FORM_PATH.test(req.path)
        ? AVATAR_FORM_MAX_BYTES
        : multipart && IMPORT_FORM_PATH.test(req.path)
          ? IMPORT_FORM_MAX_BYTES
          : FORM_MAX_BYTES;
    if (Number(declared) > limit) {
      // An avatar too large is its form's error, said on its page as the smaller ones over 2 MB are
      // (dashboardUploads): the file is not read, and the socket closes after the answer.
      if (multipart && limit === AVATAR_FORM_MAX_BYTES) {
        req.resume();
        res.setHeader("Connection", "close");
        req.avatarTooLarge = true;
        return next();
      }
      return refuseBody(req, res, new AppError("PAYLOAD_TOO_LARGE"));
    }
    if (multipart && limit === IMPORT_FORM_MAX_BYTES) {
      // The CSV upload goes to disk as it arrives (its action streams it into a file): counted, never held in memory.
      req.formStream = boundedStream(req, limit);
      return next();
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      req.off("data", onData).off("end", onEnd);
      chunks.length = 0;
      refuseBody(req, res, new AppError("PAYLOAD_TOO_LARGE"));
    };
    const onEnd = async () => {
      const body = Buffer.concat(chunks, size);
      if (type === "multipart/form-data") {
        try {
          await new globalThis.Response(body, { headers: { "content-type": contentType } }).formData();
        } catch {
          return sendError(res, new AppError("VALIDATION_FAILED", { fields: { body: ["must be a well-formed multipart/form-data body"] } }));
        }
      }
      req.formBody = body;
      next();
    };
    req.on("data", onData).on("end", onEnd);
  };
}

/** The request body as a web stream that fails once more than `limit` bytes arrive. */
function boundedStream(req: Request, limit: number): ReadableStream<Uint8Array> {
  let size = 0;
  const counted = req.pipe(
    new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        done(size > limit ? new AppError("PAYLOAD_TOO_LARGE") : null, chunk);
      },
    }),
  );
  return Readable.toWeb(counted) as ReadableStream<Uint8Array>;
}

/**
 * Answers at once, discarding what arrives meanwhile; `Connection: close` makes Node close the
 * socket once the answer is out, so the rest of the body is never read.
 */
function refuseBody(req: Request, res: Response, e: AppError) {
  req.resume();
  res.setHeader("Connection", "close");
  sendError(res, e);
}

/** A fresh nonce per response: the dashboard's inline Remix scripts carry it (res.locals.cspNonce). */
const cspNonce = (_req: Request, res: Response, next: NextFunction) => {
  res.locals.cspNonce = randomBytes(16).toString("base64");
  next();
};

const helmetOptions = (scriptSrc: ScriptSource[]): HelmetOptions => ({
  contentSecurityPolicy: {
    directives: {
      "default-src": ["'self'"],
      "script-src": scriptSrc,
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
});
type ScriptSource = string | ((req: IncomingMessage, res: ServerResponse) => string);

export const securityHeaders = () => [cspNonce, helmet(helmetOptions(["'self'", (_req, res) => `'nonce-${(res as Response).locals.cspNonce}'`]))];

/**
 * The API's security headers: helmet's, less the script nonce (an API answer runs no script), worked
 * out once and set on every answer; HSTS only when the API's URL is https. Running helmet and drawing
 * a nonce for each answer cost about a tenth of a link creation's time.
 */
export function apiSecurityHeaders(https: boolean) {
  const headers: [string, string][] = [];
  const capture = {
    setHeader: (name: string, value: unknown) => void headers.push([name, String(value)]),
    removeHeader: () => {},
    getHeader: () => undefined,
  };
  helmet(helmetOptions(["'self'"]))({} as never, capture as never, () => {});
  const fixed = headers.filter(([name]) => https || name.toLowerCase() !== "strict-transport-security");
  return (_req: Request, res: Response, next: NextFunction) => {
    res.removeHeader("X-Powered-By");
    for (const [name, value] of fixed) res.setHeader(name, value);
    next();
  };
}
