// `npm run bench`: every performance target (docs/performance.md) in one run, on a fresh PostgreSQL database it creates
// (and drops afterwards) and a fresh PGlite directory.
//   1. redirects: the service vs a bare node:http server (301 from a Map), alternating rounds;
//      the same on a branded domain (a verified domain, served by Host);
//      embedded: the same against the service on PGlite (no DATABASE_URL)
//   2. click ingestion: the batch recorder on its own, a burst into PostgreSQL
//   3. analytics: 1M clicks on one link, 10M in the workspace (BENCH_SMALL=1: a tenth)
//   4. slugs: allocation with 99% of the 4-character namespace taken; concurrent inserts
//   5. memory under redirect load with ~1.66M links stored; start to first answer
//   6. POST /links and GET /links throughput
//   7. CSV import: 100,000 rows by the command line and by a server's import runner (bench/import.ts)
//   8. linkslist: the dashboard's links list (link.dashboardList) over 10,000 links with tags and clicks
//   9. og: redirects while one client floods the share-card images (/_/og/{id}.png, 300 ids) vs without
//  10. linktree: the public page of a 50-item linktree, warm, one visit at a time, vs a bare node:http server (bench/linktree.ts)
// Env: BENCH_DATABASE_URL (admin URL; default postgres://postgres@127.0.0.1:5432/postgres),
// BENCH_ROUNDS (3), BENCH_SECONDS (5), BENCH_CONNECTIONS (50), BENCH_LINKS (1000), BENCH_SMALL,
// BENCH_ONLY (comma list of: redirects,embedded,api,analytics,memory,slugs,ingest,start,import,linkslist,og,linktree,rules,health),
// BENCH_API_WARM (300) and BENCH_API_N (3000): requests of the API section's warm-up and measure, BENCH_POST_ONLY=1
// (the API section's POST /links alone, for profiling it), BENCH_PROFILE=dir (CPU profile of the server during the redirect rounds), BENCH_NODE_ARGS (node flags
// for the server), BENCH_TSX=1 (run the server through tsx instead of its bundle).
import { execSync, type ChildProcess } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { count, eq } from "drizzle-orm";
import type postgres from "postgres";
import { openDatabase, type Database } from "../db/client";
import { clicks, domains } from "../db/schema";
import { newLinkId } from "../server/lib/ids";
import { createUserWithWorkspace, issueToken } from "../server/lib/users";
import { PEOPLE } from "../server/redirect/ua-fixtures";
import { apiRequest, percentile, runLoad, slugRequest, summary, type LoadResult } from "./load";
import { describeRow, f, loadAverage, loadPerCores } from "./report";
import { DEFAULT_ADMIN_URL, withScratchDatabase, type Scratch } from "./scratch";
import { runAsScript } from "./script";
import { NAMESPACE, analyze, insertLinks, isFreeSlot, linkRows, redirectLinkRows, seedClicks, seedSlugNamespace, slugOf } from "./seed";
import { clicksWritten, cpuMs, forkBench, postgresCpuMs, root, freePort, samplePeak, startBareServer, startServer, stopWithin, type Server } from "./server";
import { benchIngest, benchSlugs, inProcessServices } from "./sections";
import { benchImportCli, benchImportServer } from "./import";
import { benchHealth } from "./health";
import { benchRules } from "./rules";
import { benchLinktreePage, LINKTREE_ITEMS, LINKTREE_TARGET_MS } from "./linktree";
import { createContextInner } from "../server/trpc/context";
import { createCaller } from "../server/routers";
import type { ListInput } from "../server/routers/links/list.schema";
import { overview } from "../app/components/analytics/overview.server";

const env = process.env;
const SMALL = Boolean(env.BENCH_SMALL && env.BENCH_SMALL !== "0");
const ROUNDS = Number(env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(env.BENCH_SECONDS ?? (SMALL ? 3 : 5));
const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 50);
const LINKS = Number(env.BENCH_LINKS ?? 1000);
const ONLY = env.BENCH_ONLY ? new Set(env.BENCH_ONLY.split(",")) : null;
const on = (s: string) => !ONLY || ONLY.has(s);
const ADMIN_URL = env.BENCH_DATABASE_URL ?? DEFAULT_ADMIN_URL;
const UA = env.BENCH_UA ?? PEOPLE.windowsChrome;
const CLICKS_TOTAL = SMALL ? 1_000_000 : 10_000_000;
const CLICKS_BIG = SMALL ? 100_000 : 1_000_000;
/** The branded domain of the redirect section. */
const BRAND = "go.bench.example";

type Row = { section: string; what: string; measured: string; target: string; met: boolean | null; load: string };
const rows: Row[] = [];
/** Each row carries the load when it was measured, so a reader can judge the figure. */
const row = (section: string, what: string, measured: string, target = "", met: boolean | null = null) => {
  rows.push({ section, what, measured, target, met, load: loadPerCores() });
  console.log(`  ${describeRow(what, measured, target, met)}  [load ${loadPerCores()}]`);
};
/** Every click of the redirects answered was stored, once the server stopped (gracefully: exit code 0). */
const clicksRow = (section: string, stored: number, answered: number, code: number | null) =>
  row(
    section,
    "clicks recorded / redirects answered",
    `${f(stored)} / ${f(answered)}${code === 0 ? "" : ` (exit code ${code})`}`,
    "equal",
    stored === answered && code === 0,
  );
const log = (s: string) => console.log(`\n== ${s}`);
const timed = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
  const t = performance.now();
  const r = await fn();
  console.log(`  (${what}: ${f((performance.now() - t) / 1000, 1)} s)`);
  return r;
};

