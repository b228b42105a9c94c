import { Writable } from "node:stream";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import pino from "pino";
import { parseConfig } from "../../config";
import { createTestDatabase, tempDataDir } from "../../../db/test-db";
import { createServices, type AppServices } from "../../core/services";
import { startServers, type RunningServers } from "../../http/server";
import { freePort, http, TEST_REDIS_TIMEOUT_MS } from "../harness";

export type LoggedServer = {
  app: AppServices;
  api: string;
  appUrl: string;
  redirect: string;
  servers: RunningServers;
  /** Every log line written so far, at level trace, unredacted by the test's logger. */
  lines: string[];
  close(): Promise<void>;
};

/**
 * Real servers with a logger that keeps every line in memory (level trace). `https: true`
 * configures APP_URL/API_URL as https (the process still listens on plain http, like behind
 * a TLS-terminating proxy), for HSTS and Secure cookies.
 */
export async function startLoggedServer(opts: { https?: boolean; remix?: boolean; env?: Record<string, string> } = {}): Promise<LoggedServer> {
  const [appPort, redirectPort] = [await freePort(), await freePort()];
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  const logger = pino({ level: "trace" }, stream);
  const database = await createTestDatabase();
  const config = parseConfig({
    APP_URL: `${opts.https ? "https" : "http"}://127.0.0.1:${appPort}`,
    REDIRECT_URL: `http://127.0.0.1:${redirectPort}`,
    DATA_DIR: tempDataDir(),
    REDIS_URL: process.env.REDIS_URL,
    LOG_LEVEL: "trace",
    ...opts.env,
  });
  const app = await createServices(config, database, {
    logger,
    rateLimitPrefix: `s${randomBytes(6).toString("hex")}`,
    rateLimitTimeoutMs: TEST_REDIS_TIMEOUT_MS,
  });
  const servers = await startServers(app, { remix: opts.remix ?? false });
  return {
    app,
    api: `http://127.0.0.1:${appPort}/api`,
    appUrl: `http://127.0.0.1:${appPort}`,
    redirect: `http://127.0.0.1:${redirectPort}`,
    servers,
    lines,
    async close() {
      await servers.close();
      await app.clicks?.close();
      await app.limits.close();
      await database.dispose();
    },
  };
}

/** The newest code mailed to `to` (outbox mode: the only 6-digit number of the text). */
export function lastCode(app: AppServices, to: string): string {
  const dir = path.join(app.config.dataDir, "outbox");
  const mails = readdirSync(dir)
    .sort()
    .map((f) => JSON.parse(readFileSync(path.join(dir, f), "utf8")) as { to: string; text: string })
    .filter((m) => m.to === to);
  const code = /\b\d{6}\b/.exec(mails.at(-1)?.text ?? "")?.[0];
  if (!code) throw new Error(`no code mailed to ${to}`);
  return code;
}

/** Signs in through the HTTP flow; returns the raw Set-Cookie header and the session id. */
export async function signIn(s: Pick<LoggedServer, "api" | "app">, email: string) {
  const start = await http(`${s.api}/auth/start`, { method: "POST", json: { email } });
  if (start.status !== 204) throw new Error(`auth/start answered ${start.status} ${start.text}`);
  const code = lastCode(s.app, email);
  // The browser that asked for the code: its pending-sign-in cookie goes with the code.
  const pending =
    start.headers
      .getSetCookie()
      .find((c) => c.startsWith("app_signin="))
      ?.split(";")[0] ?? "";
  const verify = await http(`${s.api}/auth/verify`, { method: "POST", json: { email, code }, headers: { cookie: pending } });
  const setCookie = verify.headers.getSetCookie().find((c) => c.startsWith("app_session=")) ?? "";
  const session = /^app_session=([^;]*)/.exec(setCookie)?.[1] ?? "";
  return { verify, code, setCookie, session, cookie: { cookie: `app_session=${session}` } };
}
