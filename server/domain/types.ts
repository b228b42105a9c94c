import type { IncomingHttpHeaders } from "node:http";

/** Shared types of the ground floor: who is calling, and what the transports tell the rules about a request. */

/** A member's role in a workspace: owners administer it, members read and write, viewers only read. */
export type Role = "owner" | "member" | "viewer";

export type Actor = {
  via: "token" | "session";
  userId: string;
  /**
   * The workspace the request acts in, checked against memberships on every request: the token's
   * bound workspace, or the session's current one (the user's personal workspace when none is set
   * or the user is no longer a member of it). Every service scopes by it.
   */
  workspaceId: string;
  /** The caller's role in `workspaceId`, when resolved from a credential. */
  role?: Role;
  plan: "free" | "pro";
  isAdmin: boolean;
  /** Set when `via` is "token". */
  tokenId?: string;
  /** Set when `via` is "token": what the token may do (every scope for a token made without a list). */
  scopes?: readonly string[];
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

/**
 * The HTTP exchange a call came through, for the few services that read the browser's cookies or
 * set them (sign-in, sessions): the request's facts and where its answer's headers go. Every door
 * (REST, /trpc, the dashboard's caller) has one; the tRPC context is one.
 */
export type Exchange = { req: RequestInfo; res: ResponseSink };
