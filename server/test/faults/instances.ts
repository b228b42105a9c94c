import { spawn, type ChildProcess } from "node:child_process";
import http from "node:http";
import { randomBytes } from "node:crypto";
import { freePort } from "../harness";

/**
 * One server process on free ports, run from the bundle `npm start` runs (build/server.mjs, built from
 * the current sources by the test setup: scripts/ensure-build.mjs).
 */
export type Instance = {
  proc: ChildProcess;
  api: string;
  appUrl: string;
  redirect: string;
  output: string[];
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
};

/** `ports`: listen where a stopped instance listened (a restart behind a load balancer); default free ones. */
export async function startInstance(env: Record<string, string>, ports: { app?: number; redirect?: number } = {}): Promise<Instance> {
  const [appPort, redirectPort] = [ports.app ?? (await freePort()), ports.redirect ?? (await freePort())];
  const appUrl = `http://127.0.0.1:${appPort}`;
  const redirect = `http://127.0.0.1:${redirectPort}`;
  const proc = spawn(process.execPath, ["build/server.mjs"], {
    env: { ...process.env, APP_URL: appUrl, REDIRECT_URL: redirect, LOG_LEVEL: "info", SESSION_SECRET: "s".repeat(32), NODE_ENV: "test", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  proc.stdout!.on("data", (d) => output.push(String(d)));
  proc.stderr!.on("data", (d) => output.push(String(d)));
  const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  const inst: Instance = {
    proc,
    api: `${appUrl}/api`,
    appUrl,
    redirect,
    output,
    exited,
    async stop(signal = "SIGTERM") {
      if (proc.exitCode === null) proc.kill(signal);
      return exited;
    },
  };
  // Ready when the redirect host's health answers.
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`server exited ${proc.exitCode}:\n${output.join("").slice(-3000)}`);
    try {
      const res = await fetch(`${redirect}/_/health`);
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`server did not start:\n${output.join("").slice(-3000)}`);
    }
    await sleep(200);
  }
  return inst;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const BROWSER_UA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36";

/** Per-slug tallies of redirect load. */
export type LoadResult = {
  sent: Map<string, number>;
  answered: Map<string, number>;
  other: Map<number, number>;
  errors: number;
  /** Requests that reached a server (not refused) and got no answer: the ones a kill cut off. */
  cutOff: Map<string, number>;
};

/**
 * Redirect load: `concurrency` loops of GET /{slug} (browser user agent, so each is a click)
 * until stopped. A redirect counts as answered when its 301/302 arrived.
 */
export function redirectLoad(base: () => string, slugs: string[], concurrency = 12) {
  const r: LoadResult = { sent: new Map(), answered: new Map(), other: new Map(), errors: 0, cutOff: new Map() };
  let running = true;
  const bump = <K>(m: Map<K, number>, k: K) => m.set(k, (m.get(k) ?? 0) + 1);
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  // Status, 0 for a request cut off after it reached the server, -1 for a refused connection.
  const one = (slug: string) =>
    new Promise<number>((resolve) => {
      const url = new URL(`${base()}/${slug}`);
      const req = http.get({ host: url.hostname, port: url.port, path: url.pathname, agent, headers: { "user-agent": BROWSER_UA } }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
        res.on("error", () => resolve(0));
      });
      req.on("error", (e: NodeJS.ErrnoException) => resolve(e.code === "ECONNREFUSED" ? -1 : 0));
      req.setTimeout(10_000, () => req.destroy());
    });
  const loops = Array.from({ length: concurrency }, async (_, i) => {
    let n = i;
    while (running) {
      const slug = slugs[n++ % slugs.length];
      bump(r.sent, slug);
      const status = await one(slug);
      if (status === 301 || status === 302) bump(r.answered, slug);
      else if (status <= 0) {
        r.errors++;
        if (status === 0) bump(r.cutOff, slug);
        await sleep(20);
      } else bump(r.other, status);
    }
  });
  return {
    result: r,
    async stop() {
      running = false;
      await Promise.all(loops);
      agent.destroy();
      return r;
    },
  };
}

export const total = (m: Map<unknown, number>) => [...m.values()].reduce((a, b) => a + b, 0);

/** A fresh database on a PostgreSQL server; returns its URL and a drop function. */
export async function freshPostgresDatabase(serverUrl: string) {
  const { default: postgres } = await import("postgres");
  const name = `faults_${randomBytes(5).toString("hex")}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    async drop() {
      const a = postgres(serverUrl, { max: 1, onnotice: () => {} });
      await a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
      await a.end();
    },
  };
}

/** Click counts per link id, straight from a database URL (PostgreSQL) or PGlite directory. */
export async function clickCounts(where: { databaseUrl?: string; pgliteDir?: string }): Promise<Map<string, number>> {
  return (await clickTallies(where)).clicks;
}

/** Stored click rows and hourly rollup sums per link id (analytics counts come from the rollups). */
export async function clickTallies(where: {
  databaseUrl?: string;
  pgliteDir?: string;
}): Promise<{ clicks: Map<string, number>; rollups: Map<string, number> }> {
  const { openDatabase } = await import("../../../db/client");
  const { sql } = await import("drizzle-orm");
  const database = await openDatabase({ databaseUrl: where.databaseUrl, pgliteDir: where.pgliteDir, migrate: false, poolSize: 1 });
  type Row = { link_id: string; n: number };
  const rows = (r: unknown) => ((r as { rows?: Row[] }).rows ?? (r as Row[])).map((x) => [x.link_id, Number(x.n)] as [string, number]);
  try {
    const clicks = new Map(rows(await database.db.execute(sql`select link_id, count(*)::int as n from clicks group by link_id`)));
    const rollups = new Map(rows(await database.db.execute(sql`select link_id, sum(count)::int as n from click_rollups group by link_id`)));
    return { clicks, rollups };
  } finally {
    await database.close();
  }
}

/** POST over a fresh connection; resolves with the status (0 when the connection failed). */
export function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const u = new URL(url);
    const data = Buffer.from(JSON.stringify(body));
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: "POST",
        agent: false,
        headers: { "content-type": "application/json", "content-length": data.length, ...headers },
      },
      (res) => {
        let text = "";
        res.on("data", (d) => (text += d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", () => resolve({ status: 0, body: "" }));
    req.end(data);
  });
}
