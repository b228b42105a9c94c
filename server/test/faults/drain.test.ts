import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../../config";
import { tempDataDir } from "../../../db/test-db";
import { createTestServer, type TestServer } from "../harness";

/**
 * The drain and read-replica settings (DRAIN_DELAY_MS, DATABASE_READ_URL), and the drain a load balancer sees (the process-level part, SIGTERM behind
 * HAProxy, is haproxy.fault.ts).
 */
const parse = (env: Record<string, string>) => parseConfig({ DATA_DIR: tempDataDir(), ...env });

describe("DRAIN_DELAY_MS", () => {
  it("defaults to 0 and takes whole milliseconds from 0 to 60000, else the start stops naming it", () => {
    expect(parse({}).drainDelayMs).toBe(0);
    expect(parse({ DRAIN_DELAY_MS: "2000" }).drainDelayMs).toBe(2000);
    for (const bad of ["-1", "1.5", "60001", "soon"]) expect(() => parse({ DRAIN_DELAY_MS: bad }), bad).toThrow(/DRAIN_DELAY_MS/);
  });
});

describe("DATABASE_READ_URL", () => {
  it("is a postgres:// URL, else the start stops naming it", () => {
    expect(parse({ DATABASE_URL: "postgres://a/x", DATABASE_READ_URL: "postgres://b/x" }).databaseReadUrl).toBe("postgres://b/x");
    expect(() => parse({ DATABASE_URL: "postgres://a/x", DATABASE_READ_URL: "mysql://b/x" })).toThrow(/DATABASE_READ_URL/);
  });

  it("needs DATABASE_URL: the embedded database has no replica", () => {
    expect(() => parse({ DATABASE_READ_URL: "postgres://b/x" })).toThrow(ConfigError);
    expect(() => parse({ DATABASE_READ_URL: "postgres://b/x" })).toThrow(/DATABASE_READ_URL: needs DATABASE_URL/);
  });
});

describe("/_/health while draining", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await createTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it("answers 503 once SIGTERM set the service draining, so a load balancer takes the instance out", async () => {
    expect((await fetch(`${t.redirect}/_/health`)).status).toBe(200);
    t.app.draining = true;
    const res = await fetch(`${t.redirect}/_/health`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ status: "draining" });
    expect(res.headers.get("cache-control")).toBe("no-store");
  });
});
