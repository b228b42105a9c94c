import type { IncomingMessage } from "node:http";
import { promisify } from "node:util";
import zlib from "node:zlib";
import type { TRPCError } from "@trpc/server";
import type { NextFunction, Request, Response } from "express";
import { createOpenApiHttpHandler, type OpenApiRouter } from "trpc-openapi";
import { appRouter } from "../routers";
import { BINARY_ANSWERS } from "../routers/qr";
import { restOperations } from "./openapi";
import { createHttpContext } from "../trpc/context";
import type { AppServices } from "../core/services";
import { AppError, toPublicError, type Fields, type PublicError } from "../domain/errors";
import { logFailure } from "../lib/log";
import { setRoute } from "./metrics-routes";

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
 * our documented shapes around it (trpc-openapi's own error body and statuses are fixed,
 * docs/decisions/001-trpc-openapi-behind-one-adapter.md): body parsing with limits, 404/405, `{error, fields}` bodies, 201/204.
 */
export function createRestHandler(app: AppServices) {
  const ops = restOperations().map((o) => ({ ...o, re: pathRegExp(o.path), params: [...o.path.matchAll(/\{(.+?)\}/g)].map((m) => m[1]) }));
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
      if (pub.status >= 500) logFailure(app, error.cause ?? error, "request failed", { path: req.url?.split("?")[0] });
    },
    maxBodySize: MAX_BODY_BYTES,
  });

  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const path = routedPath(req.url);
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
      const op = matching.find((o) => o.method === req.method.toUpperCase());
      if (op) {
        setRoute(res, `${op.method} ${op.path}`);
        refuseShadowedParams(op.params, req.body ?? req.query);
      }
      interceptResponse(req as RestRequest, res, op ? BINARY_ANSWERS[op.procedurePath] !== undefined : false);
      await handler(req, res);
    } catch (e) {
      if (e instanceof AppError) return sendError(res, e);
      next(e);
    }
  };
}

/**
 * A body member or query parameter named like one of the path's parameters (`{"id": …}` sent to
 * PATCH /links/{id}) is no member of the operation: the path's value would silently win over it, so
 * it is refused as any unknown member is.
 */
function refuseShadowedParams(params: readonly string[], input: unknown) {
  if (!params.length || typeof input !== "object" || input === null) return;
  const shadowed = params.filter((p) => Object.hasOwn(input, p));
  if (shadowed.length) throw new AppError("VALIDATION_FAILED", { fields: Object.fromEntries(shadowed.map((p) => [p, [`unknown field ${p}`]])) });
}

/**
 * The path trpc-openapi routes on: the WHATWG-parsed one, where a backslash turns into `/` and dot
 * segments resolve. Matching on the raw path let a request through that it then found nowhere,
 * answered as a 500.
 */
function routedPath(url: string): string {
  try {
    return new URL(url.startsWith("/") ? `http://127.0.0.1${url}` : url).pathname;
  } catch {
    throw new AppError("NOT_FOUND");
  }
}

/** Rewrites what trpc-openapi writes: our error body and status, and 204 without a body. */
function interceptResponse(req: RestRequest, res: Response, binary: boolean) {
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
    if (binary && chunk !== undefined) {
      // A file answer: the procedure's `{content_type, base64}` becomes the bytes themselves.
      const file = JSON.parse(String(chunk)) as { content_type: string; base64: string };
      const bytes = Buffer.from(file.base64, "base64");
      res.setHeader("Content-Type", file.content_type);
      res.setHeader("Content-Length", bytes.length);
      return end(bytes);
    }
    return end(chunk);
  };
}

/** Content-Encodings a body may arrive in (the ones body-parser knows); anything else is a 400. */
const DECODERS = new Map<string, (buf: Buffer, opts: zlib.ZlibOptions) => Promise<Buffer>>([
  ["gzip", promisify(zlib.gunzip)],
  ["x-gzip", promisify(zlib.gunzip)],
  ["deflate", promisify(zlib.inflate)],
]);

const bodyError = (message: string) => new AppError("VALIDATION_FAILED", { fields: { body: [message] } });

/**
 * Reads a JSON body whatever its Content-Type says (trpc-openapi would silently drop
 * `application/json; charset=utf-8`): UTF-8 only, identity, gzip or deflate, at most MAX_BODY_BYTES
 * before and after decoding. Empty: undefined. Another charset or encoding, or not JSON: 400
 * VALIDATION_FAILED naming `body`, as for any body that is not JSON. A member `__proto__` anywhere: 400 (later copies would make it the prototype).
 * `batch`: the top-level members are tRPC batch indexes, not input names.
 */
export async function readJson(req: IncomingMessage, opts: { batch?: boolean } = {}): Promise<unknown> {
  const encodings = String(req.headers["content-encoding"] ?? "")
    .toLowerCase()
    .split(",")
    .map((e) => e.trim())
    .filter((e) => e && e !== "identity");
  const decode = encodings.length ? DECODERS.get(encodings[0]) : undefined;
  if (encodings.length > 1 || (encodings.length && !decode))
    throw bodyError(`cannot be read in Content-Encoding ${encodings.join(", ")}: send it as is, gzip or deflate`);
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(String(req.headers["content-type"] ?? ""))?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") throw bodyError(`must be UTF-8 JSON, not charset ${charset}`);

  const declared = Number(req.headers["content-length"]);
  if (declared > MAX_BODY_BYTES) throw new AppError("PAYLOAD_TOO_LARGE");
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new AppError("PAYLOAD_TOO_LARGE");
    chunks.push(chunk);
  }
  let raw: Buffer = Buffer.concat(chunks);
  if (raw.length && decode) {
    try {
      raw = await decode(raw, { maxOutputLength: MAX_BODY_BYTES });
    } catch (e) {
      if ((e as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") throw new AppError("PAYLOAD_TOO_LARGE");
      throw bodyError(`is not valid ${encodings[0]} data (Content-Encoding)`);
    }
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(raw).trim();
  } catch {
    throw bodyError("must be UTF-8 text");
  }
  if (!text) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw bodyError("must be a JSON object");
  }
  const fields = protoMembers(value, opts.batch === true);
  if (fields) throw new AppError("VALIDATION_FAILED", { fields });
  return value;
}

