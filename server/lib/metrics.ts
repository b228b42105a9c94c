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
    requestDurations: new DurationHistogram(
      registry,
      "http_request_duration_seconds",
      "Time from a request's arrival to its answer's last byte, by origin and route",
    ),
    redisFallback: new Gauge({
      name: "rate_limit_redis_fallback",
      help: "1 while Redis is configured but unreachable and rate limits count in this process's memory",
      registers: [registry],
    }),
    redisFallbacks: new Counter({
      name: "rate_limit_redis_fallbacks_total",
      help: "Times the rate limits fell back to memory because Redis was unreachable",
      registers: [registry],
    }),
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

/** Upper bounds in seconds: a redirect answers in well under a millisecond, a dashboard page in tens. */
export const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

/** One label set's counts: observing is a bucket search and three additions, no allocation. */
export class DurationSeries {
  /** Per bucket (not cumulative), the last one for above every bound. */
  readonly counts = new Float64Array(DURATION_BUCKETS.length + 1);
  sum = 0;
  count = 0;
  constructor(readonly labels: Readonly<Record<string, string>>) {}
  observe(seconds: number): void {
    let i = 0;
    while (i < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[i]) i++;
    this.counts[i]++;
    this.sum += seconds;
    this.count++;
  }
}

/**
 * A Prometheus histogram for the request path. prom-client's own validates and hashes its labels on
 * every observation; here each label set is looked up once (`series`) and kept by the caller, so a
 * redirect pays only for `observe`.
 */
export class DurationHistogram {
  readonly type = "histogram";
  readonly aggregator = "sum";
  private readonly all = new Map<string, DurationSeries>();
  constructor(
    registry: Registry,
    readonly name: string,
    readonly help: string,
  ) {
    registry.registerMetric(this as never);
  }
  /** The series of `origin` and `route`; callers keep it (the label values must be few and fixed). */
  series(origin: string, route: string): DurationSeries {
    const key = `${origin} ${route}`;
    let s = this.all.get(key);
    if (!s) this.all.set(key, (s = new DurationSeries({ origin, route })));
    return s;
  }
  /** What the registry prints: the cumulative buckets, the sum and the count of each series. */
  get() {
    const values: { metricName: string; labels: Record<string, string | number>; value: number }[] = [];
    for (const s of this.all.values()) {
      let cumulative = 0;
      DURATION_BUCKETS.forEach((le, i) => {
        cumulative += s.counts[i];
        values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le: "+Inf" }, value: s.count });
      values.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}
