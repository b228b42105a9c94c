import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestServer, http, type TestServer } from "../test/harness";
import { createRateLimits } from "./rate-limit";

let t: TestServer;
beforeAll(async () => {
  t = await createTestServer();
});
afterAll(() => t?.close());

describe("rate limits", () => {
  it("allows 100 token requests an hour on the free plan, exact under concurrent requests, then 429 with Retry-After", async () => {
    const u = await t.user();
    const results = await Promise.all(Array.from({ length: 105 }, () => http(`${t.api}/links`, { headers: u.auth })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(100);
    const limited = results.filter((r) => r.status === 429);
    expect(limited).toHaveLength(5);
    expect(limited[0].json).toEqual({ error: "RATE_LIMITED" });
    expect(Number(limited[0].headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited[0].headers.get("ratelimit-remaining")).toBe("0");
  });

  it("counts per token, so another user's token is not affected", async () => {
    const u = await t.user();
    const r = await http(`${t.api}/links`, { headers: u.auth });
    expect(r.status).toBe(200);
    expect(r.headers.get("ratelimit-remaining")).toBe("99");
  });

  it("gives the pro plan 10,000 requests an hour", async () => {
    const u = await t.user({ plan: "pro" });
    const r = await http(`${t.api}/links`, { headers: u.auth });
    expect(r.headers.get("ratelimit-limit")).toBe("10000");
  });

  it("limits anonymous link creation to 30 an hour per client address", async () => {
    const results = [];
    for (let i = 0; i < 31; i++) results.push(await http(`${t.api}/links`, { method: "POST", json: { url: "https://example.com/anon" } }));
    expect(results.slice(0, 30).every((r) => r.status === 201)).toBe(true);
    expect(results[30].status).toBe(429);
    expect(results[30].json).toEqual({ error: "RATE_LIMITED" });
    expect(Number(results[30].headers.get("retry-after"))).toBeGreaterThan(0);
  });
});

/**
 * A Redis that accepted the connection and answered the client's ready check (INFO), then stopped
 * answering (a stopped process, a full network buffer). A server that never answers at all
 * would not do: the client never becomes ready, and not-ready already falls back.
 */
async function stuckRedis() {
  let readyChecks = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("data", (d) => {
      if (/info/i.test(String(d))) {
        s.write("$11\r\nloading:0\r\n\r\n");
        readyChecks++;
      }
      // anything else: silence
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `redis://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    /** Resolves once a client has connected and been told it is ready. */
    async ready() {
      const start = readyChecks;
      while (readyChecks === start) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 20));
    },
    close() {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

const within = <T>(ms: number, p: Promise<T>) =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms))]);

describe("a Redis that stops answering", () => {
  it("rate-limit checks time out fast and fall back to memory, counting on", async () => {
    const redis = await stuckRedis();
    const ready = redis.ready();
    const limits = createRateLimits(redis.url, "stuck");
    try {
      await ready;
      for (let i = 1; i <= 3; i++) {
        const started = Date.now();
        const res = await within(2000, limits.get("passwordPerAddress").consume("198.51.100.1", 1));
        expect(Date.now() - started).toBeLessThan(1500);
        expect(res.consumedPoints).toBe(i);
      }
    } finally {
      await limits.close();
      redis.close();
    }
  });

  it("a rate-limited API call answers within a bounded time", async () => {
    const redis = await stuckRedis();
    const ready = redis.ready();
    const s = await createTestServer({ REDIS_URL: redis.url });
    try {
      const u = await s.user();
      await ready;
      const started = Date.now();
      const r = await within(3000, http(`${s.api}/links`, { headers: u.auth }));
      expect(r.status).toBe(200);
      expect(r.headers.get("ratelimit-remaining")).toBe("99");
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      await s.close();
      redis.close();
    }
  });
});
