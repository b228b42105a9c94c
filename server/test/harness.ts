import net from "node:net";
import { randomBytes } from "node:crypto";
import { parseConfig } from "../config";
import { createTestDatabase, tempDataDir } from "../../db/test-db";
import { createServices, type AppServices } from "../core/services";
import { createContextInner } from "../trpc/context";
import { createCaller } from "../routers";
import { startServers, type RunningServers } from "../http/server";
import { createUserWithWorkspace, issueToken } from "../lib/users";

// Ports are handed out below the kernel's ephemeral range (32768 and up on Linux): a port from
// listen(0), closed and listened on again seconds later, can meanwhile be taken by any outbound
// connection (to PostgreSQL, Redis) of any process, which made a server's start fail with
// EADDRINUSE. Each test worker takes its own block, so parallel workers never pick the same
// port, and a process never hands out a port twice.
const BLOCK = 1_000;
const FIRST = 20_000;
const BLOCKS = 12; // 20000..31999
const pool = Number(process.env.VITEST_POOL_ID ?? process.pid);
let next = FIRST + (pool % BLOCKS) * BLOCK;
const blockEnd = next + BLOCK;

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once("error", () => resolve(false));
    // Without a host, as the servers listen (every address, IPv6 and IPv4).
    s.listen(port, () => s.close(() => resolve(true)));
  });
}

export async function freePort(): Promise<number> {
  while (next < blockEnd) {
    const port = next++;
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port left in this worker's block ending at ${blockEnd}`);
}

/**
 * Tests count tries exactly. On a loaded machine Redis may answer later than the production
 * deadline, and a late answer sends that check to the in-memory fallback, splitting the count
 * (the fallback itself is tested in server/lib/rate-limit-fallback.test.ts).
 */
export const TEST_REDIS_TIMEOUT_MS = 5_000;

export type TestApp = {
  app: AppServices;
  /** A tRPC caller with these request headers (e.g. `{ authorization: "Bearer tok_…" }`). */
  caller(headers?: Record<string, string>, ip?: string): ReturnType<typeof createCaller>;
  /** A new user with its workspace and a live token. */
  user(opts?: { plan?: "free" | "pro"; isAdmin?: boolean; name?: string }): Promise<TestUser>;
  close(): Promise<void>;
};
export type TestUser = { id: string; email: string; workspaceId: string; token: string; auth: Record<string, string> };

/** A fresh database and services for one test file (PGlite, or PostgreSQL when DATABASE_URL is set). */
export async function createTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const database = await createTestDatabase();
  const config = parseConfig({
    APP_URL: "http://app.test",
    REDIRECT_URL: "http://go.test",
    DATA_DIR: tempDataDir(),
    REDIS_URL: process.env.REDIS_URL,
    LOG_LEVEL: "silent",
    ...env,
  });
  const app = await createServices(config, database, { rateLimitPrefix: `t${randomBytes(6).toString("hex")}`, rateLimitTimeoutMs: TEST_REDIS_TIMEOUT_MS });
  return {
    app,
    caller: (headers = {}, ip = "127.0.0.1") => createCaller(createContextInner(app, { headers, ip, method: "POST" })),
    async user(opts = {}) {
      const email = `u${randomBytes(6).toString("hex")}@example.com`;
      const user = await createUserWithWorkspace(app.db, { email, ...opts });
      const { token } = await issueToken(app.db, user.id, "test");
      return { id: user.id, email, workspaceId: user.workspaceId, token, auth: { authorization: `Bearer ${token}` } };
    },
    async close() {
      await app.close();
      await database.dispose();
    },
  };
}

export type TestServer = TestApp & { api: string; redirect: string; appUrl: string; servers: RunningServers };

/** The real HTTP servers on free ports, for transport concerns (status codes, headers, bodies). */
export async function createTestServer(env: Record<string, string> = {}, opts: { remix?: boolean } = {}): Promise<TestServer> {
  const [appPort, redirectPort] = [await freePort(), await freePort()];
  const appUrl = `http://127.0.0.1:${appPort}`;
  const redirect = `http://127.0.0.1:${redirectPort}`;
  const t = await createTestApp({ APP_URL: appUrl, REDIRECT_URL: redirect, ...env });
  const servers = await startServers(t.app, { remix: opts.remix ?? false });
  return {
    ...t,
    api: `${appUrl}/api`,
    appUrl,
    redirect,
    servers,
    async close() {
      await servers.close();
      await t.close();
    },
  };
}

/** fetch + JSON body, for HTTP tests. */
export async function http(url: string, init: RequestInit & { json?: unknown } = {}) {
  const headers = new Headers(init.headers);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set("content-type", "application/json");
    body = JSON.stringify(init.json);
  }
  const res = await fetch(url, { ...init, headers, body, redirect: "manual" });
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/**
 * Reads `read()` until `done` holds or `ms` pass, and answers the last reading. For what the service
 * learns asynchronously (a change made behind its back reaches it by NOTIFY within a moment).
 */
export async function pollUntil<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 2000): Promise<T> {
  const until = Date.now() + ms;
  let seen = await read();
  while (!done(seen) && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 20));
    seen = await read();
  }
  return seen;
}
