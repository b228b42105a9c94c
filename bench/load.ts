import net from "node:net";

export type LoadResult = { requests: number; seconds: number; latenciesMs: Float64Array; statuses: Map<number, number>; errors: number; bodies?: string[] };

export type LoadOptions = {
  host: string;
  port: number;
  connections: number;
  /** Run this long… */
  seconds?: number;
  /** …or stop after this many requests in all (the API's per-token limit). */
  maxRequests?: number;
  /** The raw HTTP/1.1 request (keep-alive) for the next call. */
  request: () => string;
  /** Keep the first few response bodies (to check them). */
  keepBodies?: number;
};

/**
 * A small keep-alive load generator over raw sockets (the node:http client would be the
 * bottleneck on two cores): `connections` sockets, each sending one request at a time.
 * Responses must carry Content-Length (ours and the bare server's do).
 */
export async function runLoad(opts: LoadOptions): Promise<LoadResult> {
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  const bodies: string[] = [];
  let errors = 0;
  let sent = 0;
  const deadline = performance.now() + (opts.seconds ?? 3600) * 1000;
  const max = opts.maxRequests ?? Infinity;
  const started = performance.now();

  const one = () =>
    new Promise<void>((resolve) => {
      const sock = net.connect(opts.port, opts.host);
      sock.setNoDelay(true);
      let buf: Buffer = Buffer.alloc(0);
      let sentAt = 0;
      const send = () => {
        if (performance.now() >= deadline || sent >= max) return (sock.end(), resolve());
        sent++;
        sentAt = performance.now();
        sock.write(opts.request());
      };
      sock.on("connect", send);
      sock.on("data", (chunk) => {
        buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
        for (;;) {
          const end = buf.indexOf("\r\n\r\n");
          if (end < 0) return;
          const head = buf.subarray(0, end).toString("latin1");
          const len = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
          if (buf.length < end + 4 + len) return;
          if (opts.keepBodies && bodies.length < opts.keepBodies) bodies.push(buf.subarray(end + 4, end + 4 + len).toString("utf8"));
          buf = buf.subarray(end + 4 + len);
          const status = Number(head.slice(9, 12));
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          latencies.push(performance.now() - sentAt);
          send();
        }
      });
      sock.on("error", () => {
        errors++;
        resolve();
      });
      sock.on("close", () => resolve());
    });

  await Promise.all(Array.from({ length: opts.connections }, one));
  const seconds = (performance.now() - started) / 1000;
  return { requests: latencies.length, seconds, latenciesMs: Float64Array.from(latencies), statuses, errors, bodies };
}

/** A GET for a random one of `slugs`, as a browser would send it. */
export const slugRequest = (hostHeader: string, slugs: string[], userAgent: string) => () =>
  `GET /${slugs[(Math.random() * slugs.length) | 0]} HTTP/1.1\r\nHost: ${hostHeader}\r\nUser-Agent: ${userAgent}\r\nAccept: */*\r\nConnection: keep-alive\r\n\r\n`;

/** An API call with a bearer token and an optional JSON body. */
export const apiRequest = (method: string, hostHeader: string, path: () => string, token: string, body?: () => unknown) => () => {
  const json = body ? JSON.stringify(body()) : "";
  return (
    `${method} ${path()} HTTP/1.1\r\nHost: ${hostHeader}\r\nAuthorization: Bearer ${token}\r\nAccept: application/json\r\nConnection: keep-alive\r\n` +
    (body ? `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n` : "") +
    `\r\n${json}`
  );
};

/** The middle value (the mean of the two middle ones for an even count). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function percentile(sorted: Float64Array, p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** p50/p99 of a latency sample. */
export function summary(latencies: ArrayLike<number>): { p50: number; p99: number; n: number } {
  const s = Float64Array.from(latencies).sort();
  return { p50: percentile(s, 50), p99: percentile(s, 99), n: s.length };
}
