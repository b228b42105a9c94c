import nodeHttp from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestServer, http, type TestServer } from "../test/harness";

/**
 * /_/metrics answers a scrape made on this machine only. A proxy on the same machine connects from
 * loopback too, so a request carrying any header by which a proxy names its client (X-Forwarded-*,
 * Forwarded, X-Real-IP, Via…) is refused with 404, on every origin. The proxy here is a real one: it
 * takes the client's request and sends it on to the service with the header it adds.
 */
let t: TestServer;
const proxies: nodeHttp.Server[] = [];

beforeAll(async () => void (t = await createTestServer()));
afterAll(async () => {
  for (const p of proxies) await new Promise((r) => p.close(r));
  await t?.close();
});

/** A forwarding proxy on loopback to `target`, adding `added(req)` to each request's headers. */
async function startProxy(target: string, added: (req: nodeHttp.IncomingMessage) => Record<string, string>): Promise<string> {
  const to = new URL(target);
  const proxy = nodeHttp.createServer((req, res) => {
    const upstream = nodeHttp.request(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host, ...added(req) } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  proxies.push(proxy);
  return `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
}

const client = (req: nodeHttp.IncomingMessage) => req.socket.remoteAddress ?? "";
/** What proxies add, one header each (Caddy sends the first three together). */
const FORWARDING: [string, (req: nodeHttp.IncomingMessage) => Record<string, string>][] = [
  ["X-Forwarded-For", (req) => ({ "x-forwarded-for": client(req) })],
  ["X-Forwarded-Proto", () => ({ "x-forwarded-proto": "https" })],
  ["X-Forwarded-Host", () => ({ "x-forwarded-host": "metrics.example" })],
  ["Caddy's set", (req) => ({ "x-forwarded-for": client(req), "x-forwarded-proto": "https", "x-forwarded-host": "metrics.example" })],
  ["X-Real-IP", (req) => ({ "x-real-ip": client(req) })],
  ["Forwarded", (req) => ({ forwarded: `for=${client(req)};proto=https` })],
  ["Via", () => ({ via: "1.1 proxy" })],
  ["X-Forwarded-Port", () => ({ "x-forwarded-port": "443" })],
];

describe("/_/metrics behind a proxy", () => {
  const origins = () => [
    ["the redirect host", t.redirect],
    ["the dashboard and API host", t.appUrl],
  ];

  it("a direct scrape on loopback is served, on every origin", async () => {
    for (const [name, base] of origins()) {
      const r = await http(`${base}/_/metrics`);
      expect(r.status, name).toBe(200);
      expect(r.text, name).toContain("redirects_total");
    }
  });

  it("a scrape through a forwarding proxy on the same machine answers 404 NOT_FOUND, on every origin, whatever header the proxy adds", async () => {
    for (const [name, base] of origins()) {
      for (const [header, added] of FORWARDING) {
        const proxy = await startProxy(base, added);
        const r = await http(`${proxy}/_/metrics`);
        expect(r.status, `${name} through a proxy adding ${header}`).toBe(404);
        expect(r.json, `${name} ${header}`).toEqual({ error: "NOT_FOUND" });
        expect(r.text).not.toContain("redirects_total");
      }
    }
  });

  it("the proxy itself works: it forwards other paths to the service", async () => {
    const proxy = await startProxy(t.redirect, FORWARDING[0][1]);
    expect((await http(`${proxy}/_/health`)).status).toBe(200);
  });
});
