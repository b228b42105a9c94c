import type { Sql } from "postgres";
import { rmSync, mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestServer, http, pollUntil, type TestServer } from "../test/harness";
import { BROWSER_UA } from "../test/faults/instances";

/**
 * `/_/live` (the process is up) and `/_/ready` (the database answers, Redis when configured, clicks
 * can be made durable), on every origin; `/_/health` unchanged.
 */
describe("liveness and readiness", () => {
  let s: TestServer;
  beforeAll(async () => void (s = await createTestServer()));
  afterAll(() => s.close());

  it("/_/live answers 200 on every origin, /_/ready 200 with each check", async () => {
    for (const base of [s.appUrl, s.redirect, s.api]) {
      const live = await http(`${base}/_/live`);
      if (base === s.api) {
        // The API shares the app's host and port here: its paths are below /api, the service's are the host's.
        expect(live.status).toBe(404);
        continue;
      }
      expect(live.status).toBe(200);
      expect(live.json).toEqual({ status: "live" });
      const ready = await http(`${base}/_/ready`);
      expect(ready.status).toBe(200);
      expect(ready.headers.get("cache-control")).toBe("no-store");
      expect(ready.json).toEqual({
        status: "ready",
        checks: { database: "ok", redis: process.env.REDIS_URL ? "ok" : "not configured", clicks: "ok" },
        rate_limits: process.env.REDIS_URL ? "redis" : "memory",
      });
    }
    expect((await http(`${s.redirect}/_/health`)).json).toEqual({ status: "ok", database: "ok", rate_limits: process.env.REDIS_URL ? "redis" : "memory" });
  });

  it("/_/ready answers 503 with Retry-After naming the clicks check while the click spool cannot be written, and 200 once it can", async () => {
    const u = await s.user();
    const link = await s.caller(u.auth).link.create({ url: "https://example.com/ready" });
    const visit = () => fetch(`${s.redirect}/${link.slug}`, { redirect: "manual", headers: { "user-agent": BROWSER_UA, host: s.app.config.redirectDomain } });
    expect((await visit()).status).toBe(301);
    // The spool's directory gone (as a full or failed disk would refuse it): its next segment cannot be opened.
    const wal = path.join(s.app.config.dataDir, "click-wal");
    const dirs = readdirSync(wal);
    rmSync(wal, { recursive: true, force: true });
    const failing = await pollUntil(
      async () => {
        await visit();
        return http(`${s.appUrl}/_/ready`);
      },
      (r) => r.status === 503,
      10_000,
    );
    expect(failing.status).toBe(503);
    expect(Number(failing.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(failing.json).toMatchObject({ status: "unavailable", failed: ["clicks"], checks: { database: "ok", clicks: "failed" } });
    // The redirect still answers (the click lives in memory until stored).
    expect((await visit()).status).toBe(301);
    for (const d of dirs) mkdirSync(path.join(wal, d), { recursive: true });
    const back = await pollUntil(
      async () => {
        await visit();
        return http(`${s.appUrl}/_/ready`);
      },
      (r) => r.status === 200,
      10_000,
    );
    expect(back.json).toMatchObject({ status: "ready" });
  });
});

describe.skipIf(!process.env.DATABASE_URL)("readiness with the database refusing connections", () => {
  let s: TestServer;
  let admin: Sql;
  beforeAll(async () => {
    s = await createTestServer();
    admin = (await import("postgres")).default(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
  });
  afterAll(async () => {
    const name = new URL(s.app.database.url!).pathname.slice(1);
    await admin.unsafe(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`).catch(() => {});
    await admin.end();
    await s.close();
  });

  it("/_/ready answers 503 with Retry-After naming the database check; /_/live stays 200", async () => {
    const name = new URL(s.app.database.url!).pathname.slice(1);
    await admin.unsafe(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
    await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${name} AND pid <> pg_backend_pid()`;
    const ready = await http(`${s.redirect}/_/ready`);
    expect(ready.status).toBe(503);
    expect(Number(ready.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(ready.json).toMatchObject({ status: "unavailable", failed: ["database"], checks: { database: "failed" } });
    expect((await http(`${s.appUrl}/_/live`)).status).toBe(200);
    await admin.unsafe(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
    const back = await pollUntil(
      () => http(`${s.redirect}/_/ready`),
      (r) => r.status === 200,
      10_000,
    );
    expect(back.status).toBe(200);
  });
});
