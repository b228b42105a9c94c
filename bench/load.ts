import net from "node:net";

export type LoadResult = { requests: number; seconds: number; latenciesMs: Float64Array; statuses: Map<number, number>; errors: number };

/**
 * A small keep-alive load generator over raw sockets (the node:http client would be the
 * bottleneck on two cores): `connections` sockets, each sending one GET at a time for a random
 * slug, for `seconds`. Responses must carry Content-Length (ours and the bare server's do).
 */
export async function runLoad(opts: { host: string; port: number; hostHeader: string; slugs: string[]; connections: number; seconds: number; userAgent: string }): Promise<LoadResult> {
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  let errors = 0;
  const deadline = performance.now() + opts.seconds * 1000;
  const started = performance.now();
  const pick = () => opts.slugs[(Math.random() * opts.slugs.length) | 0];
  const request = (slug: string) => `GET /${slug} HTTP/1.1\r\nHost: ${opts.hostHeader}\r\nUser-Agent: ${opts.userAgent}\r\nAccept: */*\r\nConnection: keep-alive\r\n\r\n`;

  const one = () =>
    new Promise<void>((resolve) => {
      const sock = net.connect(opts.port, opts.host);
      sock.setNoDelay(true);
      let buf: Buffer = Buffer.alloc(0);
      let sentAt = 0;
      const send = () => {
        if (performance.now() >= deadline) return sock.end(), resolve();
        sentAt = performance.now();
        sock.write(request(pick()));
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
  return { requests: latencies.length, seconds, latenciesMs: Float64Array.from(latencies), statuses, errors };
}

export function percentile(sorted: Float64Array, p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}
