// `npx tsx bench/health.ts`: the destination checks' two targets, on a fresh PostgreSQL database it
// creates (and drops), against the service as `npm start` runs it (BENCH_TSX=1: from the sources).
//   1. 100,000 links over 2,000 hosts, all due at once, checked by the service's own scheduler
//      (target ≤ 10 minutes from the server's start, its sweep included) at most 1 request a
//      second per host, as seen by the destinations' server (bench/health-destinations.ts: every
//      host a loopback address of its own, so the prober keys them apart; WEBHOOK_ALLOW_PRIVATE=true
//      lets the checks reach them).
//   2. redirect throughput while a check run is going vs while none is, alternating rounds in one
//      run (target: with ≥ 0.9 × without). Between rounds the unchecked links are made due or not.
// Env: BENCH_DATABASE_URL (admin URL; default postgres://postgres@127.0.0.1:5432/postgres),
// BENCH_HEALTH_LINKS (100000), BENCH_HEALTH_HOSTS (2000), BENCH_HEALTH_LIMIT_S (720: gives up after),
// BENCH_ROUNDS (3), BENCH_SECONDS (5), BENCH_CONNECTIONS (50), BENCH_ONLY (run,ratio), BENCH_TSX.
import { execSync, type ChildProcess } from "node:child_process";
import { createUserWithWorkspace } from "../server/lib/users";
import { PEOPLE } from "../server/redirect/ua-fixtures";
import { percentile, runLoad, slugRequest, type LoadResult } from "./load";
import { f, loadAverage, machine, targetRows, type TargetRow } from "./report";
import { DEFAULT_ADMIN_URL, withScratchDatabase, type Scratch } from "./scratch";
import { runAsScript } from "./script";
import { insertLinks, redirectLinkRows } from "./seed";
import { clicksWritten, cpuMs, forkBench, root, sleep, startServer, stopWithin, type Server } from "./server";

const env = process.env;
const LINKS = Number(env.BENCH_HEALTH_LINKS ?? 100_000);
const HOSTS = Number(env.BENCH_HEALTH_HOSTS ?? 2000);
const LIMIT_S = Number(env.BENCH_HEALTH_LIMIT_S ?? 720);
const ROUNDS = Number(env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 50);
const REDIRECT_LINKS = 1000;
const ONLY = env.BENCH_ONLY ? new Set(env.BENCH_ONLY.split(",")) : null;
const on = (s: string) => !ONLY || ONLY.has(s);
const ADMIN_URL = env.BENCH_DATABASE_URL ?? DEFAULT_ADMIN_URL;
/** A next check this far ahead: not due during the bench. */
const FAR = 4_000_000_000_000;

type DestStats = { requests: number; hosts: number; minGapMs: number | null; maxPerSecond: number };

async function startDestinations() {
  const { child, ready, ask } = await forkBench<{ port: number }>("health-destinations.ts");
  return { child, port: ready.port, stats: () => ask<DestStats>("stats"), reset: () => ask<DestStats>("reset") };
}

/** Host `h`'s address: 127.10.0.1, 127.10.1.1, … (h in 0..65535). */
const hostAddress = (h: number) => `127.${10 + (h >> 8)}.${h & 255}.1`;

const rps = (rs: LoadResult[]) => rs.reduce((s, r) => s + r.requests, 0) / rs.reduce((s, r) => s + r.seconds, 0);

/** Runs both sections on a database of their own; returns their rows (bench/run.ts prints them with its own). */
export const benchHealth = (adminUrl = ADMIN_URL) => withScratchDatabase("bench_health", adminUrl, measure);

