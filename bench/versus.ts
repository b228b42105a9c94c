// `npx tsx bench/versus.ts [rev]`: the redirect and API benchmarks of this checkout and of an earlier
// revision (default: the last one before the dashboard became a client of the routers), in one run, so
// the machine's noise falls on both alike. The earlier revision is checked out beside this one
// (git worktree, under os.tmpdir()), shares this node_modules (its dependencies are a subset) and is
// built once. Each side gets its own fresh PostgreSQL database, user and pro-plan token, made by its
// own CLI, and the same links, made through its own POST /links; the rounds then alternate sides,
// the order swapped each round, and every figure is the median of the rounds.
// Env: BENCH_DATABASE_URL (admin URL; default postgres://postgres@127.0.0.1:5432/postgres),
// BENCH_ROUNDS (5), BENCH_SECONDS (5), BENCH_CONNECTIONS (50), BENCH_LINKS (1000), BENCH_WORKLOADS
// (`redirect`: only the redirects), BENCH_PROFILE (a folder: each side's server writes a CPU profile
// under its name there, for `node --cpu-prof`'s viewers).
import { execFileSync, execSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import postgres from "postgres";
import { apiRequest, median, runLoad, slugRequest, summary, type LoadResult } from "./load";
import { clicksWritten, cpuMs, postgresCpuMs, root, startServer, type Server } from "./server";
import { PEOPLE } from "../server/redirect/ua-fixtures";

const env = process.env;
const REV = process.argv[2] ?? "2080b8b^";
const ROUNDS = Number(env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 50);
const LINKS = Number(env.BENCH_LINKS ?? 1000);
const ADMIN_URL = env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

/** `writer` made the redirect links and makes links in the rounds; `reader` owns exactly 100 links, the listing's page (the earlier revision lists a workspace whole). */
type Side = { name: string; dir: string; db: string; dataDir?: string; server?: Server; writer?: string; reader?: string; slugs: string[] };

/** The earlier revision, checked out and built once; kept between runs under its commit's name. */
function prepareBefore(rev: string): { name: string; dir: string } {
  const commit = execFileSync("git", ["rev-parse", "--short", rev], { cwd: root, encoding: "utf8" }).trim();
  const dir = path.join(os.tmpdir(), `linkshort-before-${commit}`);
  if (!existsSync(path.join(dir, "build/server.mjs"))) {
    if (!existsSync(dir)) execFileSync("git", ["worktree", "add", "--detach", dir, commit], { cwd: root, stdio: "inherit" });
    if (!existsSync(path.join(dir, "node_modules"))) symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"));
    execSync("npm run -s build", { cwd: dir, stdio: "inherit" });
  }
  return { name: `before (${commit})`, dir };
}

function cli(side: Side, args: string[]): string {
  return execFileSync(path.join(root, "node_modules/.bin/tsx"), ["server/cli.ts", ...args], {
    cwd: side.dir,
    encoding: "utf8",
    env: { ...env, DATABASE_URL: side.db, LOG_LEVEL: "warn" },
  });
}

async function setUp(side: Side, admin: postgres.Sql) {
  const name = new URL(side.db).pathname.slice(1);
  await admin.unsafe(`create database "${name}"`);
  side.dataDir = mkdtempSync(path.join(os.tmpdir(), "versus-"));
  const profileDir = env.BENCH_PROFILE ? path.join(env.BENCH_PROFILE, side.name.split(" ")[0]) : undefined;
  side.server = await startServer(env, { dataDir: side.dataDir, databaseUrl: side.db, cwd: side.dir, profileDir });
  // Pro plan: 10,000 token calls an hour, enough for the set-up and every round.
  const token = (who: string) => {
    cli(side, ["user:create", "--email", `${who}@versus.test`, "--plan", "pro"]);
    return JSON.parse(cli(side, ["token:create", "--email", `${who}@versus.test`, "--name", "versus"])).token as string;
  };
  [side.writer, side.reader] = [token("writer"), token("reader")];
  const host = `127.0.0.1:${side.server.appPort}`;
  const create = async (token: string, n: number) => {
    let i = 0;
    const made = await runLoad({
      host: "127.0.0.1",
      port: side.server!.appPort,
      connections: 4,
      maxRequests: n,
      keepBodies: n,
      request: apiRequest(
        "POST",
        host,
        () => "/api/links",
        token,
        () => ({ url: `https://example.com/versus/${i++}`, tags: ["versus"] }),
      ),
    });
    const slugs = (made.bodies ?? []).map((b) => (JSON.parse(b) as { slug: string }).slug);
    if (slugs.length !== n) throw new Error(`${side.name}: ${slugs.length} of ${n} links created`);
    return slugs;
  };
  side.slugs = await create(side.writer, LINKS);
  await create(side.reader, 100);
}

type Figures = { rps: number; p50: number; p99: number; cpu: number; pg: number };
const measure = (r: LoadResult, cpu: number, pg: number): Figures => {
  const s = summary(r.latenciesMs);
  return { rps: r.requests / r.seconds, p50: s.p50, p99: s.p99, cpu: cpu / r.requests, pg: pg / r.requests };
};

/** One round of each workload against one side. */
async function round(side: Side): Promise<Record<string, Figures>> {
  const server = side.server!;
  const out: Record<string, Figures> = {};
  // CPU over the load and, for redirects, until their clicks are written: storing them is part of a redirect's cost.
  const timed = async (what: string, run: () => Promise<LoadResult>, settle?: () => Promise<unknown>) => {
    const [c0, pg0] = [cpuMs(server.child.pid!), postgresCpuMs()];
    const r = await run();
    await settle?.();
    const bad = [...r.statuses.keys()].filter((s) => s >= 400);
    if (bad.length || r.errors) throw new Error(`${side.name} ${what}: statuses ${JSON.stringify(Object.fromEntries(r.statuses))}, errors ${r.errors}`);
    out[what] = measure(r, cpuMs(server.child.pid!) - c0, postgresCpuMs() - pg0);
  };
  const redirectHost = `127.0.0.1:${server.redirectPort}`;
  const appHost = `127.0.0.1:${server.appPort}`;
  await timed(
    "redirect",
    () =>
      runLoad({
        host: "127.0.0.1",
        port: server.redirectPort,
        connections: CONNECTIONS,
        seconds: SECONDS,
        request: slugRequest(redirectHost, side.slugs, PEOPLE.windowsChrome),
      }),
    () => clicksWritten(server.redirectPort),
  );
  if (env.BENCH_WORKLOADS === "redirect") return out;
  await timed("GET /links", () =>
    runLoad({
      host: "127.0.0.1",
      port: server.appPort,
      connections: 10,
      maxRequests: 1500,
      request: apiRequest("GET", appHost, () => "/api/links", side.reader!),
    }),
  );
  let i = 0;
  await timed("POST /links", () =>
    runLoad({
      host: "127.0.0.1",
      port: server.appPort,
      connections: 10,
      maxRequests: 800,
      request: apiRequest(
        "POST",
        appHost,
        () => "/api/links",
        side.writer!,
        () => ({ url: `https://example.com/round/${i++}` }),
      ),
    }),
  );
  return out;
}

const f = (n: number, d = 0) => n.toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d });

