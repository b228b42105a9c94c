import type { IncomingHttpHeaders } from "node:http";
import type { AppServices } from "../services";
import { resolveAuth, type AuthResult } from "../lib/auth";

export type Actor = {
  via: "token" | "session";
  userId: string;
  workspaceId: string;
  plan: "free" | "pro";
  isAdmin: boolean;
  /** Set when `via` is "token". */
  tokenId?: string;
  /** Set when `via` is "session": the full lucia session id. */
  sessionId?: string;
};

/** What the transports tell the routers about the request; nothing framework-specific. */
export type RequestInfo = {
  method: string;
  headers: IncomingHttpHeaders;
  /** Client address, already resolved with TRUST_PROXY. */
  ip: string;
};

/** Where procedures put response headers (rate-limit headers, cookies). */
export type ResponseSink = {
  setHeader(name: string, value: string): void;
  appendHeader(name: string, value: string): void;
};

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
  return ({ req, res }: { req: import("express").Request; res: import("express").Response }) =>
    createContextInner(app, { method: req.method, headers: req.headers, ip: req.ip ?? req.socket.remoteAddress ?? "" }, {
      setHeader: (n, v) => {
        if (!res.headersSent) res.setHeader(n, v);
      },
      appendHeader: (n, v) => {
        if (!res.headersSent) res.appendHeader(n, v);
      },
    });
}
