import type { IncomingMessage } from "node:http";
import type { TRPCError } from "@trpc/server";
import type { NextFunction, Request, Response } from "express";
import { createOpenApiHttpHandler, type OpenApiRouter } from "trpc-openapi";
import { appRouter } from "../trpc/router";
import { restOperations } from "../trpc/openapi";
import { createHttpContext } from "../trpc/context";
import type { AppServices } from "../services";
import { AppError, toPublicError, type PublicError } from "./errors";

export const MAX_BODY_BYTES = 64 * 1024;

type RestRequest = Request & { publicError?: PublicError };

/** Path template → regex, the way trpc-openapi matches them. */
const pathRegExp = (path: string) => new RegExp(`^${path.replace(/\{(.+?)\}/g, "[^/]+")}/?$`, "i");

export function sendError(res: Response, e: PublicError | AppError) {
  const pub = e instanceof AppError ? toPublicError(e) : e;
  if (res.headersSent) return void res.end();
  res.status(pub.status);
  for (const [k, v] of Object.entries(pub.headers ?? {})) res.setHeader(k, v);
  res.setHeader("Content-Type", "application/json");
  res.setHeader("Cache-Control", "no-store");
  res.end(JSON.stringify(pub.body));
}

/**
 * The REST transport: trpc-openapi routes the request to the procedure; this layer puts
 * service.md's shapes around it (trpc-openapi's own error body and statuses are fixed,
 * stack notes): body parsing with limits, 404/405, `{error, fields}` bodies, 201/204.
 */
export function createRestHandler(app: AppServices) {
  const ops = restOperations().map((o) => ({ ...o, re: pathRegExp(o.path) }));
  const successStatus = new Map(ops.map((o) => [o.procedurePath, o.meta.successStatus ?? 200]));

  const handler = createOpenApiHttpHandler({
    router: appRouter as unknown as OpenApiRouter,
    createContext: createHttpContext(app) as never,
    responseMeta: ({ paths, errors }: { paths?: string[]; errors: unknown[] }) => {
      if (errors.length) return {};
      return { status: successStatus.get(paths?.[0] ?? "") ?? 200 };
    },
    onError: ({ error, req }: { error: TRPCError; req: IncomingMessage }) => {
      const pub = toPublicError(error);
      (req as RestRequest).publicError = pub;
      if (pub.status >= 500) app.log.error({ err: error.cause ?? error, path: req.url }, "request failed");
    },
    maxBodySize: MAX_BODY_BYTES,
  });

  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const path = req.path;
      const method = req.method.toUpperCase();
      const matching = ops.filter((o) => o.re.test(path));
      if (!matching.length) throw new AppError("NOT_FOUND");
      if (!matching.some((o) => o.method === method || (method === "HEAD" && o.method === "GET"))) {
        res.setHeader("Allow", [...new Set(matching.map((o) => o.method))].join(", "));
        throw new AppError("METHOD_NOT_ALLOWED");
      }
      if (method === "HEAD") req.method = "GET";
      if (method === "POST" || method === "PATCH" || method === "PUT") (req as Request & { body: unknown }).body = await readJsonBody(req);
      else {
        (req as Request & { body: unknown }).body = undefined;
        (req as { query: unknown }).query = plainQuery(req.originalUrl ?? req.url);
      }
      interceptResponse(req as RestRequest, res);
      await handler(req, res);
    } catch (e) {
      if (e instanceof AppError) return sendError(res, e);
      next(e);
    }
  };
}

/** Rewrites what trpc-openapi writes: our error body and status, and 204 without a body. */
function interceptResponse(req: RestRequest, res: Response) {
  const end = res.end.bind(res) as (chunk?: unknown) => Response;
  res.setHeader("Cache-Control", "no-store");
  (res as unknown as { end: (chunk?: unknown) => Response }).end = (chunk?: unknown) => {
    const pub = req.publicError;
    if (pub) {
      res.statusCode = pub.status;
      for (const [k, v] of Object.entries(pub.headers ?? {})) res.setHeader(k, v);
      res.setHeader("Content-Type", "application/json");
      return end(JSON.stringify(pub.body));
    }
    if (res.statusCode === 204) {
      res.removeHeader("Content-Type");
      return end();
    }
    return end(chunk);
  };
}

/**
 * Reads the body whatever its Content-Type says (trpc-openapi would silently drop
 * `application/json; charset=utf-8`). Empty: undefined. Not JSON or not an object: 400.
 */
async function readJsonBody(req: Request): Promise<Record<string, unknown> | undefined> {
  const declared = Number(req.headers["content-length"]);
  if (declared > MAX_BODY_BYTES) throw new AppError("PAYLOAD_TOO_LARGE");
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new AppError("PAYLOAD_TOO_LARGE");
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8").trim();
  if (!text) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AppError("VALIDATION_FAILED", { fields: { body: ["must be a JSON object"] } });
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new AppError("VALIDATION_FAILED", { fields: { body: ["must be a JSON object"] } });
  }
  return value as Record<string, unknown>;
}

/**
 * Query parameters as plain strings, each wrapped in an array: trpc-openapi takes an array's first
 * element but silently drops an empty string (`?from=` must be a 400, not "absent"), and Express's
 * `qs` parser would turn `a[b]=c` into objects.
 */
function plainQuery(url: string): Record<string, string[]> {
  const q = url.indexOf("?");
  const out: Record<string, string[]> = Object.create(null);
  if (q < 0) return out;
  for (const [k, v] of new URLSearchParams(url.slice(q + 1))) (out[k] ??= []).push(v);
  return out;
}
