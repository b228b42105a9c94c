import { spawn, type ChildProcess } from "node:child_process";
import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { createTestServer, freePort, http, pollUntil } from "../test/harness";
import { createMetrics, type Metrics } from "./metrics";
import { createRateLimits, type RateLimits } from "./rate-limit";

/**
 * When the configured Redis cannot be reached the rate limits count in memory (per instance): that
 * is said once, as a warning line and `rate_limit_redis_fallback` 1, and once more when Redis is
 * back; `/_/health` and `/_/ready` name where the limits count. The Redis that goes away is one
 * started here on a port of its own (the machine's Redis is shared), or a port where none listens.
 */
type Line = { level: number; msg: string; redis?: string };

function capture(): { log: pino.Logger; lines: Line[] } {
  const lines: Line[] = [];
  const log = pino({ level: "info", base: undefined }, { write: (s: string) => void lines.push(JSON.parse(s) as Line) });
  return { log, lines };
}
const redisLines = (lines: Line[]) => lines.filter((l) => l.redis !== undefined);
const gauge = async (metrics: Metrics, name: string) => (await metrics.registry.getSingleMetric(name)!.get()).values[0]?.value;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A port where nothing listens (taken from the system, then let go). */
const closedRedisUrl = async () => `redis://127.0.0.1:${await freePort()}`;

const started: ChildProcess[] = [];
afterAll(() => {
  for (const p of started) p.kill("SIGKILL");
});

/** A redis-server of this test's own, in the foreground of a child process: stop() ends it. */
async function ownRedis(port: number) {
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
  started.push(child);
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  return {
    stop: async () => {
      child.kill("SIGKILL");
      await exited;
    },
  };
}

async function consumeSome(limits: RateLimits, n = 5) {
  for (let i = 0; i < n; i++) await limits.get("tokenPro").consume("198.51.100.7", 1);
}

describe("rate limits with Redis unreachable", () => {
  it("a Redis URL on a closed port: limits count in memory, one warning line however many requests and reconnects, the gauge at 1", async () => {
    const { log, lines } = capture();
    const metrics = createMetrics();
    const limits = createRateLimits(await closedRedisUrl(), "fallback-closed", { log, metrics });
    try {
      await consumeSome(limits);
      const res = await limits.get("tokenPro").consume("198.51.100.7", 1);
      expect(res.consumedPoints).toBe(6);
      await sleep(1500); // ioredis retries meanwhile: every retry fails again
      await consumeSome(limits);
      expect(limits.store()).toBe("memory fallback");
      expect(redisLines(lines)).toHaveLength(1);
      expect(redisLines(lines)[0]).toMatchObject({ level: 40, redis: "unreachable" });
      expect(await gauge(metrics, "rate_limit_redis_fallback")).toBe(1);
      expect(await gauge(metrics, "rate_limit_redis_fallbacks_total")).toBe(1);
    } finally {
      await limits.close();
    }
  });

  it("Redis going away and coming back: one warning line when it goes, one info line when it is back, the gauge back at 0", async () => {
    const port = await freePort();
    let redis = await ownRedis(port);
    const { log, lines } = capture();
    const metrics = createMetrics();
    const limits = createRateLimits(`redis://127.0.0.1:${port}`, "fallback-own", { log, metrics });
    try {
      await pollUntil(
        async () => limits.store(),
        (s) => s === "redis",
        5000,
      );
      await pollUntil(
        async () => (await limits.get("tokenPro").consume("198.51.100.8", 1)).consumedPoints,
        () => true,
      );
      expect(redisLines(lines)).toHaveLength(0);
      await redis.stop();
      await pollUntil(
        async () => limits.store(),
        (s) => s === "memory fallback",
        5000,
      );
      await consumeSome(limits);
      expect(redisLines(lines)).toHaveLength(1);
      expect(await gauge(metrics, "rate_limit_redis_fallback")).toBe(1);
      redis = await ownRedis(port);
      await pollUntil(
        async () => limits.store(),
        (s) => s === "redis",
        10_000,
      );
      expect(redisLines(lines)).toHaveLength(2);
      expect(redisLines(lines)[1]).toMatchObject({ level: 30, redis: "ok" });
      expect(await gauge(metrics, "rate_limit_redis_fallback")).toBe(0);
      expect(await gauge(metrics, "rate_limit_redis_fallbacks_total")).toBe(1);
    } finally {
      await limits.close();
      await redis.stop();
    }
  }, 30_000);

  it("closing the limits is not reported as losing Redis", async () => {
    const port = await freePort();
    const redis = await ownRedis(port);
    const { log, lines } = capture();
    const limits = createRateLimits(`redis://127.0.0.1:${port}`, "fallback-close", { log, metrics: createMetrics() });
    try {
      await pollUntil(
        async () => limits.store(),
        (s) => s === "redis",
        5000,
      );
      await limits.close();
      await sleep(200);
      expect(redisLines(lines)).toHaveLength(0);
    } finally {
      await redis.stop();
    }
  });

  it("/_/health says degraded (200) and /_/ready 503, both naming the memory fallback; /_/metrics has the gauge at 1", async () => {
    const s = await createTestServer({ REDIS_URL: await closedRedisUrl() });
    try {
      await pollUntil(
        async () => s.app.limits.store(),
        (v) => v === "memory fallback",
        5000,
      );
      const health = await http(`${s.redirect}/_/health`);
      expect(health.status).toBe(200);
      expect(health.json).toEqual({ status: "degraded", database: "ok", rate_limits: "memory fallback" });
      const ready = await http(`${s.redirect}/_/ready`);
      expect(ready.status).toBe(503);
      expect(ready.json).toMatchObject({ failed: ["redis"], checks: { redis: "failed" }, rate_limits: "memory fallback" });
      expect((await http(`${s.redirect}/_/metrics`)).text).toMatch(/^rate_limit_redis_fallback 1$/m);
    } finally {
      await s.close();
    }
  });

  it("without REDIS_URL the limits count in memory, and that is no fallback", async () => {
    const s = await createTestServer({ REDIS_URL: "" });
    try {
      expect(s.app.limits.store()).toBe("memory");
      const health = await http(`${s.redirect}/_/health`);
      expect(health.json).toEqual({ status: "ok", database: "ok", rate_limits: "memory" });
      expect((await http(`${s.redirect}/_/ready`)).json).toMatchObject({ status: "ready", checks: { redis: "not configured" }, rate_limits: "memory" });
      expect((await http(`${s.redirect}/_/metrics`)).text).toMatch(/^rate_limit_redis_fallback 0$/m);
    } finally {
      await s.close();
    }
  });
});
