import type { Request, Response } from "express";
import type { AppServices } from "../core/services";
import { resolveAuth, type AuthResult } from "../core/auth";
import type { Actor, RequestInfo, ResponseSink } from "../domain/types";

export type { Actor, RequestInfo, ResponseSink };

export type Context = {
  app: AppServices;
  req: RequestInfo;
  res: ResponseSink;
  /** Resolves the credential once per request (lazy: public procedures never pay for it). */
  auth(): Promise<AuthResult>;
};

/** A context without an HTTP framework: tests, the CLI and Remix loaders build one directly. */
export function createContextInner(app: AppServices, req?: Partial<RequestInfo>, res?: ResponseSink): Context {
  const request: RequestInfo = { method: req?.method ?? "GET", headers: req?.headers ?? {}, ip: req?.ip ?? "127.0.0.1" };
  const sink: ResponseSink = res ?? { setHeader() {}, appendHeader() {} };
  let memo: Promise<AuthResult> | undefined;
  return {
    app,
    req: request,
    res: sink,
    auth: () => (memo ??= resolveAuth(app, request, sink)),
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
    );
}
