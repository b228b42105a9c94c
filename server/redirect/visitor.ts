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
  /** The raw query string of the visit, without `?` ("" when none). */
  query: string;
  /** `qr` when the visit came through the link's QR code (`?qr=1`), else `link`. */
  trigger: "link" | "qr";
  /** The raw Accept-Language header (parsed only for links with language rules: see languagesOf). */
  acceptLanguage: string;
};

/** Express's compiled `trust proxy fn`, so the fast path resolves the address exactly like `req.ip`. */
export type TrustFn = (addr: string, i: number) => boolean;

/** Marker for "trust no proxy" (TRUST_PROXY=false). */
export const NO_TRUST: TrustFn = () => false;

const header = (req: IncomingMessage, name: string) => {
  const v = req.headers[name];
  return (Array.isArray(v) ? v[0] : v) ?? "";
};

/** `?qr=1` anywhere in the query marks a visit through the link's QR code. */
const QR_MARK = /(?:^|&)qr=1(?:&|$)/;

/** The query string of a request URL, without `?` (and without a fragment, should a client send one). */
export function queryOf(url: string | undefined): string {
  const at = url ? url.indexOf("?") : -1;
  if (at < 0) return "";
  const q = url!.slice(at + 1);
  const hash = q.indexOf("#");
  return hash < 0 ? q : q.slice(0, hash);
}

const LANGUAGE_RANGE = /^([a-z]{1,8})(?:[-_][a-z0-9]{1,8})*$/;

/**
 * Primary language subtags of an Accept-Language header, most preferred first: by q-value, ties in
 * the header's order; `*`, q=0 and malformed entries are left out, a subtag only once.
 */
export function languagesOf(header: string): readonly string[] {
  if (!header) return [];
  // Browsers send a handful of distinct headers: each is parsed once (a bounded memo, dropped when full).
  let known = parsedLanguages.get(header);
  if (!known) {
    if (parsedLanguages.size >= 512) parsedLanguages.clear();
    parsedLanguages.set(header, (known = Object.freeze(parseLanguages(header))));
  }
  return known;
}

const parsedLanguages = new Map<string, readonly string[]>();

function parseLanguages(header: string): string[] {
  const ranked: { lang: string; q: number; i: number }[] = [];
  const parts = header.slice(0, 1024).split(",");
  for (let i = 0; i < parts.length && i < 50; i++) {
    const [range, ...params] = parts[i].split(";");
    const m = LANGUAGE_RANGE.exec(range.trim().toLowerCase());
    if (!m) continue;
    let q = 1;
    for (const p of params) {
      const [k, v] = p.split("=").map((x) => x.trim());
      if (k.toLowerCase() === "q") q = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(v ?? "") ? Number(v) : 0;
    }
    if (q > 0) ranked.push({ lang: m[1], q, i });
  }
  ranked.sort((a, b) => b.q - a.q || a.i - b.i);
  return [...new Set(ranked.map((r) => r.lang))];
}

/** Reads the visitor from a request: memoised UA parse and (when trusted) the edge headers. */
export function readVisitor(req: IncomingMessage, config: Pick<Config, "edgeHeaders">, trust: TrustFn): RequestVisitor {
  const userAgent = header(req, "user-agent");
  const agent = parseUserAgent(userAgent);
  const edge = config.edgeHeaders === "none" ? null : readEdgeHeaders(req.headers, config.edgeHeaders);
  const referer = header(req, "referer") || header(req, "referrer");
  const query = queryOf(req.url);
  return {
    userAgent,
    agent,
    edge,
    os: edge?.os ?? agent.os,
    // Without a trusted proxy the address is the socket's; skip parsing X-Forwarded-For.
    ip: trust === NO_TRUST ? (req.socket.remoteAddress ?? "") : proxyaddr(req, trust),
    referer: referer ? referer.slice(0, 2048) : null,
    query,
    trigger: query && QR_MARK.test(query) ? "qr" : "link",
    acceptLanguage: header(req, "accept-language"),
  };
}
