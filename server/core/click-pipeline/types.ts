import type { EdgeInfo, Place } from "../../lib/edge";
import type { GeoInfo } from "../../lib/geo";
import { clickTs } from "../../lib/ids";
import type { Segment } from "./spool";

import type { Rule } from "../../domain/redirect-decision";

export type { Rule };

/** Which trusted edge network's viewer headers are read ("none": GeoIP by address instead). */
export type EdgeMode = "none" | "cloudfront" | "cloudflare";

/** A counted visit, as stored (ClickEvent plus `rule`). */
export type ClickRecord = Place & {
  linkId: string;
  workspaceId: string;
  ts: string;
  timestamp: number;
  device: "mobile" | "tablet" | "smarttv" | "desktop";
  platform: string | null;
  browser: string | null;
  referer: string | null;
  rule: Rule;
  /** A/B variant index (from 0) that chose the destination; absent or null: none. */
  variant?: number | null;
  /** `qr` for a visit through the link's QR code; absent: `link`. */
  trigger?: "link" | "qr";
  /** Unique-visitor key of the click's day (see visitor-keys.ts); null when unknown. */
  visitor?: string | null;
};

/**
 * A counted visit as the request path knows it: raw facts only. User-Agent details and the
 * GeoIP lookup are worked out by the batch writer, off the request path.
 */
export type Visit = {
  linkId: string;
  workspaceId: string;
  timestamp: number;
  userAgent: string;
  ip: string;
  referer: string | null;
  rule: Rule;
  /** A/B variant index (from 0) that chose the destination; absent or null: none. */
  variant?: number | null;
  /** `qr` for a visit through the link's QR code; absent: `link`. */
  trigger?: "link" | "qr";
  /** The trusted edge network's viewer facts; null with EDGE_HEADERS=none. */
  edge: EdgeInfo | null;
  /** Already looked up on the request path (a geo-targeted link needed the country). */
  geo?: GeoInfo;
  /** The visitor key of the visit's day, when the request path already worked it out (an A/B variant was chosen by it). */
  visitor?: string;
};

/** `seg`: the write-ahead spool segment holding it (never serialized: it is this process's). */
export type Pending = ({ kind: "click"; click: ClickRecord } | { kind: "visit"; visit: Visit; ts?: string }) & { seg?: Segment | null };

/** Gives a visit its `ts` once, so a retried or re-read write inserts the same key (no duplicates). */
export const fixTs = (p: Pending): Pending => {
  if (p.kind === "visit" && !p.ts) p.ts = clickTs(p.visit.timestamp);
  return p;
};

/** A pending click as a spool line or spill file entry: without its (in-process) segment. */
export const serializable = (p: Pending) => (p.kind === "visit" ? { kind: p.kind, visit: p.visit, ts: p.ts } : { kind: p.kind, click: p.click });

/** How many clicks of each spool segment a batch holds. */
export function segmentsOf(batch: Pending[]): Map<Segment, number> {
  const m = new Map<Segment, number>();
  for (const p of batch) if (p.seg) m.set(p.seg, (m.get(p.seg) ?? 0) + 1);
  return m;
}

/**
 * What a log line may say about a failed database or file write: the driver's code and message.
 * Drizzle's own error repeats the query and every parameter (a click batch: addresses, user
 * agents, referers), so its message and fields are never logged.
 */
export function logSafeError(e: unknown): { code?: string; error: string } {
  let cur = e;
  for (let i = 0; i < 5 && cur instanceof Error && cur.cause !== undefined; i++) cur = cur.cause;
  const c = cur as { code?: unknown; message?: unknown; params?: unknown } | null;
  const code = typeof c?.code === "string" ? c.code : undefined;
  const message = c && typeof c === "object" && !("params" in c) && typeof c.message === "string" ? c.message.slice(0, 200) : "query failed";
  return code ? { code, error: message } : { error: message };
}
