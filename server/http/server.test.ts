import { spawn } from "node:child_process";
import nodeHttp from "node:http";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type createTestServer, freePort, http, type TestApp } from "../test/harness";
import { startServers, type RunningServers } from "./server";
import { tempDataDir } from "../../db/test-db";

describe("one process, three origins", () => {
  let t: TestApp;
  let running: RunningServers;
  let port: number;
  beforeAll(async () => {
    port = await freePort();
    // All three origins on one port: the Host header (and the API prefix) picks the origin.
    t = await createTestApp({ APP_URL: `http://app.localhost:${port}`, REDIRECT_URL: `http://go.localhost:${port}` });
    running = await startServers(t.app, { remix: false });
  });
  afterAll(async () => {
    await running?.close();
    await t?.close();
  });
  // fetch() does not let a caller set Host; node:http does.
  const at = (host: string, path: string) =>
    new Promise<{ status: number; json: any }>((resolve, reject) => {
      const req = nodeHttp.get({ host: "127.0.0.1", port, path, headers: { host } }, (res) => {
        let body = "";
        res.on("data", (c) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode!, json: body.startsWith("{") ? JSON.parse(body) : undefined }));
      });
      req.on("error", reject);
    });

  it("serves the API under APP_URL/api and the redirect host by its Host header on a shared port", async () => {
    const api = await at(`app.localhost:${port}`, "/api/links");
    expect(api.status).toBe(401);
    expect(api.json).toEqual({ error: "UNAUTHORIZED" });
    const health = await at(`go.localhost:${port}`, "/_/health");
    expect(health.status).toBe(200);
    expect(health.json.status).toBe("ok");
    const notApi = await at(`go.localhost:${port}`, "/api/links");
    expect(notApi.status).not.toBe(401);
  });

  it("answers a client that half-closes its side once the request is sent (HTTP/1.0, as `printf … | nc` does)", async () => {
    // An unknown slug: the answer waits for the database, so it comes after the client's FIN.
    const statusLine = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, "127.0.0.1", () => socket.end(`GET /no-such-slug HTTP/1.0\r\nHost: go.localhost:${port}\r\n\r\n`));
      let data = "";
      socket.on("data", (d) => (data += d));
      socket.on("end", () => resolve(data.split("\r\n")[0]));
      socket.on("error", reject);
    });
    expect(statusLine).toBe("HTTP/1.1 404 Not Found");
  });

  it("answers /openapi.json under API_URL", async () => {
    const r = await at(`app.localhost:${port}`, "/api/openapi.json");
    expect(r.status).toBe(200);
    expect(r.json.openapi).toMatch(/^3\./);
  });
});

describe("stopping", () => {
  it("a stop cuts a connection whose request is still unfinished after the grace, instead of waiting for it", async () => {
    const port = await freePort();
    const t = await createTestApp({ APP_URL: `http://app.localhost:${port}`, REDIRECT_URL: `http://go.localhost:${port}` });
    const running = await startServers(t.app, { remix: false });
    try {
      // Headers begun and never finished: node:http neither answers nor counts the connection idle.
      const socket = net.connect(port, "127.0.0.1");
      await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
      socket.write(`GET /no-such-slug HTTP/1.1\r\nHost: go.localhost:${port}\r\n`);
      const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
      socket.on("error", () => {});
      await new Promise((r) => setTimeout(r, 100));
      const stopped = await Promise.race([running.close(300).then(() => "stopped"), new Promise((r) => setTimeout(() => r("still waiting"), 5_000))]);
      expect(stopped).toBe("stopped");
      await closed;
    } finally {
      await t.close();
    }
  });
});