const merge = (results: LoadResult[]) => {
  const requests = results.reduce((s, r) => s + r.requests, 0);
  const seconds = results.reduce((s, r) => s + r.seconds, 0);
  const all = new Float64Array(requests);
  let o = 0;
  for (const r of results) {
    all.set(r.latenciesMs, o);
    o += r.latenciesMs.length;
  }
  all.sort();
  const statuses = new Map<number, number>();
  for (const r of results) for (const [s, n] of r.statuses) statuses.set(s, (statuses.get(s) ?? 0) + n);
  return { requests, rps: requests / seconds, p50: percentile(all, 50), p99: percentile(all, 99), statuses, errors: results.reduce((s, r) => s + r.errors, 0) };
};

/** `settle`: waits until the server has written what the round left buffered (its clicks); says how much that was. */
/** `pid`: the server's process, whose CPU (and PostgreSQL's) per answer each round then prints. */
type Target = { port: number; host: string; settle?: () => Promise<string>; pid?: number };

/**
 * Waits until the service's `clicks_buffered` gauge (/_/metrics) is 0: a round's clicks are
 * written before the next round starts, so a writer catching up never runs during (and slows) the
 * bare server's round, which would flatter the ratio. Says how many clicks the round left behind
 * and how long they took: a writer that falls behind flatters the service's own round instead
 * (its work is put off until after it).
 */
const settleClicks = (redirectPort: number) => async () => {
  const w = await clicksWritten(redirectPort);
  if (!w) throw new Error("the service has no clicks_buffered gauge at /_/metrics");
  return `  clicks left at the round's end ${f(w.left)}, written ${f(w.ms)} ms after it`;
};

/**
 * Alternating rounds against several servers (each round in another order, so a noisy moment hurts
 * them alike), after a warm-up of each; prints each round and returns every target's results.
 */
async function alternate<K extends string>(targets: Record<K, Target>, slugs: string[], warmSeconds: Record<K, number>) {
  const keys = Object.keys(targets) as K[];
  const load = (k: K, seconds: number) =>
    runLoad({ host: "127.0.0.1", port: targets[k].port, connections: CONNECTIONS, seconds, request: slugRequest(targets[k].host, slugs, UA) });
  const warm = {} as Record<K, LoadResult>;
  for (const k of keys) {
    warm[k] = await load(k, warmSeconds[k]);
    await targets[k].settle?.();
  }
  const totals = Object.fromEntries(keys.map((k) => [k, [] as LoadResult[]])) as unknown as Record<K, LoadResult[]>;
  for (let round = 1; round <= ROUNDS; round++) {
    // Rotate the order each round.
    const order = keys.map((_, i) => keys[(i + round - 1) % keys.length]);
    for (const k of order) {
      const pid = targets[k].pid;
      const cpu0 = pid ? [cpuMs(pid), postgresCpuMs()] : [];
      const r = await load(k, SECONDS);
      const settled = (await targets[k].settle?.()) ?? "";
      // Over the round and its settling: the clicks' writing is part of an answer's cost.
      const cpu = pid
        ? `, CPU per answer: server ${f(((cpuMs(pid) - cpu0[0]) * 1000) / r.requests)} µs, PostgreSQL ${f(((postgresCpuMs() - cpu0[1]) * 1000) / r.requests)} µs`
        : "";
      totals[k].push(r);
      console.log(
        `  round ${round} ${k.padEnd(5)} ${f(r.requests / r.seconds).padStart(7)} req/s  p99 ${percentile(r.latenciesMs.slice().sort(), 99).toFixed(2)} ms${settled}${cpu}`,
      );
    }
  }
  return { warm, totals };
}

/** The bare node:http server (301 from a Map of these links), started as a child process. */
const startBare = (dataDir: string, redirectLinks: { slug: string; url: string }[]) =>
  startBareServer(
    "bare-server.ts",
    path.join(dataDir, "slugs.json"),
    redirectLinks.map((r) => [r.slug, r.url]),
  );

/**
 * `n` links in `workspaceId` for the links list: creation times over 90 days, 0-3 tags of 20
 * (tag-7 on one link in 20), some with a password, an expiry (half of them past) or a share card;
 * then `clicks` clicks spread over them with their hourly rollups (seedClicks).
 */
async function seedLinksList(sql: postgres.Sql, workspaceId: string, n: number, clicks: number) {
  const now = Date.now();
  await sql.unsafe(`
    insert into links (id, workspace_id, slug, url, kind, tags, expires_at, password_hash, og_title, created_at, updated_at)
    select 'l' || lpad(i::text, 7, '0'), '${workspaceId}', 'list-' || i, 'https://example.com/list/' || i || '?campaign=c' || (i % 97), 'link',
      case when i % 4 = 0 then '{}'::text[]
           when i % 4 = 1 then array['tag-' || (i % 20)]
           else array['tag-' || (i % 20), 'camp-' || (i % 13)] end,
      case when i % 10 = 0 then ${now} + (i % 3 - 1) * 86400000::bigint end,
      case when i % 15 = 0 then 'x' end,
      case when i % 6 = 0 then 'Title ' || i end,
      ${now} - i::bigint * 777000, ${now} - i::bigint * 777000
    from generate_series(1, ${n}) i`);
  await sql.unsafe(`vacuum analyze links`);
  const ids = (await sql.unsafe<{ id: string }[]>(`select id from links where workspace_id = '${workspaceId}' order by id`)).map((r) => r.id);
  await seedClicks(sql, { workspaceId, bigLinkId: ids[0], big: Math.floor(clicks / 10), otherLinkIds: ids.slice(1), total: clicks });
}