async function main() {
  const before = prepareBefore(REV);
  execSync("npm run -s build", { cwd: root, stdio: "inherit" }); // this checkout's bundle, as it is now
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  const tag = Date.now().toString(36);
  const dbUrl = (n: string) => Object.assign(new URL(ADMIN_URL), { pathname: `/versus_${n}_${tag}` }).href;
  const sides: Side[] = [
    { ...before, slugs: [], db: dbUrl("before") },
    { name: "after (this checkout)", dir: root, slugs: [], db: dbUrl("after") },
  ];
  try {
    for (const s of sides) await setUp(s, admin);
    const load = os.loadavg()[0];
    console.log(
      `${os.cpus().length} cores, load ${load.toFixed(2)}; ${ROUNDS} rounds, ${LINKS} links a side, redirects ${SECONDS} s at ${CONNECTIONS} connections`,
    );
    const results = new Map<Side, Record<string, Figures>[]>(sides.map((s) => [s, []]));
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 ? [...sides].reverse() : sides;
      for (const s of order) results.get(s)!.push(await round(s));
      process.stdout.write(`round ${r + 1}/${ROUNDS} done\n`);
    }
    const workloads = Object.keys(results.get(sides[0])![0]);
    console.log(`\n| workload | side | req/s | p50 ms | p99 ms | CPU ms/request: server, PostgreSQL |\n|---|---|---|---|---|---|`);
    const med = (s: Side, w: string, k: keyof Figures) => median(results.get(s)!.map((x) => x[w][k]));
    for (const w of workloads) {
      for (const s of sides)
        console.log(
          `| ${w} | ${s.name} | ${f(med(s, w, "rps"))} | ${f(med(s, w, "p50"), 2)} | ${f(med(s, w, "p99"), 2)} | ${f(med(s, w, "cpu"), 3)}, ${f(med(s, w, "pg"), 3)} |`,
        );
      const ratio = med(sides[1], w, "rps") / med(sides[0], w, "rps");
      console.log(`| ${w} | after / before | ${f(ratio, 2)}× | | | |`);
    }
    console.log(`load at the end ${os.loadavg()[0].toFixed(2)}`);
  } finally {
    for (const s of sides) await s.server?.stop();
    for (const s of sides) await admin.unsafe(`drop database if exists "${new URL(s.db).pathname.slice(1)}" with (force)`);
    await admin.end();
    for (const s of sides) if (s.dataDir) rmSync(s.dataDir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