/**
 * Every member named `__proto__` (JSON.parse keeps it as an own property; Object.assign and
 * `obj[key] = v` copies turn it into the prototype), reported like zod's unknown keys. Iterative:
 * a 64 KiB body can nest thousands of levels deep.
 */
function protoMembers(value: unknown, batch: boolean): Fields | undefined {
  type Node = { value: unknown; key: string; parent?: Node };
  let fields: Fields | undefined;
  const stack: Node[] = [{ value, key: "" }];
  while (stack.length) {
    const node = stack.pop()!;
    const v = node.value;
    if (typeof v !== "object" || v === null) continue;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push({ value: v[i], key: String(i), parent: node });
      continue;
    }
    for (const key of Object.keys(v)) {
      if (key !== "__proto__") {
        stack.push({ value: (v as Record<string, unknown>)[key], key, parent: node });
        continue;
      }
      const path = ["__proto__"];
      for (let n: Node | undefined = node; n?.parent; n = n.parent) path.unshift(n.key);
      if (batch && path.length > 1) path.shift();
      const name = path[0];
      fields ??= {};
      // defineProperty: a plain assignment of `__proto__` would not create the member.
      if (!Object.hasOwn(fields, name)) Object.defineProperty(fields, name, { value: [], enumerable: true, writable: true, configurable: true });
      fields[name].push(`unknown field ${path.join(".")}`);
    }
  }
  return fields;
}

/** True when the request carries a body (a length above 0, or chunks). */
const hasBody = (req: IncomingMessage) => req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;

/**
 * The REST body: a JSON object or nothing. A body declared as anything but `application/json` (or
 * as nothing) is refused as not JSON (400 naming `body`, stored nothing): a form or `text/plain`
 * post is one a browser sends from any site without a preflight, and JSON needs one. No body at all
 * needs no type (DELETE, POST /domains/{id}/verify).
 */
async function readJsonBody(req: Request): Promise<Record<string, unknown> | undefined> {
  const type = String(req.headers["content-type"] ?? "")
    .split(";")[0]
    .trim()
    .toLowerCase();
  if (hasBody(req) && type !== "application/json") throw bodyError(`must be JSON sent as Content-Type: application/json${type ? `, not ${type}` : ""}`);
  const value = await readJson(req);
  if (value === undefined) return undefined;
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw bodyError("must be a JSON object");
  return value as Record<string, unknown>;
}

/**
 * The /trpc endpoint's body, read like REST's (express.json answered 500 to another charset or
 * encoding, and kept `__proto__`). Marks the body parsed, so express.json after it stands aside.
 */
export function trpcBodyParser() {
  return (req: Request, res: Response, next: NextFunction) => {
    const r = req as Request & { _body?: boolean; body?: unknown };
    if (req.method === "GET" || req.method === "HEAD") {
      // Queries carry their input in the URL; a body there is ignored, as on REST.
      r._body = true;
      r.body = undefined;
      return next();
    }
    readJson(req, { batch: /[?&]batch=/.test(req.url) }).then(
      (body) => {
        r._body = true;
        r.body = body ?? {}; // what express.json gave for an empty body
        // tRPC re-parses string bodies unless told they are JSON: the body is JSON whatever was declared.
        req.headers["content-type"] = "application/json";
        next();
      },
      (e) => (e instanceof AppError ? sendError(res, e) : next(e)),
    );
  };
}

/**
 * Query parameters as plain strings, each wrapped in an array: trpc-openapi takes an array's first
 * element but silently drops an empty string (`?from=` must be a 400, not "absent"), and Express's
 * `qs` parser would turn `a[b]=c` into objects. A bracketed (`link_id[]=`) or repeated parameter
 * would otherwise be dropped or cut to its first value silently: 400 naming it.
 */
function plainQuery(url: string): Record<string, string[]> {
  const q = url.indexOf("?");
  const out: Record<string, string[]> = Object.create(null);
  if (q < 0) return out;
  const fields: Fields = Object.create(null);
  const fail = (name: string, message: string) => {
    const list = (fields[name] ??= []);
    if (!list.includes(message)) list.push(message);
  };
  for (const [k, v] of new URLSearchParams(url.slice(q + 1))) {
    const bracket = k.indexOf("[");
    if (bracket > 0) fail(k.slice(0, bracket), `must be given once as ${k.slice(0, bracket)}=value, not ${k}`);
    else if (out[k]) fail(k, "must be given once");
    // No parameter is called that, and trpc-openapi's Object.assign would make it the prototype.
    else if (k === "__proto__") fail(k, "unknown field __proto__");
    else out[k] = [v];
  }
  if (Object.keys(fields).length) throw new AppError("VALIDATION_FAILED", { fields: { ...fields } });
  return out;
}
