// `npx tsx bench/rules.ts`: the redirect path with the second round's link rules vs a plain link, on
// a fresh PostgreSQL database it creates (and drops), against the service as `npm start` runs it
// (BENCH_TSX=1: from the sources). Alternating rounds in one run; target: rules/plain ≥ 0.95, judged on
// the median of the rounds' ratios.
//   plain: 1,000 links with `url` only.
//   rules: 1,000 links with two 50/50 variants, two language rules and forward_query.
// Both get the same requests: a query string to forward, and half the visitors preferring a language
// with a rule (French) while the other half prefer one without (English), so both the language rule
// and the variants choose. Every click is counted afterwards: as many as 301 answers, on both sides.
// Env: BENCH_DATABASE_URL, BENCH_ROUNDS (10: rounds swing by ±20 % on 2 shared cores, and a 5 % target
// needs more of them than the other sections), BENCH_SECONDS (5), BENCH_CONNECTIONS (50), BENCH_TSX.
import { execSync } from "node:child_process";
import { PEOPLE } from "../server/redirect/ua-fixtures";
import { median, percentile, runLoad, type LoadResult } from "./load";
import { f, loadAverage, machine, targetRows, type TargetRow } from "./report";
import { DEFAULT_ADMIN_URL, withScratchDatabase, type Scratch } from "./scratch";
import { runAsScript } from "./script";
import { insertLinks, linkRows } from "./seed";
import { clicksWritten, cpuMs, root, startServer, stopWithin, type Server } from "./server";

const env = process.env;
const ROUNDS = Number(env.BENCH_ROUNDS ?? 10);
const SECONDS = Number(env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 50);
const ADMIN_URL = env.BENCH_DATABASE_URL ?? DEFAULT_ADMIN_URL;
const N = 1000;

const LANGUAGES = ["en-US,en;q=0.9", "fr-FR,fr;q=0.9,en;q=0.5"];

/** The same visit for either kind of link: only the slug differs. */
const visit = (host: string, prefix: string) => {
  let i = 0;
  return () =>
    `GET /${prefix}-${(Math.random() * N) | 0}?utm_source=news&utm_medium=mail HTTP/1.1\r\nHost: ${host}\r\nUser-Agent: ${PEOPLE.windowsChrome}\r\n` +
    `Accept: */*\r\nAccept-Language: ${LANGUAGES[i++ % 2]}\r\nConnection: keep-alive\r\n\r\n`;
};

const rps = (rs: LoadResult[]) => rs.reduce((s, r) => s + r.requests, 0) / rs.reduce((s, r) => s + r.seconds, 0);
const redirects = (rs: LoadResult[]) => rs.reduce((s, r) => s + (r.statuses.get(301) ?? 0) + (r.statuses.get(302) ?? 0), 0);

/** Runs the section on a database of its own; returns its rows (bench/run.ts prints them with its own). */
export const benchRules = (adminUrl = ADMIN_URL) => withScratchDatabase("bench_rules", adminUrl, measure);

