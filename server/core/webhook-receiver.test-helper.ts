import http from "node:http";
import type { AddressInfo } from "node:net";

export type Received = { headers: http.IncomingHttpHeaders; body: string; at: number };

export type TestReceiver = {
  url: string;
  received: Received[];
  /** Status of the next answers (default 200). */
  status: number;
  /** Answer after this long (ms). */
  delayMs: number;
  /** Most requests seen open at once. */
  maxOpen: number;
  /** Resolves once `n` requests arrived (or after `ms`, with what arrived). */
  waitFor(n: number, ms?: number): Promise<Received[]>;
  close(): Promise<void>;
};

/** A local HTTP endpoint that records what it is sent (needs WEBHOOK_ALLOW_PRIVATE, being on loopback). */
export async function startReceiver(): Promise<TestReceiver> {
  let open = 0;
  const r: TestReceiver = {
    url: "",
    received: [],
    status: 200,
    delayMs: 0,
    maxOpen: 0,
    async waitFor(n, ms = 10_000) {
      const until = Date.now() + ms;
      while (r.received.length < n && Date.now() < until) await new Promise((res) => setTimeout(res, 20));
      return r.received;
    },
    close: () => new Promise((res) => (server.closeAllConnections(), server.close(() => res()))),
  };
  const server = http.createServer((req, res) => {
    open++;
    r.maxOpen = Math.max(r.maxOpen, open);
    // Answered, or given up by the client.
    res.on("close", () => open--);
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      r.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString(), at: Date.now() });
      setTimeout(() => {
        if (!res.destroyed) res.writeHead(r.status, { "content-type": "text/plain" }).end("ok");
      }, r.delayMs);
    });
  });
  await new Promise<void>((res) => server.listen(0, "127.0.0.1", res));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return r;
}
