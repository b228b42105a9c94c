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
