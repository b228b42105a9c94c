import type { Request, Response } from "express";
import type { Db } from "../../db/client";
import type { AppServices } from "../core/services";
import { resolveAuth, type AuthResult } from "../core/auth";
import type { Actor, Exchange, RequestInfo, ResponseSink } from "../domain/types";

export type { Actor, Exchange, RequestInfo, ResponseSink };

export type Context = {
  app: AppServices;
  req: RequestInfo;
  res: ResponseSink;
  /** Resolves the credential once per request (lazy: public procedures never pay for it). */
  auth(): Promise<AuthResult>;
  /**
   * A read of the caller's workspace that may go to the read replica (analytics, listings); it
   * goes to the primary while the caller's own write is not replayed there (core/read-routing.ts).
   */
  read<T>(fn: (db: Db) => Promise<T>): Promise<T>;
};

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * A context without an HTTP framework: tests, the CLI and Remix loaders build one directly.
 * `whenAnswered` reports when the response is done (HTTP), which ends the read-your-writes
 * `pending` mark of a write; without it the mark lasts until it expires (reads then stay on the primary).
 */
export function createContextInner(app: AppServices, req?: Partial<RequestInfo>, res?: ResponseSink, whenAnswered?: (done: () => void) => void): Context {
  const request: RequestInfo = { method: req?.method ?? "GET", headers: req?.headers ?? {}, ip: req?.ip ?? "127.0.0.1" };
  const sink: ResponseSink = res ?? { setHeader() {}, appendHeader() {} };
  let memo: Promise<AuthResult> | undefined;
  const auth = () =>
    (memo ??= resolveAuth(app, request, sink).then(async (result) => {
      // Any authenticated request that may write marks its workspace before the write runs.
      if (result.actor && !SAFE_METHODS.has(request.method.toUpperCase())) whenAnswered?.(await app.reads.writeStarted(result.actor.workspaceId));
      return result;
    }));
  return {
    app,
    req: request,
    res: sink,
    auth,
    read: async (fn) => app.reads.run((await auth()).actor?.workspaceId ?? null, fn),
  };
}

/** Adapter for Express / node:http (REST via trpc-openapi and the /trpc endpoint). */
export function createHttpContext(app: AppServices) {
  return ({ req, res }: { req: Request; res: Response }) =>
    createContextInner(
      app,
      { method: req.method, headers: req.headers, ip: req.ip ?? req.socket.remoteAddress ?? "" },
      {
        setHeader: (n, v) => {
          if (!res.headersSent) res.setHeader(n, v);
        },
        appendHeader: (n, v) => {
          if (!res.headersSent) res.appendHeader(n, v);
        },
      },
      (done) => res.once("close", done),
    );
}