describe("SIGTERM", () => {
  it("drains and exits 0", async () => {
    const [appPort, redirectPort] = [await freePort(), await freePort()];
    // The bundle `npm start` runs, built from the sources by the test setup.
    const child = spawn(process.execPath, ["build/server.mjs"], {
      env: {
        ...process.env,
        APP_URL: `http://127.0.0.1:${appPort}`,
        REDIRECT_URL: `http://127.0.0.1:${redirectPort}`,
        DATA_DIR: tempDataDir(),
        LOG_LEVEL: "info",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    const deadline = Date.now() + 60_000;
    while (!out.includes('"started"') && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 200));
    expect(out).toContain('"started"');
    const r = await http(`http://127.0.0.1:${redirectPort}/_/health`);
    expect(r.status).toBe(200);
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(out).toContain('"stopped"');
  }, 90_000);
});

describe("CORS", () => {
  let t: Awaited<ReturnType<typeof createTestServer>>;
  beforeAll(async () => {
    t = await (await import("../test/harness")).createTestServer();
  });
  afterAll(() => t?.close());

  it("lets scripts on other origins call the API with a token", async () => {
    const pre = await http(`${t.api}/links`, { method: "OPTIONS", headers: { origin: "https://tool.example", "access-control-request-method": "POST" } });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("*");
    expect(pre.headers.get("access-control-allow-headers")).toMatch(/authorization/i);
  });

  it("never sends Access-Control-Allow-Origin on a request carrying the session cookie", async () => {
    const r = await http(`${t.api}/links`, { headers: { origin: "https://evil.example", cookie: "app_session=abc" } });
    expect(r.headers.get("access-control-allow-origin")).toBeNull();
    expect(r.headers.get("access-control-allow-credentials")).toBeNull();
  });
});

describe("operations", () => {
  let t: Awaited<ReturnType<typeof createTestServer>>;
  beforeAll(async () => {
    t = await (await import("../test/harness")).createTestServer();
  });
  afterAll(() => t?.close());

  it("answers every request with an X-Request-Id, keeping a well-formed incoming one", async () => {
    const a = await http(`${t.api}/links`);
    expect(a.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const b = await http(`${t.api}/links`, { headers: { "x-request-id": "edge-123" } });
    expect(b.headers.get("x-request-id")).toBe("edge-123");
  });

  it("serves Prometheus metrics with the internal counters at /_/metrics", async () => {
    const r = await http(`${t.redirect}/_/metrics`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("text/plain");
    for (const name of ["redirects_total", "clicks_written_total", "clicks_buffered", "rate_limit_rejections_total", "reports_received_total"]) {
      expect(r.text).toContain(name);
    }
  });
});

describe("a database that refuses connections", () => {
  const serverUrl = process.env.DATABASE_URL;
  const expect503 = async (res: Awaited<ReturnType<typeof http>>, what: string) => {
    expect(res.status, `${what}: ${res.text}`).toBe(503);
    expect(res.json, what).toEqual({ error: "SERVICE_UNAVAILABLE" });
    expect(res.headers.get("retry-after"), what).toMatch(/^\d+$/);
  };

  // Only a real PostgreSQL refuses connections; the embedded PGlite has none to refuse.
  it("answers 503 SERVICE_UNAVAILABLE with Retry-After when the database does not allow connections", async (ctx) => {
    if (!serverUrl) return ctx.skip("needs DATABASE_URL (a real PostgreSQL); skipped on PGlite");
    const { default: postgres } = await import("postgres");
    const t = await (await import("../test/harness")).createTestServer();
    const name = new URL(t.app.database.url!).pathname.slice(1);
    const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
    try {
      const user = await t.user();
      // Reached before the outage without filling the listing's answer cache (a kept answer is served
      // for its minute, outage or not: only reads that go to the database are asked here).
      expect((await http(`${t.api}/links?tag=none`, { headers: user.auth })).status).toBe(200);
      await admin.unsafe(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
      await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${name} AND pid <> pg_backend_pid()`;
      // The first query may meet the terminated connection (57P01); the next ones meet the refusal (55000).
      for (let i = 0; i < 3; i++) {
        await expect503(await http(`${t.api}/links`, { headers: user.auth }), `GET /links #${i}`);
        await expect503(await http(`${t.api}/links`, { method: "POST", json: { url: "https://example.com/refused" } }), `POST /links #${i}`);
      }
    } finally {
      await t.close(); // drops the database WITH (FORCE), whatever ALLOW_CONNECTIONS says
      await admin.end();
    }
  }, 60_000);

  it("classifies the connection refusals PostgreSQL reports as unavailable, not query errors as such", async () => {
    const { PostgresError } = (await import("postgres")) as unknown as { PostgresError: new (x: object) => Error };
    const pg = (code: string, severity: string, message: string) => new PostgresError({ code, severity, severity_local: severity, message });
    const { toPublicError } = await import("../domain/errors");
    for (const e of [
      pg("55000", "FATAL", 'database "x" is not currently accepting connections'),
      pg("53300", "FATAL", "sorry, too many clients already"),
      pg("53300", "FATAL", 'too many connections for database "x"'),
      pg("3D000", "FATAL", 'database "x" does not exist'),
      pg("57P01", "FATAL", "terminating connection due to administrator command"),
      pg("08006", "FATAL", "connection failure"),
    ]) {
      expect(toPublicError(e), e.message).toEqual({
        status: 503,
        body: { error: "SERVICE_UNAVAILABLE" },
        headers: { "Retry-After": expect.stringMatching(/^\d+$/) },
      });
    }
    // The same code from an ordinary statement is a query error: 500.
    expect(toPublicError(pg("55000", "ERROR", "currval of sequence is not yet defined in this session")).status).toBe(500);
    expect(toPublicError(pg("42P01", "ERROR", 'relation "x" does not exist')).status).toBe(500);
  });
});