/** link.dashboardList through a tRPC caller, as the page's loader calls it: a new context (token lookup included) per call. */
async function benchLinksList(database: Database, databaseUrl: string, dataDir: string, token: string) {
  const app = await inProcessServices(database, databaseUrl, dataDir);
  const caller = () => createCaller(createContextInner(app, { headers: { authorization: `Bearer ${token}` }, method: "GET" }));
  const list = (input: Partial<ListInput>) => async () => (await caller().link.dashboardList(input as ListInput)).links.length;
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  // The analytics page's overview: its series, comparison and every breakdown, from breakdown calls.
  const analytics = (input: { from: string; to: string }) => async () => (await overview(caller(), { tz: "UTC", filters: {}, ...input })).total;
  const cases: [string, () => Promise<number>][] = [
    ["newest first, page 1", list({})],
    ["newest first, page 100", list({ page: 100 })],
    ["most clicks, page 1", list({ sort: "clicks" })],
    ["tag filter (tag-7)", list({ tag: "tag-7" })],
    ['search ("list/12")', list({ q: "list/12" })],
    ["status expired, most clicks", list({ status: "expired", sort: "clicks" })],
    ["analytics page, last 30 days (series, comparison and every breakdown)", analytics({ from: day(Date.now() - 29 * 86_400_000), to: day(Date.now()) })],
  ];
  const out: [string, { p50: number; p95: number; n: number }][] = [];
  for (const [what, call] of cases) {
    const first = await call(); // warms the pool and the plan cache
    if (!first) throw new Error(`linkslist: ${what} found nothing`);
    const lat: number[] = [];
    for (let i = 0; i < (SMALL ? 30 : what.startsWith("analytics") ? 30 : 100); i++) {
      const t = performance.now();
      await call();
      lat.push(performance.now() - t);
    }
    const sorted = Float64Array.from(lat).sort();
    out.push([what, { p50: percentile(sorted, 50), p95: percentile(sorted, 95), n: lat.length }]);
  }
  await app.limits.close();
  app.mail.close();
  return out;
}

