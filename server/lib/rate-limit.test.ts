import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestServer, http, type TestServer } from "../test/harness";
import { createRateLimits } from "./rate-limit";

let t: TestServer;
beforeAll(async () => {
  // With the dashboard: its actions call the same procedures as the API.
  t = await createTestServer({}, { remix: true });
});
afterAll(() => t?.close());

/** A signed-in browser of a new user: its session cookie header. */
async function sessionOf(opts: { plan?: "free" | "pro" } = {}) {
  const u = await t.user(opts);
  const session = await t.app.lucia.createSession(u.id, { createdAt: Date.now() });
  return { ...u, cookie: { cookie: `app_session=${session.id}` } };
}
const createLink = (headers: Record<string, string>) => http(`${t.api}/links`, { method: "POST", headers, json: { url: "https://example.com/s" } });
/** The dashboard's "New link" form, posted as a browser without script posts it. */
const dashboardCreate = (headers: Record<string, string>) =>
  http(`${t.appUrl}/links/new`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ url: "https://example.com/d" }).toString(),
  });

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

describe("a session's writes count against the account's plan", () => {
  it("allows a free account 100 writes an hour through its session, exact under concurrent requests, then 429 RATE_LIMITED with Retry-After", async () => {
    const u = await sessionOf();
    const results = await Promise.all(Array.from({ length: 105 }, () => createLink(u.cookie)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(100);
    const limited = results.filter((r) => r.status === 429);
    expect(limited).toHaveLength(5);
    expect(limited[0].json).toEqual({ error: "RATE_LIMITED" });
    expect(Number(limited[0].headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited[0].headers.get("ratelimit-limit")).toBe("100");
    expect(limited[0].headers.get("ratelimit-remaining")).toBe("0");
    expect(Number(limited[0].headers.get("ratelimit-reset"))).toBeGreaterThan(0);
  });

  it("counts per account: REST, the tRPC endpoint and dashboard actions share one budget, and a dashboard action past it shows RATE_LIMITED", async () => {
    const u = await sessionOf();
    for (let i = 0; i < 98; i++) expect((await createLink(u.cookie)).status).toBe(201);
    const trpc = await http(`${t.api}/trpc/link.create`, { method: "POST", headers: u.cookie, json: { url: "https://example.com/t" } });
    expect(trpc.status).toBe(200);
    const last = await dashboardCreate(u.cookie);
    expect(last.status).toBe(302); // to the new link
    expect(last.headers.get("location")).toMatch(/^\/links\/[0-9a-z]{8}\?created=1$/);
    expect(last.headers.get("ratelimit-remaining")).toBe("0");
    const over = await dashboardCreate(u.cookie);
    expect(over.status).toBe(200); // the form again, with the error
    expect(over.text).toContain("Too many attempts."); // the dashboard's words for RATE_LIMITED
    expect(over.text).toMatch(/Try again in \d+ minutes\./); // with how long the hour's limit still holds
    expect(over.headers.get("ratelimit-remaining")).toBe("0");
    const trpcOver = await http(`${t.api}/trpc/link.create`, { method: "POST", headers: u.cookie, json: { url: "https://example.com/t" } });
    expect(trpcOver.status).toBe(429);
    expect(Number(trpcOver.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await createLink(u.cookie)).status).toBe(429);
    // Another account is not affected.
    expect((await createLink((await sessionOf()).cookie)).headers.get("ratelimit-remaining")).toBe("99");
  });

  it("does not count a session's reads, and signing out still works once the writes are spent", async () => {
    const u = await sessionOf();
    for (let i = 0; i < 120; i++) {
      const r = await http(`${t.api}/links`, { headers: u.cookie });
      expect(r.status).toBe(200);
      expect(r.headers.get("ratelimit-limit")).toBeNull();
    }
    expect((await t.app.limits.get("sessionWritesFree").get(u.id))?.consumedPoints ?? 0).toBe(0);
    await Promise.all(Array.from({ length: 100 }, () => createLink(u.cookie)));
    expect((await createLink(u.cookie)).status).toBe(429);
    expect((await http(`${t.api}/links`, { headers: u.cookie })).status).toBe(200);
    expect((await http(`${t.api}/auth/logout`, { method: "POST", headers: u.cookie })).status).toBe(204);
  });

  it("counts one bulk call as one write", async () => {
    const u = await sessionOf();
    const r = await http(`${t.api}/links/bulk`, {
      method: "POST",
      headers: u.cookie,
      json: { links: [{ url: "https://example.com/1" }, { url: "https://example.com/2" }] },
    });
    expect(r.status).toBe(200);
    expect(r.json.created).toHaveLength(2);
    expect(r.headers.get("ratelimit-remaining")).toBe("99");
  });

  it("gives a pro account's session 10,000 writes an hour", async () => {
    const u = await sessionOf({ plan: "pro" });
    const r = await createLink(u.cookie);
    expect(r.status).toBe(201);
    expect(r.headers.get("ratelimit-limit")).toBe("10000");
    expect(r.headers.get("ratelimit-remaining")).toBe("9999");
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
