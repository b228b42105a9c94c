import type { IncomingHttpHeaders } from "node:http";
import { Counter, Gauge, Registry, collectDefaultMetrics } from "prom-client";

/** The internal counters, exposed at `/_/metrics` in Prometheus format. */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    redirects: new Counter({ name: "redirects_total", help: "Redirect-host answers by outcome", labelNames: ["outcome"], registers: [registry] }),
    clicksWritten: new Counter({ name: "clicks_written_total", help: "Click events written to the database", registers: [registry] }),
    clicksBuffered: new Gauge({ name: "clicks_buffered", help: "Click events waiting to be written", registers: [registry] }),
    rateLimited: new Counter({ name: "rate_limit_rejections_total", help: "Requests refused by a rate limit", labelNames: ["limit"], registers: [registry] }),
    reports: new Counter({ name: "reports_received_total", help: "Abuse reports stored", registers: [registry] }),
  };
}
export type Metrics = ReturnType<typeof createMetrics>;

/**
 * Headers by which a proxy passes on who its client is. Metrics answer only a scrape made on this
 * machine: a loopback socket alone is not one, since a proxy on the same machine (Caddy, nginx)
 * connects from loopback on behalf of anyone. Whatever the header says, its presence is the sign.
 */
const FORWARDING_HEADER = /^(forwarded|via|x-real-ip|x-forwarded-.+|x-client-ip|true-client-ip|cf-connecting-ip|fastly-client-ip|x-cluster-client-ip)$/;

/** True for a request from the loopback socket that no proxy forwarded. */
export function isLocalScrape(remoteAddress: string | undefined, headers: IncomingHttpHeaders): boolean {
  if (!/^(::ffff:)?127\.|^::1$/.test(remoteAddress ?? "")) return false;
  return !Object.keys(headers).some((name) => FORWARDING_HEADER.test(name));
}