async function measure({ url: databaseUrl, dataDir, sql, open }: Scratch) {
  const children: ChildProcess[] = [];
  const servers: { stop(): Promise<unknown> }[] = [];
  const database = await open(10);
  try {
    const now = Date.now();
    // The redirect links: LINKS plain links in the public workspace.
    const redirectLinks = redirectLinkRows(LINKS, now);
    await insertLinks(database.db, redirectLinks);
    const slugs = redirectLinks.map((r) => r.slug);
    // The same slugs on a verified branded domain, in its own namespace.
    const brandId = newLinkId();
    await database.db.insert(domains).values({
      id: brandId,
      workspaceId: "public",
      name: BRAND,
      verificationValue: "links-verify=bench",
      verified: true,
      verifiedAt: now,
      createdAt: now,
    });
    const brandLinks = redirectLinks.map((r) => ({ ...r, id: newLinkId(), domainId: brandId, url: r.url.replace("/landing/", "/brand/") }));
    await insertLinks(database.db, brandLinks);
    // API users (pro: 10,000 token calls an hour each).
    const writer = await createUserWithWorkspace(database.db, { email: "writer@bench.test", plan: "pro" });
    const reader = await createUserWithWorkspace(database.db, { email: "reader@bench.test", plan: "pro" });
    const analyst = await createUserWithWorkspace(database.db, { email: "analyst@bench.test", plan: "pro" });
    const [writerToken, readerToken, analystToken] = [
      (await issueToken(database.db, writer.id, "bench")).token,
      (await issueToken(database.db, reader.id, "bench")).token,
      (await issueToken(database.db, analyst.id, "bench")).token,
    ];
    const readerLinks = linkRows(100, reader.workspaceId, (i) => ({
      slug: `reader-${i}`,
      url: `https://example.com/r/${i}`,
      tags: ["bench"],
      createdAt: now - i,
      updatedAt: now - i,
    }));
    await insertLinks(database.db, readerLinks);
    const analystLinks = linkRows(SMALL ? 100 : 1000, analyst.workspaceId, (i) => ({ slug: `an-${i}`, url: `https://example.com/a/${i}` }), now);
    await insertLinks(database.db, analystLinks);
    // Statistics for what was just inserted: a test cluster may run without autovacuum.
    await analyze(sql);

    const listing = {
      databaseUrl,
      workspaceId: reader.workspaceId,
      newToken: async () => (await issueToken(database.db, reader.id, "bench")).token,
    };
    // ---- 1. redirects, 6. API, 5. start on PostgreSQL (small database) -----------------------
    if (on("redirects") || on("api") || on("start")) {
      log(`redirects: ${LINKS} links, ${CONNECTIONS} connections, ${ROUNDS}×${SECONDS} s rounds each, alternating`);
      const app = await startServer(env, { dataDir, databaseUrl, profileDir: env.BENCH_PROFILE });
      servers.push(app);
      children.push(app.child);
      row("start", "start to first answer, PostgreSQL", `${f(app.startMs)} ms`, "≤ 1,500 ms", app.startMs <= 1500);
      if (on("redirects")) {
        const bare = await startBare(dataDir, redirectLinks);
        children.push(bare.child);
        // `brand`: the same server and slugs, by the Host of the branded domain.
        const rss = samplePeak(app.rssMb);
        const { warm, totals } = await alternate(
          {
            bare: { port: bare.port, host: `127.0.0.1:${bare.port}` },
            app: { port: app.redirectPort, host: `127.0.0.1:${app.redirectPort}`, settle: settleClicks(app.redirectPort), pid: app.child.pid },
            brand: { port: app.redirectPort, host: BRAND, settle: settleClicks(app.redirectPort), pid: app.child.pid },
          },
          slugs,
          { bare: 2, app: 3, brand: 3 },
        );
        const peakRss1k = rss.stop();
        bare.child.kill("SIGTERM");
        const b = merge(totals.bare);
        const a = merge(totals.app);
        const d = merge(totals.brand);
        const answered = [a, warm.app, d, warm.brand].reduce((n, r) => n + (r.statuses.get(301) ?? 0), 0);
        row("redirects", "bare node:http", `${f(b.rps)} req/s, p50 ${f(b.p50, 2)} ms, p99 ${f(b.p99, 2)} ms`);
        row("redirects", "service (PostgreSQL, every click recorded)", `${f(a.rps)} req/s, p50 ${f(a.p50, 2)} ms, p99 ${f(a.p99, 2)} ms`);
        row("redirects", "throughput service/bare", f(a.rps / b.rps, 2), "≥ 0.50", a.rps / b.rps >= 0.5);
        row("redirects", "p99 service/bare", f(a.p99 / b.p99, 2), "≤ 3", a.p99 / b.p99 <= 3);
        row("redirects", `service on a branded domain (Host: ${BRAND}, same slugs)`, `${f(d.rps)} req/s, p50 ${f(d.p50, 2)} ms, p99 ${f(d.p99, 2)} ms`);
        row("redirects", "throughput branded/default", f(d.rps / a.rps, 2), "≈ 1 (as fast)", d.rps / a.rps >= 0.9);
        if ((d.statuses.get(301) ?? 0) !== d.requests) console.log(`  branded answers: ${JSON.stringify([...d.statuses])}`);
        row("memory", "peak RSS under redirect load, 1,000 links", `${f(peakRss1k)} MB`);
        if (on("api")) await benchApi(app, writerToken, readerToken).then(() => (env.BENCH_POST_ONLY ? undefined : benchListing(app, listing)));
        // A graceful stop flushes buffered clicks; then count what was stored.
        const code = await app.stop();
        const [{ n }] = await database.db.select({ n: count() }).from(clicks).where(eq(clicks.workspaceId, "public"));
        clicksRow("redirects", Number(n), answered, code);
        if (a.errors + b.errors) console.log(`  socket errors: ${a.errors + b.errors}`);
      } else {
        if (on("api")) await benchApi(app, writerToken, readerToken).then(() => (env.BENCH_POST_ONLY ? undefined : benchListing(app, listing)));
        await app.stop();
      }
    }

    // ---- 9. redirects while the share-card images are flooded ----------------------------------------
    if (on("og")) await benchOgFlood(database, databaseUrl, path.join(dataDir, "og"), slugs);

    // ---- 1b. redirects on the embedded database (PGlite: `npm start` without DATABASE_URL) ----------
    if (on("embedded")) {
      log(`redirects on the embedded database: ${LINKS} links, ${CONNECTIONS} connections, ${ROUNDS}×${SECONDS} s rounds each, alternating`);
      const dir = path.join(dataDir, "embedded");
      const pgliteDir = path.join(dir, "pglite");
      const local = await openDatabase({ pgliteDir });
      await insertLinks(local.db, redirectLinks);
      await local.close();
      const app = await startServer(env, { dataDir: dir, profileDir: env.BENCH_PROFILE });
      servers.push(app);
      children.push(app.child);
      const bare = await startBare(dir, redirectLinks);
      children.push(bare.child);
      const { warm, totals } = await alternate(
        {
          bare: { port: bare.port, host: `127.0.0.1:${bare.port}` },
          app: { port: app.redirectPort, host: `127.0.0.1:${app.redirectPort}`, settle: settleClicks(app.redirectPort) },
        },
        slugs,
        { bare: 2, app: 3 },
      );
      bare.child.kill("SIGTERM");
      const b = merge(totals.bare);
      const a = merge(totals.app);
      row("embedded", "bare node:http", `${f(b.rps)} req/s, p50 ${f(b.p50, 2)} ms, p99 ${f(b.p99, 2)} ms`);
      row("embedded", "service (embedded PGlite, every click recorded)", `${f(a.rps)} req/s, p50 ${f(a.p50, 2)} ms, p99 ${f(a.p99, 2)} ms`);
      row("embedded", "throughput service/bare", f(a.rps / b.rps, 2), "≥ 0.40", a.rps / b.rps >= 0.4);
      row("embedded", "p99 service/bare", f(a.p99 / b.p99, 2), "≤ 5", a.p99 / b.p99 <= 5);
      const code = await app.stop();
      const check = await openDatabase({ pgliteDir });
      const [{ n }] = await check.db.select({ n: count() }).from(clicks);
      await check.close();
      const answered = [a, warm.app].reduce((s, r) => s + (r.statuses.get(301) ?? 0), 0);
      clicksRow("embedded", Number(n), answered, code);
    }

    // ---- 7. CSV import (before the namespace is seeded full: a tenth of the rows get generated slugs) ----
    if (on("import")) {
      const n = SMALL ? 10_000 : 100_000;
      log(`CSV import: ${f(n)} rows (9 in 10 with a slug), PostgreSQL`);
      const c = await benchImportCli(database, { databaseUrl, dataDir, rows: n });
      row(
        "import",
        `npm run cli -- links:import, ${f(n)} rows (the whole command, start included)`,
        `${f(c.ms / 1000, 1)} s, ${f(c.rowsPerSecond)} rows/s, peak RSS ${f(c.peakRssMb)} MB; ${f(c.created)} created`,
        "≤ 60 s",
        c.ms <= 60_000 && c.created === n,
      );
      const s = await benchImportServer(database, env, { databaseUrl, dataDir, rows: n });
      row(
        "import",
        `the server's import runner, ${f(n)} rows (queued to done)`,
        `${f(s.ms / 1000, 1)} s, ${f(s.rowsPerSecond)} rows/s, server RSS ${f(s.idleRssMb ?? NaN)} MB idle, peak ${f(s.peakRssMb)} MB; ${f(s.created)} created`,
        "≤ 60 s",
        s.ms <= 60_000 && s.created === n,
      );
    }

    // ---- 8. the dashboard's links list, before the big seeding ----------------------
    if (on("linkslist")) {
      const n = 10_000;
      const clicksTotal = SMALL ? 50_000 : 200_000;
      log(`links list: ${f(n)} links with tags, ${f(clicksTotal)} clicks, link.dashboardList in process`);
      const lister = await createUserWithWorkspace(database.db, { email: "lister@bench.test", plan: "pro" });
      const listerToken = (await issueToken(database.db, lister.id, "bench")).token;
      await timed("links + clicks + rollups", () => seedLinksList(sql, lister.workspaceId, n, clicksTotal));
      const r = await benchLinksList(database, databaseUrl, path.join(dataDir, "linkslist"), listerToken);
      for (const [what, s] of r) {
        const page = what.startsWith("analytics");
        row(
          "linkslist",
          `${what}, ${f(n)} links (server time, p50 / p95)`,
          `p50 ${f(s.p50, 1)} ms, p95 ${f(s.p95, 1)} ms (${s.n} calls)`,
          page ? "p50 ≤ 200 ms" : "p50 ≤ 50 ms",
          s.p50 <= (page ? 200 : 50),
        );
      }
    }

    // ---- seeding: 99% of the slug namespace, 10M clicks ---------------------------------------
    const needBig = on("analytics") || on("memory") || on("slugs");
    let namespaceLinks = 0;
    if (needBig) {
      log(`seeding ${f(CLICKS_TOTAL)} clicks (${f(CLICKS_BIG)} on one link) and 99% of the 36⁴ slug namespace`);
      if (on("analytics"))
        await timed("clicks + rollups", () =>
          seedClicks(sql, {
            workspaceId: analyst.workspaceId,
            bigLinkId: analystLinks[0].id,
            big: CLICKS_BIG,
            otherLinkIds: analystLinks.slice(1).map((l) => l.id),
            total: CLICKS_TOTAL,
          }),
        );
      if (on("memory") || on("slugs")) namespaceLinks = await timed("4-character slug links", () => seedSlugNamespace(sql));
      if (namespaceLinks) console.log(`  ${f(namespaceLinks)} links with 4-character slugs`);
    }

    // ---- 3. analytics, 5. memory with 1M+ links, start on a big database ----------------------
    if (on("analytics") || on("memory")) {
      log("analytics and memory on the seeded database");
      const app = await startServer(env, { dataDir, databaseUrl });
      servers.push(app);
      children.push(app.child);
      row("start", `start to first answer, PostgreSQL with ${f(namespaceLinks + LINKS)} links`, `${f(app.startMs)} ms`, "≤ 1,500 ms", app.startMs <= 1500);
      if (on("analytics")) await benchAnalytics(app.appPort, analystToken, analystLinks[0].id, CLICKS_BIG, sql);
      if (on("memory") && namespaceLinks) {
        const taken: string[] = [];
        for (let i = 0; i < NAMESPACE; i++) if (!isFreeSlot(i)) taken.push(slugOf(i));
        const rss = samplePeak(app.rssMb);
        const r = await runLoad({
          host: "127.0.0.1",
          port: app.redirectPort,
          connections: CONNECTIONS,
          seconds: SMALL ? 5 : 15,
          request: slugRequest(`127.0.0.1:${app.redirectPort}`, taken, UA),
        });
        const peak = rss.stop();
        const m = merge([r]);
        // Where the memory is, right after the load (prom-client's process metrics).
        const metrics = await fetch(`http://127.0.0.1:${app.redirectPort}/_/metrics`).then((x) => x.text());
        const mb = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m").exec(metrics)?.[1]) / 2 ** 20;
        const heap = `V8 heap used ${f(mb("nodejs_heap_size_used_bytes"))} MB of ${f(mb("nodejs_heap_size_total_bytes"))} MB, external ${f(mb("nodejs_external_memory_bytes"))} MB`;
        row(
          "memory",
          `redirect load over ${f(taken.length)} stored links (random slugs, mostly cache misses)`,
          `${f(m.rps)} req/s, p99 ${f(m.p99, 1)} ms, statuses ${JSON.stringify(Object.fromEntries(m.statuses))}`,
        );
        row("memory", "peak RSS under that load", `${f(peak)} MB (after it: ${heap})`, "≤ 200 MB", peak <= 200);
      }
      await app.stop();
    }

    // ---- 4. slugs ----------------------------------------------------------------------------
    if (on("slugs")) {
      log("slug allocation with 99% of the namespace taken");
      const s = await benchSlugs(database, { picks: 2000, workers: 8, perWorker: SMALL ? 100 : 250 });
      row(
        "slugs",
        "pickFreeSlug (one round trip to PostgreSQL)",
        `p50 ${f(s.pick.p50, 3)} ms, p99 ${f(s.pick.p99, 3)} ms (${f(s.pick.n)} picks)`,
        "p99 ≤ 1 ms",
        s.pick.p99 <= 1,
      );
      row("slugs", "insertLink with a generated slug, 8 concurrent writers", `p50 ${f(s.insert.p50, 2)} ms, p99 ${f(s.insert.p99, 2)} ms`);
      row(
        "slugs",
        "slugs handed out / distinct",
        `${f(s.made)} / ${f(s.distinct)}${s.uniqueInDb ? "" : " (DUPLICATES IN DB)"}`,
        "all distinct",
        s.made === s.distinct && s.uniqueInDb && s.allFourChars,
      );
    }

    // ---- 2. click ingestion ------------------------------------------------------------------
    if (on("ingest")) {
      log("click ingestion: the batch recorder alone, a burst into PostgreSQL");
      const n = SMALL ? 100_000 : 500_000;
      const r = await benchIngest(databaseUrl, path.join(dataDir, "ingest"), { n, chunk: 5000, publicIps: false });
      row(
        "ingest",
        `burst of ${f(n)} visits, location from the edge or none (offered at ${f(r.offeredPerSecond)}/s)`,
        `${f(r.perSecond)} clicks/s stored (${f(r.stored)} rows)`,
        "≥ 50,000/s",
        r.perSecond >= 50_000 && r.stored === n,
      );
      row(
        "ingest",
        "memory during the burst",
        `peak RSS ${f(r.peakRssMb)} MB (+${f(r.rssGrowthMb)} MB), peak waiting ${f(r.peakBuffered)} (bound 100,000 in memory, the rest spills to DATA_DIR)`,
        "bounded",
        r.rssGrowthMb < 400,
      );
      const g = await benchIngest(databaseUrl, path.join(dataDir, "ingest-geo"), { n: n / 5, chunk: 5000, publicIps: true });
      row(
        "ingest",
        `burst of ${f(n / 5)} visits from 2,000 public addresses (GeoIP in the writer)`,
        `${f(g.perSecond)} clicks/s stored (${f(g.stored)} rows), peak RSS ${f(g.peakRssMb)} MB`,
      );
    }

    // ---- 10. the linktree public page (its own server and database) ---------------------------
    if (on("linktree")) {
      log(`linktree public page: ${LINKTREE_ITEMS} items, caches warm, one visit at a time, alternating with a bare node:http server`);
      const l = await benchLinktreePage({ adminUrl: ADMIN_URL, visits: SMALL ? 1_000 : 2_000, env });
      row(
        "linktree",
        `public page of ${LINKTREE_ITEMS} items (${f(l.bytes)} bytes), ${f(l.visits)} visits`,
        `p50 ${f(l.p50, 2)} ms, p99 ${f(l.p99, 2)} ms; server CPU ${f(l.cpuMs, 2)} ms a visit`,
        `p50 ≤ ${LINKTREE_TARGET_MS} ms`,
        l.p50 <= LINKTREE_TARGET_MS,
      );
      row("linktree", "bare node:http, the same bytes from memory", `p50 ${f(l.bareP50, 2)} ms, p99 ${f(l.bareP99, 2)} ms`);
      row("linktree", "p50 service/bare", f(l.p50 / l.bareP50, 2));
    }

    // ---- link rules (variants, languages, forwarding) vs plain; destination checks (own databases)
    if (on("rules")) {
      log("rules: redirects of links with variants, languages and forward_query vs plain links (bench/rules.ts)");
      for (const r of await benchRules(ADMIN_URL)) row("rules", r.what, r.measured, r.target, r.met);
    }
    if (on("health")) {
      log("health: 100,000 links over 2,000 hosts checked; redirects during a check run (bench/health.ts)");
      for (const r of await benchHealth(ADMIN_URL)) row("health", r.what, r.measured, r.target, r.met);
    }

    // ---- 5. start on PGlite ------------------------------------------------------------------
    if (on("start")) {
      log("start on PGlite");
      const dir = path.join(dataDir, "pglite-start");
      const first = await startServer(env, { dataDir: dir });
      await first.stop();
      const again = await startServer(env, { dataDir: dir });
      await again.stop();
      row("start", "start to first answer, PGlite, new data directory (creates the database)", `${f(first.startMs)} ms`, "≤ 3,000 ms", first.startMs <= 3000);
      row("start", "start to first answer, PGlite, existing data directory", `${f(again.startMs)} ms`, "≤ 3,000 ms", again.startMs <= 3000);
    }
  } finally {
    for (const s of servers) await stopWithin(s, 10_000);
    for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  }
}

