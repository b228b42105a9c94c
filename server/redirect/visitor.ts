import type { IncomingMessage } from "node:http";
import proxyaddr from "proxy-addr";
import { readEdgeHeaders, type EdgeInfo } from "../lib/edge";
import { parseUserAgent, type ParsedAgent } from "../lib/user-agent";
import type { Config } from "../config";

/** The visitor as the request path sees it: only what the answer may need, cheaply. */
export type RequestVisitor = {
  userAgent: string;
  agent: ParsedAgent;
  /** Trusted edge facts (null with EDGE_HEADERS=none). */
  edge: EdgeInfo | null;
  /** iOS/iPadOS or Android: the edge's word first (iPadOS reports a Mac user agent), then the UA. */
  os: "ios" | "android" | null;
  ip: string;
  referer: string | null;
};

/** Express's compiled `trust proxy fn`, so the fast path resolves the address exactly like `req.ip`. */
export type TrustFn = (addr: string, i: number) => boolean;

/** Marker for "trust no proxy" (TRUST_PROXY=false). */
export const NO_TRUST: TrustFn = () => false;

const header = (req: IncomingMessage, name: string) => {
  const v = req.headers[name];
  return (Array.isArray(v) ? v[0] : v) ?? "";
};

/** Reads the visitor from a request: memoised UA parse and (when trusted) the edge headers. */
export function readVisitor(req: IncomingMessage, config: Pick<Config, "edgeHeaders">, trust: TrustFn): RequestVisitor {
  const userAgent = header(req, "user-agent");
  const agent = parseUserAgent(userAgent);
  const edge = config.edgeHeaders === "none" ? null : readEdgeHeaders(req.headers, config.edgeHeaders);
  const referer = header(req, "referer") || header(req, "referrer");
  return {
    userAgent,
    agent,
    edge,
    os: edge?.os ?? agent.os,
    // Without a trusted proxy the address is the socket's; skip parsing X-Forwarded-For.
    ip: trust === NO_TRUST ? (req.socket.remoteAddress ?? "") : proxyaddr(req, trust),
    referer: referer ? referer.slice(0, 2048) : null,
  };
}
