// The destinations of the health bench (bench/health.ts), in a process of its own so the load
// generator cannot bunch up its arrival times: one node:http server answering 200 for every host,
// each host a loopback address of its own (127.10.0.1, 127.10.1.1, …, all routed to this socket).
// It records, per host (the address a request came in on), the shortest gap between two requests and
// the most requests seen within any one second. Messages: "stats" → the figures, "reset" → start over.
import http from "node:http";
import type { AddressInfo } from "node:net";

let requests = 0;
let minGapMs = Infinity;
let maxPerSecond = 0;
/** host → arrival times (ms) of its requests within the last second. */
const recent = new Map<string, number[]>();

const server = http.createServer((req, res) => {
  const at = performance.now();
  const host = req.socket.localAddress ?? "?";
  requests++;
  const times = (recent.get(host) ?? []).filter((t) => at - t < 1000);
  if (times.length) minGapMs = Math.min(minGapMs, at - times[times.length - 1]);
  times.push(at);
  maxPerSecond = Math.max(maxPerSecond, times.length);
  recent.set(host, times);
  res.writeHead(200, { "content-length": "0" }).end();
});
// Every loopback address, and nothing from elsewhere (the socket listens on all addresses).
server.on("connection", (s) => {
  if (!s.remoteAddress?.startsWith("127.") && !s.remoteAddress?.startsWith("::ffff:127.")) s.destroy();
});
server.listen(0, "0.0.0.0", () => process.send!({ port: (server.address() as AddressInfo).port }));
process.on("message", (m) => {
  if (m === "reset") {
    requests = 0;
    minGapMs = Infinity;
    maxPerSecond = 0;
    recent.clear();
  }
  process.send!({ requests, hosts: recent.size, minGapMs: Number.isFinite(minGapMs) ? minGapMs : null, maxPerSecond });
});
process.on("disconnect", () => process.exit(0));