/**
 * 6. POST /links (new link, generated slug) and GET /links (workspace of 100 links), with the CPU
 * the server and PostgreSQL spent per request (where a request's time goes, docs/performance.md).
 */
/**
 * An anonymous client cycling through 300 share-card images (4 connections, as fast as answers come,
 * from a process of its own: bench/og-flood.ts) next to the redirect load, against the same load alone: alternating rounds on one server (its own
 * data directory, so every image starts unrendered). Images are rendered off the request thread, kept
 * on disk and budgeted per address, so the redirects should keep nearly all their throughput.
 */
async function benchOgFlood(database: Database, databaseUrl: string, dataDir: string, slugs: string[]) {
  const IMAGES = 300;
  const FLOOD_CONNECTIONS = 4;
  log(
    `redirects while /_/og/ is flooded: ${CONNECTIONS} connections on redirects, ${FLOOD_CONNECTIONS} on ${IMAGES} images, ${ROUNDS}×${SECONDS} s rounds each, alternating`,
  );
  const now = Date.now();
  const cards = linkRows(
    IMAGES,
    "public",
    (i) => ({
      slug: `og-card-${i}`,
      url: `https://example.com/card/${i}`,
      ogTitle: `Share card number ${i}: a title long enough to wrap onto a second line of the image`,
    }),
    now,
  );
  await insertLinks(database.db, cards);
  const app = await startServer(env, { dataDir, databaseUrl });
  let stopFlooder = () => {};
  try {
    const redirectHost = `127.0.0.1:${app.redirectPort}`;
    const settle = settleClicks(app.redirectPort);
    const redirects = (seconds: number) =>
      runLoad({ host: "127.0.0.1", port: app.redirectPort, connections: CONNECTIONS, seconds, request: slugRequest(redirectHost, slugs, UA) });
    const flooder = await forkBench("og-flood.ts", [String(app.redirectPort), redirectHost, String(FLOOD_CONNECTIONS), cards.map((c) => c.id).join(",")]);
    stopFlooder = () => flooder.child.kill("SIGTERM");
    const flood = async (seconds: number): Promise<LoadResult> => {
      const m = await flooder.ask<{ requests: number; seconds: number; statuses: [number, number][]; errors: number }>({ seconds });
      return { ...m, statuses: new Map(m.statuses), latenciesMs: new Float64Array(0) };
    };
    const flooded = async (seconds: number) => {
      const [r, f] = await Promise.all([redirects(seconds), flood(seconds)]);
      return { r, flood: f };
    };
    await redirects(3);
    await settle();
    const quiet: LoadResult[] = [];
    const loud: LoadResult[] = [];
    const floods: LoadResult[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      for (const k of round % 2 ? (["quiet", "flood"] as const) : (["flood", "quiet"] as const)) {
        if (k === "quiet") {
          const r = await redirects(SECONDS);
          quiet.push(r);
          console.log(
            `  round ${round} quiet ${f(r.requests / r.seconds).padStart(7)} req/s  p99 ${percentile(r.latenciesMs.slice().sort(), 99).toFixed(2)} ms${await settle()}`,
          );
        } else {
          const { r, flood } = await flooded(SECONDS);
          loud.push(r);
          floods.push(flood);
          console.log(
            `  round ${round} flood ${f(r.requests / r.seconds).padStart(7)} req/s  p99 ${percentile(r.latenciesMs.slice().sort(), 99).toFixed(2)} ms; images ${f(flood.requests / flood.seconds)} req/s ${JSON.stringify(Object.fromEntries(flood.statuses))}${await settle()}`,
          );
        }
      }
    }
    const q = merge(quiet);
    const l = merge(loud);
    const fl = merge(floods);
    row("og", "redirects alone", `${f(q.rps)} req/s, p50 ${f(q.p50, 2)} ms, p99 ${f(q.p99, 2)} ms`);
    row(
      "og",
      `redirects while ${FLOOD_CONNECTIONS} connections cycle through ${IMAGES} image ids`,
      `${f(l.rps)} req/s, p50 ${f(l.p50, 2)} ms, p99 ${f(l.p99, 2)} ms`,
    );
    row("og", "the flood's answers", `${f(fl.rps)} req/s: ${[...fl.statuses].map(([s, n]) => `${f(n)}× ${s}`).join(", ")}`);
    row("og", "redirect throughput flooded/alone", f(l.rps / q.rps, 2), "≥ 0.90", l.rps / q.rps >= 0.9);
  } finally {
    stopFlooder();
    await app.stop();
  }
}

