import type { IncomingHttpHeaders } from "node:http";

/** Shared types of the ground floor: who is calling, and what the transports tell the rules about a request. */

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
