// Spawning the service as `npm start` does (node running the server bundle, build/server.mjs, which
// the bench builds first), timing the start and sampling its memory. BENCH_TSX=1 runs the sources
// through tsx's loader instead (`npm run dev`'s way), to compare.
import { fork, spawn, type ChildProcess, type Serializable } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";

export const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });

const status = (url: string) =>
  new Promise<number>((resolve) => {
    const req = http.get(url, { agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", () => resolve(0));
    req.setTimeout(2000, () => (req.destroy(), resolve(0)));
  });

export type Server = {
  child: ChildProcess;
  appPort: number;
  redirectPort: number;
  /** Spawn to the first 200 of /_/health, ms. */
  startMs: number;
  rssMb(): number;
  stop(): Promise<number | null>;
};

export async function startServer(env: NodeJS.ProcessEnv, opts: { profileDir?: string; dataDir: string; databaseUrl?: string; cwd?: string }): Promise<Server> {
  const [appPort, redirectPort] = [await freePort(), await freePort()];
  const appEnv: NodeJS.ProcessEnv = {
    ...env,
    APP_URL: `http://127.0.0.1:${appPort}`,
    REDIRECT_URL: `http://127.0.0.1:${redirectPort}`,
    DATA_DIR: opts.dataDir,
    LOG_LEVEL: "warn",
    EDGE_HEADERS: "none",
    TRUST_PROXY: "false",
    // Destination checks would fetch the seeded links' destinations during the rounds; the health
    // section turns them on.
    LINK_HEALTH_CHECKS: env.LINK_HEALTH_CHECKS ?? "off",
  };
  if (opts.databaseUrl) appEnv.DATABASE_URL = opts.databaseUrl;
  else delete appEnv.DATABASE_URL;
  delete appEnv.API_URL;
  delete appEnv.REDIS_URL; // one instance: in-memory rate limits, as `npm start` defaults
  const prof = opts.profileDir ? ["--cpu-prof", `--cpu-prof-dir=${opts.profileDir}`] : [];
  const t0 = performance.now();
  // node's flags as `npm start` gives them (its script in package.json), or BENCH_NODE_ARGS instead
  // (V8 memory experiments, docs/performance.md; empty for none).
  const extra = (env.BENCH_NODE_ARGS ?? startNodeFlags()).split(" ").filter(Boolean);
  const entry = env.BENCH_TSX === "1" ? ["--import", "tsx", "server/main.ts"] : ["build/server.mjs"];
  const child = spawn(process.execPath, [...prof, ...extra, ...entry], {
    cwd: opts.cwd ?? root,
    stdio: ["ignore", "inherit", "inherit"],
    env: appEnv,
  });
  const health = `http://127.0.0.1:${redirectPort}/_/health`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    if (performance.now() - t0 > 120_000) throw new Error("server did not start within 120 s");
    if ((await status(health)) === 200) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  const startMs = performance.now() - t0;
  return {
    child,
    appPort,
    redirectPort,
    startMs,
    rssMb: () => {
      try {
        const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"));
        return m ? Number(m[1]) / 1024 : NaN;
      } catch {
        return NaN;
      }
    },
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve(child.exitCode);
        child.once("exit", (code) => resolve(code));
        child.kill("SIGTERM");
      }),
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Stops the server, waiting at most `ms` for it: a bench's cleanup must not hang on a stuck stop. */
export const stopWithin = (server: { stop(): Promise<unknown> }, ms = 20_000) => Promise.race([server.stop().catch(() => null), sleep(ms)]);

/**
 * Runs the bench's helper process bench/`script` (a bare server, a receiver, a load client) through
 * tsx; resolves once it sent its first message, which says it is ready (and may carry its port).
 * `ask` sends it a message and resolves with its answer, the next message it sends.
 */
export async function forkBench<M = unknown>(script: string, args: string[] = []) {
  const child = fork(path.join(root, "bench", script), args, {
    execPath: path.join(root, "node_modules", ".bin", "tsx"),
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const next = <A>() => new Promise<A>((r) => child.once("message", (m) => r(m as A)));
  const ready = await next<M>();
  const ask = <A>(message: Serializable) => {
    const answer = next<A>();
    child.send(message);
    return answer;
  };
  return { child, ready, ask };
}

/** A bare node:http server (bench/`script`) on a free port, answering from `data`, which it reads from `file` as JSON. */
export async function startBareServer(script: string, file: string, data: unknown) {
  writeFileSync(file, JSON.stringify(data));
  const port = await freePort();
  const { child } = await forkBench(script, [String(port), file]);
  return { port, child };
}

/** The flags between `node` and the bundle in package.json's start script. */
function startNodeFlags(): string {
  const start: string = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")).scripts.start;
  const m = /\bnode((?:\s+--\S+)*)\s+build\/server\.mjs/.exec(start);
  if (!m) throw new Error(`bench: cannot read node's flags from the start script: ${start}`);
  return m[1].trim();
}

/** Samples `f` every `ms` until stopped; returns the peak. */
export function samplePeak(f: () => number, ms = 100) {
  let peak = 0;
  const t = setInterval(() => (peak = Math.max(peak, f() || 0)), ms);
  return { stop: () => (clearInterval(t), Math.max(peak, f() || 0)) };
}

/** CPU time (user + system) a process has used so far, ms (Linux /proc; NaN elsewhere). */
export function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks of 1/100 s
  } catch {
    return NaN;
  }
}

/** CPU time used so far by every PostgreSQL process of this machine (the database is local), ms. */
export function postgresCpuMs(): number {
  let total = 0;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, "utf8").startsWith("postgres")) total += cpuMs(Number(pid)) || 0;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/**
 * Waits until the service has written the clicks it buffered (`clicks_buffered` 0 at /_/metrics), so a
 * round's leftovers neither slow the next round nor go uncounted; at most 60 s. Answers how many were
 * buffered when it started and how long they took, or undefined at once from a server without the
 * gauge (an earlier revision).
 */
export async function clicksWritten(redirectPort: number): Promise<{ left: number; ms: number } | undefined> {
  const started = Date.now();
  let left: number | undefined;
  while (Date.now() < started + 60_000) {
    const text = await fetch(`http://127.0.0.1:${redirectPort}/_/metrics`).then((r) => r.text());
    const m = /^clicks_buffered (\d+)$/m.exec(text);
    if (!m) return undefined;
    left ??= Number(m[1]);
    if (m[1] === "0") return { left, ms: Date.now() - started };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("the service's clicks were not written within 60 s of the round");
}