async function benchApi(app: Server, writerToken: string, readerToken: string) {
  log("API throughput (10 connections, pro-plan tokens)");
  const appPort = app.appPort;
  const host = `127.0.0.1:${appPort}`;
  let i = 0;
  const measure = async (what: string, request: () => string, target: { rps: number; p50: number }) => {
    await runLoad({ host: "127.0.0.1", port: appPort, connections: 10, maxRequests: Number(env.BENCH_API_WARM ?? 300), request }); // warm-up
    const [node0, pg0] = [cpuMs(app.child.pid!), postgresCpuMs()];
    const r = merge([await runLoad({ host: "127.0.0.1", port: appPort, connections: 10, maxRequests: Number(env.BENCH_API_N ?? 3000), request })]);
    const [node, pg] = [(cpuMs(app.child.pid!) - node0) / r.requests, (postgresCpuMs() - pg0) / r.requests];
    row(
      "api",
      what,
      `${f(r.rps)} req/s, p50 ${f(r.p50, 1)} ms, p99 ${f(r.p99, 1)} ms; CPU per request: server ${f(node, 2)} ms, PostgreSQL ${f(pg, 2)} ms; statuses ${JSON.stringify(Object.fromEntries(r.statuses))}`,
      `≥ ${f(target.rps)} req/s, p50 ≤ ${target.p50} ms`,
      r.rps >= target.rps && r.p50 <= target.p50,
    );
  };
  await measure(
    "POST /links (generated slug)",
    apiRequest(
      "POST",
      host,
      () => "/api/links",
      writerToken,
      () => ({ url: `https://example.com/api/${i++}`, tags: ["bench"] }),
    ),
    { rps: 1500, p50: 10 },
  );
  if (env.BENCH_POST_ONLY) return;
  await measure(
    "GET /links (100 links)",
    apiRequest("GET", host, () => "/api/links", readerToken),
    { rps: 2000, p50: 5 },
  );
}

