// `npm run bench`: the redirect host (spawned like `npm start`, on PostgreSQL) against a bare
// node:http server answering 301 from a Map of the same slugs, in alternating rounds.
// Env: BENCH_DATABASE_URL (admin URL, default DATABASE_URL or postgres://postgres@127.0.0.1:5432/postgres),
// BENCH_ROUNDS (3), BENCH_SECONDS (5), BENCH_CONNECTIONS (50), BENCH_LINKS (1000).
import { fork, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { count } from "drizzle-orm";
import postgres from "postgres";
import { openDatabase } from "../db/client";
import { clicks, links } from "../db/schema";
import { newLinkId } from "../server/lib/ids";
import { PEOPLE } from "../server/redirect/ua-fixtures";
import { percentile, runLoad, type LoadResult } from "./load";

const env = process.env;
const ROUNDS = Number(env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 50);
const LINKS = Number(env.BENCH_LINKS ?? 1000);
const ADMIN_URL = env.BENCH_DATABASE_URL ?? env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const UA = env.BENCH_UA ?? PEOPLE.windowsChrome;
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const tsx = path.join(root, "node_modules", ".bin", "tsx");

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });

async function waitFor(url: string, child: ChildProcess, ms = 90_000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not answer within ${ms / 1000} s`);
}

const exited = (child: ChildProcess) => new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once("exit", (code) => resolve(code))));

type Totals = { results: LoadResult[] };
const merge = (t: Totals) => {
  const requests = t.results.reduce((s, r) => s + r.requests, 0);
  const seconds = t.results.reduce((s, r) => s + r.seconds, 0);
  const all = new Float64Array(requests);
  let o = 0;
  for (const r of t.results) all.set(r.latenciesMs, (o += r.latenciesMs.length) - r.latenciesMs.length);
  all.sort();
  const statuses = new Map<number, number>();
  for (const r of t.results) for (const [s, n] of r.statuses) statuses.set(s, (statuses.get(s) ?? 0) + n);
  return { requests, rps: requests / seconds, p50: percentile(all, 50), p99: percentile(all, 99), statuses, errors: t.results.reduce((s, r) => s + r.errors, 0) };
};

async function main() {
  const dbName = `bench_${randomBytes(4).toString("hex")}`;
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${dbName}`);
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "linkshort-bench-"));
  const children: ChildProcess[] = [];
  try {
    // 1,000 links in the public workspace.
    const database = await openDatabase({ databaseUrl: dbUrl.href, poolSize: 2 });
    const now = Date.now();
    const rows = Array.from({ length: LINKS }, (_, i) => ({
      id: newLinkId(),
      workspaceId: "public",
      slug: `bench-${i}`,
      url: `https://example.com/landing/${i}?utm_source=bench`,
      createdAt: now,
      updatedAt: now,
    }));
    for (let i = 0; i < rows.length; i += 500) await database.db.insert(links).values(rows.slice(i, i + 500));
    const slugs = rows.map((r) => r.slug);
    const mapFile = path.join(dataDir, "slugs.json");
    writeFileSync(mapFile, JSON.stringify(rows.map((r) => [r.slug, r.url])));

    const [appPort, redirectPort, barePort] = [await freePort(), await freePort(), await freePort()];
    const appEnv: NodeJS.ProcessEnv = { ...env, APP_URL: `http://127.0.0.1:${appPort}`, REDIRECT_URL: `http://127.0.0.1:${redirectPort}`, DATABASE_URL: dbUrl.href, DATA_DIR: dataDir, LOG_LEVEL: "warn", EDGE_HEADERS: "none", TRUST_PROXY: "false" };
    delete appEnv.API_URL;
    delete appEnv.REDIS_URL; // one instance: in-memory rate limits, as `npm start` defaults
    // BENCH_PROFILE=dir writes a CPU profile of the server there (open it in Chrome DevTools).
    const app = env.BENCH_PROFILE
      ? spawn(process.execPath, ["--cpu-prof", `--cpu-prof-dir=${env.BENCH_PROFILE}`, "--import", "tsx", "server/main.ts"], { cwd: root, stdio: ["ignore", "inherit", "inherit"], env: appEnv })
      : spawn(tsx, ["server/main.ts"], { cwd: root, stdio: ["ignore", "inherit", "inherit"], env: appEnv });
    children.push(app);
    const bare = fork(path.join(root, "bench", "bare-server.ts"), [String(barePort), mapFile], { execPath: tsx, stdio: ["ignore", "inherit", "inherit", "ipc"] });
    children.push(bare);
    await Promise.all([waitFor(`http://127.0.0.1:${redirectPort}/_/health`, app), new Promise((r) => bare.once("message", r))]);

    const targets = {
      bare: { host: "127.0.0.1", port: barePort, hostHeader: `127.0.0.1:${barePort}` },
      app: { host: "127.0.0.1", port: redirectPort, hostHeader: `127.0.0.1:${redirectPort}` },
    };
    const load = (k: keyof typeof targets, seconds: number) => runLoad({ ...targets[k], slugs, connections: CONNECTIONS, seconds, userAgent: UA });

    console.log(`warming up (${LINKS} links, ${CONNECTIONS} connections)…`);
    const warm = { bare: await load("bare", 2), app: await load("app", 3) };
    const totals: Record<keyof typeof targets, Totals> = { bare: { results: [] }, app: { results: [] } };
    for (let round = 1; round <= ROUNDS; round++) {
      for (const k of round % 2 ? (["bare", "app"] as const) : (["app", "bare"] as const)) {
        const r = await load(k, SECONDS);
        totals[k].results.push(r);
        console.log(`round ${round} ${k.padEnd(4)} ${(r.requests / r.seconds).toFixed(0).padStart(7)} req/s  p99 ${percentile(r.latenciesMs.slice().sort(), 99).toFixed(2)} ms`);
      }
    }

    // A graceful stop flushes buffered clicks; then count what was stored.
    app.kill("SIGTERM");
    const code = await exited(app);
    bare.kill("SIGTERM");
    const [{ n }] = await database.db.select({ n: count() }).from(clicks);
    await database.close();

    const b = merge(totals.bare);
    const a = merge(totals.app);
    const answered = (a.statuses.get(301) ?? 0) + (warm.app.statuses.get(301) ?? 0);
    const fmt = (x: number, d = 0) => x.toFixed(d).padStart(10);
    console.log("");
    console.log(`| target              |      req/s |   p50 (ms) |   p99 (ms) |   requests |`);
    console.log(`|---------------------|------------|------------|------------|------------|`);
    console.log(`| bare node:http      | ${fmt(b.rps)} | ${fmt(b.p50, 2)} | ${fmt(b.p99, 2)} | ${fmt(b.requests)} |`);
    console.log(`| redirect host (app) | ${fmt(a.rps)} | ${fmt(a.p50, 2)} | ${fmt(a.p99, 2)} | ${fmt(a.requests)} |`);
    console.log("");
    console.log(`throughput ratio app/bare: ${(a.rps / b.rps).toFixed(2)} (target ≥ 0.50)`);
    console.log(`p99 ratio app/bare:        ${(a.p99 / b.p99).toFixed(2)} (target ≤ 3)`);
    console.log(`redirects answered (301):  ${answered}  (statuses: ${JSON.stringify(Object.fromEntries(a.statuses))}, errors: ${a.errors + b.errors})`);
    console.log(`clicks recorded:           ${n}  ${Number(n) === answered ? "(all)" : `(MISSING ${answered - Number(n)})`}`);
    console.log(`server exit code after SIGTERM: ${code}`);
    if (Number(n) !== answered || code !== 0) process.exitCode = 1;
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
    await admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