async function measure({ url, dataDir, sql, open }: Scratch): Promise<TargetRow[]> {
  const { rows, row } = targetRows();
  let server: Server | null = null;
  const database = await open(4);
  try {
    const now = Date.now();
    const plain = linkRows(N, "public", (i) => ({ slug: `plain-${i}`, url: `https://example.com/landing/${i}?utm_campaign=bench` }), now);
    const ruled = linkRows(
      N,
      "public",
      (i) => ({
        slug: `rules-${i}`,
        url: `https://example.com/a/${i}?utm_campaign=bench`,
        variants: [
          { url: `https://example.com/a/${i}?utm_campaign=bench`, weight: 50 },
          { url: `https://example.com/b/${i}?utm_campaign=bench`, weight: 50 },
        ],
        targeting: { languages: { fr: `https://example.fr/${i}`, de: `https://example.de/${i}` } },
        forwardQuery: true,
      }),
      now,
    );
    await insertLinks(database.db, plain);
    await insertLinks(database.db, ruled);
    await sql.unsafe(`vacuum analyze links`);

    // The destination checks would reach example.com: off, they are not what is measured here.
    server = await startServer({ ...env, LINK_HEALTH_CHECKS: "off" }, { dataDir, databaseUrl: url, profileDir: env.BENCH_PROFILE });
    const port = server.redirectPort;
    const host = `127.0.0.1:${port}`;
    const round = (prefix: string) => runLoad({ host: "127.0.0.1", port, connections: CONNECTIONS, seconds: SECONDS, request: visit(host, prefix) });
    // Each answer's Location, once: the rules did choose (a variant, a language, the forwarded query).
    const check = await runLoad({ host: "127.0.0.1", port, connections: 1, maxRequests: 4, request: visit(host, "rules"), keepBodies: 0 });
    if ((check.statuses.get(301) ?? 0) + (check.statuses.get(302) ?? 0) !== 4) throw new Error(`rules links answered ${JSON.stringify([...check.statuses])}`);
    const all = { plain: [] as LoadResult[], rules: [] as LoadResult[] };
    // The server's own CPU time per visit, the round and its clicks' writing: less swayed than
    // throughput by what else shares the cores.
    const cpu = { plain: 0, rules: 0 };
    const warm = { plain: await round("plain"), rules: await round("rules") };
    await clicksWritten(port);
    for (let r = 1; r <= ROUNDS; r++) {
      for (const k of r % 2 ? (["plain", "rules"] as const) : (["rules", "plain"] as const)) {
        const cpu0 = cpuMs(server.child.pid!);
        const res = await round(k);
        await clicksWritten(port);
        cpu[k] += cpuMs(server.child.pid!) - cpu0;
        all[k].push(res);
        console.log(
          `  round ${r} ${k.padEnd(6)} ${f(res.requests / res.seconds).padStart(7)} req/s  p99 ${percentile(res.latenciesMs.slice().sort(), 99).toFixed(2)} ms  load ${loadAverage()}`,
        );
      }
    }
    const [p, q] = [rps(all.plain), rps(all.rules)];
    row("redirects, plain links", `${f(p)} req/s`);
    row("redirects, links with variants, languages and forward_query", `${f(q)} req/s`);
    // Each round's two runs are back to back, so what drifts on a shared machine falls on both; the
    // median of the rounds' ratios leaves out a round that a checkpoint or an autovacuum hit.
    const paired = all.rules.map((r, i) => r.requests / r.seconds / (all.plain[i].requests / all.plain[i].seconds)).sort((a, b) => a - b);
    const mid = median(paired);
    row("redirect throughput rules/plain, all rounds", f(q / p, 3));
    row(
      "redirect throughput rules/plain, median of the rounds' ratios",
      `${f(mid, 3)} (rounds ${paired.map((x) => f(x, 2)).join(", ")})`,
      "≥ 0.95",
      mid >= 0.95,
    );
    const [cp, cq] = [(cpu.plain * 1000) / redirects(all.plain), (cpu.rules * 1000) / redirects(all.rules)];
    row("server CPU a visit, plain / rules", `${f(cp)} / ${f(cq)} µs (plain/rules ${f(cp / cq, 3)})`);
    // A graceful stop flushes what is buffered; then every click is counted.
    await server.stop();
    server = null;
    const stored = async (prefix: string) =>
      (await sql.unsafe<{ n: number }[]>(`select count(*)::int n from clicks c join links l on l.id = c.link_id where l.slug like '${prefix}-%'`))[0].n;
    const [sp, sr] = [await stored("plain"), await stored("rules")];
    const [ap, ar] = [redirects([...all.plain, warm.plain]), redirects([...all.rules, warm.rules, check])];
    row("clicks stored / redirects answered, plain", `${f(sp)} / ${f(ap)}`, "all", sp === ap);
    row("clicks stored / redirects answered, rules", `${f(sr)} / ${f(ar)}`, "all", sr === ar);
    const byRule = await sql.unsafe<{ rule: string; n: number }[]>(
      `select rule, count(*)::int n from clicks c join links l on l.id = c.link_id where l.slug like 'rules-%' group by 1 order by 1`,
    );
    row("rules links' clicks by rule", byRule.map((b) => `${b.rule} ${f(b.n)}`).join(", "));
    return rows;
  } finally {
    if (server) await stopWithin(server);
  }
}

runAsScript(import.meta.url, async () => {
  if (env.BENCH_TSX !== "1") execSync("node scripts/ensure-build.mjs", { cwd: root, stdio: "inherit" });
  console.log(machine());
  await benchRules();
});