/** 3. The two analytics endpoints for the link with `expected` clicks: p50 and an exact count. */
async function benchAnalytics(appPort: number, token: string, linkId: string, expected: number, sql: postgres.Sql) {
  log("analytics");
  const host = `127.0.0.1:${appPort}`;
  for (const [name, p] of [
    ["GET /links/{id}/analytics", `/api/links/${linkId}/analytics`],
    ["GET /analytics?link_id=…", `/api/analytics?link_id=${linkId}`],
  ] as const) {
    await runLoad({ host: "127.0.0.1", port: appPort, connections: 1, maxRequests: 5, request: apiRequest("GET", host, () => p, token) });
    const r = await runLoad({
      host: "127.0.0.1",
      port: appPort,
      connections: 1,
      maxRequests: 50,
      keepBodies: 1,
      request: apiRequest("GET", host, () => p, token),
    });
    const body = JSON.parse(r.bodies?.[0] ?? "{}") as { count?: number; clicks?: unknown[] };
    const s = summary(r.latenciesMs);
    row(
      "analytics",
      `${name} (${f(expected)} clicks on the link)`,
      `p50 ${f(s.p50, 1)} ms, p99 ${f(s.p99, 1)} ms; count ${f(body.count ?? NaN)}, ${body.clicks?.length} events`,
      "p50 ≤ 50 ms, count exact",
      s.p50 <= 50 && body.count === expected && body.clicks?.length === 500,
    );
  }
  // The listing must walk the (link_id, ts) primary key backwards, never sort the link's clicks: on the
  // monthly partitions, a Merge Append of each partition's primary key read backwards.
  const plan = await sql.unsafe(
    `explain select * from clicks where link_id = '${linkId}' and ts >= '0000000000000#' and ts < '9999999999999#' order by ts desc limit 500`,
  );
  const text = plan.map((r) => r["QUERY PLAN"]).join(" / ");
  row(
    "analytics",
    "plan of the newest-500 listing",
    backwardsOnPk(text) ? "Index Scan Backward on the primary key of each month's partition, no Sort" : text,
    "PK backwards",
    backwardsOnPk(text),
  );
}

