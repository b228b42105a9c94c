import dns from "node:dns";
import http from "node:http";
import os from "node:os";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProber } from "./health-probe";
import { isPublicAddress } from "./outgoing-address-guard";

/** A destination server: `/status/N` answers N, `/redirect/N` redirects N times, `/head-refused` answers 405 to HEAD, `/slow` never answers. */
let server: http.Server;
let base = "";
const seen: { method: string; path: string; at: number }[] = [];
let inFlight = 0;
let maxInFlight = 0;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const path = req.url ?? "/";
    seen.push({ method: req.method ?? "", path, at: Date.now() });
    const status = /^\/status\/(\d+)$/.exec(path);
    const redirect = /^\/redirect\/(\d+)$/.exec(path);
    if (status) return res.writeHead(Number(status[1])).end();
    if (redirect) {
      const n = Number(redirect[1]);
      return res.writeHead(302, { location: n > 1 ? `/redirect/${n - 1}` : "/status/200" }).end();
    }
    if (path === "/head-refused") return res.writeHead(req.method === "HEAD" ? 405 : 200).end("hello");
    if (path === "/get-only") return res.writeHead(req.method === "HEAD" ? 404 : 200).end("hello");
    if (path.startsWith("/hold")) {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      setTimeout(() => {
        inFlight--;
        res.writeHead(200).end();
      }, 150);
      return;
    }
    if (path === "/slow") return; // never answers
    res.writeHead(200).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  return new Promise<void>((r) => server.close(() => r()));
});

const fast = () => createProber({ hostIntervalMs: 0, timeoutMs: 500 });

describe("destination probe", () => {
  it("a 2xx answer to HEAD is ok", async () => {
    expect(await fast().probe(`${base}/status/204`, true)).toEqual({ url: `${base}/status/204`, status: "ok", http_status: 204, error: null });
  });

  it("404, 410 and 5xx are failures", async () => {
    const p = fast();
    for (const s of [404, 410, 500, 502, 503])
      expect(await p.probe(`${base}/status/${s}`, true)).toMatchObject({ status: "failed", http_status: s, error: `HTTP ${s}` });
  });

  it("401, 403 and 429 are not failures", async () => {
    const p = fast();
    for (const s of [401, 403, 429]) expect(await p.probe(`${base}/status/${s}`, true)).toMatchObject({ status: "ok", http_status: s });
  });

  it("a HEAD refused with 405 is asked again with GET", async () => {
    seen.length = 0;
    expect(await fast().probe(`${base}/head-refused`, true)).toMatchObject({ status: "ok", http_status: 200 });
    expect(seen.map((s) => s.method)).toEqual(["HEAD", "GET"]);
  });

  it("a destination that answers 404 to HEAD but 200 to GET is ok", async () => {
    expect(await fast().probe(`${base}/get-only`, true)).toMatchObject({ status: "ok", http_status: 200 });
  });

  it("up to 5 redirects are followed to the final answer", async () => {
    expect(await fast().probe(`${base}/redirect/5`, true)).toMatchObject({ status: "ok", http_status: 200 });
  });

  it("more than 5 redirects is a failure", async () => {
    expect(await fast().probe(`${base}/redirect/6`, true)).toMatchObject({ status: "failed", http_status: 302, error: "more than 5 redirects" });
  });

  it("no answer within the timeout is a failure", async () => {
    const started = Date.now();
    expect(await fast().probe(`${base}/slow`, true)).toEqual({ url: `${base}/slow`, status: "failed", http_status: null, error: "timeout" });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("a refused connection is a failure", async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    expect(await fast().probe(`http://127.0.0.1:${port}/`, true)).toMatchObject({ status: "failed", http_status: null, error: "connection refused" });
  });

  it("a loopback destination is not contacted unless private addresses are allowed; it is unknown, not failed", async () => {
    seen.length = 0;
    const r = await fast().probe(`${base}/status/200`, false);
    expect(r).toMatchObject({ status: "unknown", http_status: null });
    expect(seen).toEqual([]);
    const named = await fast().probe(`${base.replace("127.0.0.1", "localhost")}/status/200`, false);
    expect(named.status).toBe("unknown");
    expect(seen).toEqual([]);
  });

  it("a name that resolves to a private address is refused on the address the connection would use", async () => {
    // This machine's own name resolves to one of its addresses, which are loopback or private here.
    const name = os.hostname();
    const addresses = await dns.promises.lookup(name, { all: true }).catch(() => []);
    if (!addresses.length || addresses.some((a) => isPublicAddress(a.address))) return;
    seen.length = 0;
    const r = await fast().probe(`http://${name}:${new URL(base).port}/status/200`, false);
    expect(r).toMatchObject({ status: "unknown", http_status: null, error: expect.stringMatching(/^not checked/) });
    expect(seen).toEqual([]);
  });

  it("requests to one host are at least the host interval apart", async () => {
    seen.length = 0;
    const p = createProber({ hostIntervalMs: 500, timeoutMs: 2000 });
    await Promise.all([1, 2, 3].map((i) => p.probe(`${base}/status/200?i=${i}`, true)));
    const times = seen.map((s) => s.at).sort((a, b) => a - b);
    expect(times).toHaveLength(3);
    // Arrival times also carry each connection's own latency: a margin for a busy machine.
    for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(400);
  });

  it("a host's next request waits for its previous answer, then the interval", async () => {
    seen.length = 0;
    const p = createProber({ hostIntervalMs: 300, timeoutMs: 2000 });
    await Promise.all([1, 2].map((i) => p.probe(`${base}/hold/gap${i}`, true)));
    const times = seen.map((s) => s.at).sort((a, b) => a - b);
    // The first answer takes 150 ms: the second request comes at least 150 + 300 ms after the first.
    expect(times[1] - times[0]).toBeGreaterThanOrEqual(440);
  });

  it("a check someone waits for goes ahead of scheduled checks waiting for a slot", async () => {
    seen.length = 0;
    const p = createProber({ hostIntervalMs: 0, timeoutMs: 2000 });
    const scheduled = Array.from({ length: 8 }, (_, i) => p.probe(`${base}/hold/s${i}`, true));
    const urgent = p.probe(`${base}/hold/urgent`, true, true);
    await Promise.all([...scheduled, urgent]);
    const order = seen.map((s) => s.path);
    // The first 4 scheduled ones already hold the slots; the urgent one is next.
    expect(order.indexOf("/hold/urgent")).toBe(4);
  });

  it("a check someone waits for takes its host's next turn, ahead of the scheduled checks of that host", async () => {
    seen.length = 0;
    const p = createProber({ hostIntervalMs: 100, timeoutMs: 2000 });
    const scheduled = Array.from({ length: 8 }, (_, i) => p.probe(`${base}/status/200?s=${i}`, true));
    await new Promise((r) => setTimeout(r, 20)); // the first scheduled one is under way
    const urgent = p.probe(`${base}/status/200?urgent`, true, true);
    await Promise.all([...scheduled, urgent]);
    const order = seen.map((s) => s.path);
    expect(order.indexOf("/status/200?urgent")).toBe(1);
    // Still one host's pace: every request the interval apart.
    const times = seen.map((s) => s.at);
    for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(80);
  });

  it("at most 4 destinations are checked at once", async () => {
    maxInFlight = 0;
    const p = createProber({ hostIntervalMs: 0, timeoutMs: 2000 });
    await Promise.all(Array.from({ length: 10 }, (_, i) => p.probe(`${base}/hold/${i}`, true)));
    expect(maxInFlight).toBe(4);
  });
});