async function measure({ url, dataDir, sql, open }: Scratch): Promise<TargetRow[]> {
  const { rows, row } = targetRows();
  const children: ChildProcess[] = [];
  let server: Server | null = null;
  const database = await open(4);
  try {
    const dest = await startDestinations();
    children.push(dest.child);
    const owner = await createUserWithWorkspace(database.db, { email: "owner@bench.test", plan: "pro" });
    const ws = owner.workspaceId;
    const now = Date.now();
    // The checked links: link i on host (i × 7919) mod HOSTS, so one host's links are spread over the
    // whole table (no run of one host's links at once), as a real workspace's would be.
    await sql.unsafe(`
      insert into links (id, workspace_id, slug, url, kind, created_at, updated_at)
      select 'h' || lpad(i::text, 7, '0'), '${ws}', 'hc-' || i,
        'http://127.' || (10 + ((i * 7919) % ${HOSTS}) / 256) || '.' || (((i * 7919) % ${HOSTS}) % 256) || '.1:${dest.port}/d/' || i,
        'link', ${now}, ${now}
      from generate_series(1, ${LINKS}) i`);
    if (hostAddress(1) !== "127.10.1.1") throw new Error("host address scheme drifted");
    // The redirect links: plain, public, with their check far ahead (they point at example.com).
    const redirectLinks = redirectLinkRows(REDIRECT_LINKS, now);
    await insertLinks(database.db, redirectLinks);
    await sql.unsafe(`
      insert into link_health (link_id, workspace_id, status, failures, next_check_at)
      select id, workspace_id, 'unknown', 0, ${FAR} from links where workspace_id <> '${ws}'`);
    await sql.unsafe(`vacuum analyze links`);
    const slugs = redirectLinks.map((l) => l.slug);

    const counts = async () => {
      const [r] = await sql.unsafe<{ checked: number; leased: number; failed: number }[]>(`
        select count(*) filter (where checked_at is not null)::int checked,
               count(*) filter (where lease_until is not null)::int leased,
               count(*) filter (where status <> 'ok' and checked_at is not null)::int failed
        from link_health where workspace_id = '${ws}'`);
      return r;
    };

    console.log(`  load average before the server starts: ${loadAverage()}`);
    server = await startServer({ ...env, WEBHOOK_ALLOW_PRIVATE: "true", LINK_HEALTH_CHECKS: "on" }, { dataDir, databaseUrl: url });
    children.push(server.child);
    const started = performance.now() - server.startMs;

    if (on("run")) {
      let last = 0;
      let c = await counts();
      while (c.checked < LINKS && performance.now() - started < LIMIT_S * 1000) {
        await sleep(2000);
        c = await counts();
        if (c.checked - last >= LINKS / 10 || c.checked === LINKS) {
          console.log(`  ${f((performance.now() - started) / 1000, 0)} s: ${f(c.checked)} checked, load average ${loadAverage()}`);
          last = c.checked;
        }
      }
      const seconds = (performance.now() - started) / 1000;
      // The server's own CPU time over the run (its start included): what a check costs it, whatever the machine's load.
      const serverCpu = cpuMs(server.child.pid!);
      const s = await dest.stats();
      const what = `${f(LINKS)} links over ${f(HOSTS)} hosts, all due, checked from the server's start`;
      if (c.checked < LINKS) row(what, `${f(c.checked)} checked in ${f(seconds)} s (gave up)`, "≤ 600 s", false);
      else row(what, `${f(seconds, 0)} s (${f(LINKS / seconds)} links/s), load average ${loadAverage()}`, "≤ 600 s", seconds <= 600);
      row("server CPU time per link checked (its start included)", `${f(serverCpu / Math.max(1, c.checked), 2)} ms (${f(serverCpu / 1000, 1)} s in all)`);
      if (c.failed) row("links not ok after the run (should be none)", f(c.failed));
      row(
        "most requests to one host within one second (destinations' server)",
        `${s.maxPerSecond}; shortest gap between two requests to one host ${s.minGapMs === null ? "over 1 s" : `${f(s.minGapMs, 1)} ms`}; ${f(s.requests)} requests to ${f(s.hosts)} hosts`,
        "≤ 1",
        s.maxPerSecond <= 1,
      );
    }

    if (on("ratio")) {
      // Every checked link unchecked again, and not due: no check is running.
      const pause = async () => {
        await sql.unsafe(`update link_health set next_check_at = ${FAR} where workspace_id = '${ws}' and checked_at is null and next_check_at < ${FAR}`);
        for (let i = 0; i < 600 && (await counts()).leased > 0; i++) await sleep(100);
      };
      await sql.unsafe(
        `update link_health set next_check_at = ${FAR}, checked_at = null, status = 'unknown', destinations = null, failures = 0 where workspace_id = '${ws}'`,
      );
      await pause();
      // Due again, and running before the round starts (the scheduler polls every few seconds).
      const resume = async () => {
        const before = (await counts()).checked;
        await sql.unsafe(`update link_health set next_check_at = 0 where workspace_id = '${ws}' and checked_at is null`);
        for (let i = 0; i < 300 && (await counts()).checked < before + 20; i++) await sleep(100);
      };
      const request = slugRequest(`127.0.0.1:${server.redirectPort}`, slugs, PEOPLE.windowsChrome);
      const round = () => runLoad({ host: "127.0.0.1", port: server!.redirectPort, connections: CONNECTIONS, seconds: SECONDS, request });
      await round(); // warm-up
      await clicksWritten(server.redirectPort);
      const totals = { without: [] as LoadResult[], during: [] as LoadResult[] };
      const checksDuring: number[] = [];
      await dest.reset();
      for (let r = 1; r <= ROUNDS; r++) {
        for (const k of r % 2 ? (["without", "during"] as const) : (["during", "without"] as const)) {
          if (k === "during") await resume();
          else await pause();
          const before = (await counts()).checked;
          const res = await round();
          const checks = (await counts()).checked - before;
          if (k === "during") checksDuring.push(checks / res.seconds);
          await clicksWritten(server.redirectPort);
          totals[k].push(res);
          console.log(
            `  round ${r} ${k.padEnd(7)} ${f(res.requests / res.seconds).padStart(7)} req/s  p99 ${percentile(res.latenciesMs.slice().sort(), 99).toFixed(2)} ms  checks ${f(checks / res.seconds)}/s  load ${loadAverage()}`,
          );
        }
      }
      await pause();
      const [w, d] = [rps(totals.without), rps(totals.during)];
      row("redirects with no check running", `${f(w)} req/s`);
      row("redirects during a check run", `${f(d)} req/s, ${f(checksDuring.reduce((a, b) => a + b, 0) / checksDuring.length)} checks/s meanwhile`);
      row("redirect throughput during/without a check run", f(d / w, 2), "≥ 0.90", d / w >= 0.9);
      const s = await dest.stats();
      row("most requests to one host within one second, during the rounds", String(s.maxPerSecond), "≤ 1", s.maxPerSecond <= 1);
    }
    return rows;
  } finally {
    if (server) await stopWithin(server);
    for (const c of children) if (c.exitCode === null) c.kill("SIGTERM");
  }
}

runAsScript(import.meta.url, async () => {
  if (env.BENCH_TSX !== "1") execSync("node scripts/ensure-build.mjs", { cwd: root, stdio: "inherit" });
  console.log(machine());
  await benchHealth();
});