/** Every scan of the plan is a backward scan of a clicks primary key (the table's or a partition's), and nothing sorts. */
const backwardsOnPk = (plan: string) =>
  /Index Scan Backward using clicks_\w*pk(ey)?/.test(plan) && !/Sort\s+\(cost/.test(plan) && !/Seq Scan|Bitmap/.test(plan);

/**
 * GET /links of the reader's 100 links (and `?limit=100`) against the bare-query floor
 * (bench/bare-list-server.ts: node:http, one prepared query, the same answer), alternating rounds of
 * LISTING_REQUESTS requests at 10 connections, each round in another order. Every app round uses a
 * fresh token (a pro token may make 10,000 calls an hour). The floor's answer must be the app's bytes.
 */
const LISTING_REQUESTS = Number(env.BENCH_LISTING_REQUESTS ?? 4000);
async function benchListing(app: Server, o: { databaseUrl: string; workspaceId: string; newToken: () => Promise<string> }) {
  log(`GET /links vs the bare-query floor (10 connections, ${ROUNDS} rounds of ${f(LISTING_REQUESTS)} requests each, alternating)`);
  const port = await freePort();
  const { child } = await forkBench("bare-list-server.ts", [String(port), o.databaseUrl, o.workspaceId, `http://127.0.0.1:${app.redirectPort}`]);
  try {
    const appHost = `127.0.0.1:${app.appPort}`;
    const paths = { all: "/api/links", paged: "/api/links?limit=100", floor: "/" } as const;
    type K = keyof typeof paths;
    const load = async (k: K, maxRequests: number, keepBodies = 0) => {
      const [p, host, token] = k === "floor" ? [port, `127.0.0.1:${port}`, "-"] : [app.appPort, appHost, await o.newToken()];
      return runLoad({ host: "127.0.0.1", port: p, connections: 10, maxRequests, keepBodies, request: apiRequest("GET", host, () => paths[k], token) });
    };
    const [appFirst, floorFirst] = [await load("all", 1, 1), await load("floor", 1, 1)];
    const same = appFirst.bodies?.[0] === floorFirst.bodies?.[0];
    row(
      "api",
      "GET /links and the floor answer the same bytes",
      same ? `same ${f(Buffer.byteLength(appFirst.bodies?.[0] ?? ""))} bytes` : "different",
      "equal",
      same,
    );
    const keys: K[] = ["all", "paged", "floor"];
    for (const k of keys) await load(k, 1000); // warm-up
    const totals: Record<K, LoadResult[]> = { all: [], paged: [], floor: [] };
    for (let round = 1; round <= ROUNDS; round++) {
      for (const k of keys.map((_, i) => keys[(i + round - 1) % keys.length])) {
        const r = await load(k, LISTING_REQUESTS);
        totals[k].push(r);
        console.log(
          `  round ${round} ${k.padEnd(5)} ${f(r.requests / r.seconds).padStart(7)} req/s  p50 ${percentile(r.latenciesMs.slice().sort(), 50).toFixed(2)} ms`,
        );
      }
    }
    const floor = merge(totals.floor);
    const figures = (m: ReturnType<typeof merge>) =>
      `${f(m.rps)} req/s, p50 ${f(m.p50, 2)} ms, p99 ${f(m.p99, 2)} ms; statuses ${JSON.stringify(Object.fromEntries(m.statuses))}`;
    row("api", "bare-query floor (node:http, one prepared query, the same answer)", figures(floor));
    for (const [k, what] of [
      ["all", "GET /links (100 links), 10 connections"],
      ["paged", "GET /links?limit=100 (100 links), 10 connections"],
    ] as const) {
      const m = merge(totals[k]);
      row("api", what, figures(m), "≥ 2,000 req/s, p50 ≤ 5 ms", m.rps >= 2000 && m.p50 <= 5 && m.statuses.get(200) === m.requests);
      row("api", `${what.split(" (")[0]}: throughput service/floor`, f(m.rps / floor.rps, 2), "≥ 0.80", m.rps / floor.rps >= 0.8);
    }
  } finally {
    child.kill("SIGTERM");
  }
}

runAsScript(import.meta.url, async () => {
  execSync("node scripts/ensure-build.mjs", { cwd: root, stdio: "inherit" });
  console.log(`machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? "?"}), load average ${loadAverage()}; ${SMALL ? "BENCH_SMALL" : "full size"}`);
  await withScratchDatabase("bench", ADMIN_URL, measure);

  console.log("\n| section | measurement | measured | target | met | load average |\n|---|---|---|---|---|---|");
  for (const r of rows)
    console.log(`| ${r.section} | ${r.what} | ${r.measured} | ${r.target} | ${r.met === null ? "" : r.met ? "yes" : "**no**"} | ${r.load} |`);
  const missed = rows.filter((r) => r.met === false);
  console.log(missed.length ? `\n${missed.length} target(s) not met: ${missed.map((r) => r.what).join("; ")}` : "\nall targets met");
  // Correctness failures fail the run; a missed speed target is reported in the table.
  if (rows.some((r) => r.met === false && (r.target === "equal" || r.target === "all distinct"))) process.exitCode = 1;
});
