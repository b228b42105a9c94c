// Aggregated analytics (GET /analytics/breakdown) over BENCH_CLICKS clicks (default 1,000,000) of one
// workspace on PostgreSQL: the procedure's time for a 30-day range by country and by day in
// Europe/Berlin, called as the REST adapter and the dashboard call it (the router, in process).
// BENCH_SPREAD_DAYS (default 30) is how many days back the clicks spread, so 30 puts every click in
// the range and 365 about a twelfth of them.
//
//   npx tsx bench/breakdown.ts          (BENCH_PG_URL: an admin URL of the PostgreSQL server)
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { parseConfig } from "../server/config";
import { createServices } from "../server/core/services";
import { createTestDatabase, tempDataDir } from "../db/test-db";
import { createContextInner } from "../server/trpc/context";
import { createCaller } from "../server/routers";
import { createUserWithWorkspace, issueToken } from "../server/lib/users";
import { summary } from "./load";
import { seedSummaries } from "./seed";

const CLICKS = Number(process.env.BENCH_CLICKS ?? 1_000_000);
const SPREAD_DAYS = Number(process.env.BENCH_SPREAD_DAYS ?? 30);
const LINKS = Number(process.env.BENCH_LINKS ?? 1_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const DAY_MS = 86_400_000;

const fmt = (n: number) => n.toLocaleString("en-US", { maximumFractionDigits: 1 });

async function main() {
  process.env.DATABASE_URL ??= process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
  const database = await createTestDatabase();
  const config = parseConfig({ APP_URL: "http://app.test", REDIRECT_URL: "http://go.test", DATA_DIR: tempDataDir(), LOG_LEVEL: "silent" });
  const app = await createServices(config, database, { rateLimitPrefix: `b${randomBytes(6).toString("hex")}` });
  const sql = postgres(database.url!, { max: 1, onnotice: () => {} });
  try {
    const user = await createUserWithWorkspace(app.db, { email: `bench-${Date.now()}@example.com`, plan: "pro" });
    const { token } = await issueToken(app.db, user.id, "bench");
    const ws = user.workspaceId;
    const now = Date.now();

    const t0 = performance.now();
    await sql.unsafe(`insert into links (id, workspace_id, slug, url, kind, created_at, updated_at)
      select 'b' || lpad(i::text, 7, '0'), '${ws}', 'bench-' || i, 'https://example.com/' || i, 'link', ${now}, ${now} from generate_series(0, ${LINKS - 1}) i`);
    // Month partitions first, so the clicks land where the service's own would.
    for (let m = now - SPREAD_DAYS * DAY_MS - 31 * DAY_MS; m <= now + 31 * DAY_MS; m += 28 * DAY_MS) {
      await sql.unsafe(`select clicks_ensure_month(date_trunc('month', to_timestamp(${m} / 1000.0) at time zone 'UTC')::date)`);
    }
    const span = SPREAD_DAYS * DAY_MS;
    // Clicks evenly back from now; 20 countries, four devices, a referrer on half, a visitor key shared by about three clicks a day.
    await sql.unsafe(`alter table clicks drop constraint clicks_link_id_ts_pk`);
    await sql.unsafe(`insert into clicks (link_id, ts, workspace_id, "timestamp", country, city, device, platform, browser, referer, rule, visitor)
      select 'b' || lpad((i % ${LINKS})::text, 7, '0'), lpad(t::text, 13, '0') || '#' || lpad(to_hex(i), 8, '0'), '${ws}', t,
        (array['US','DE','FR','GB','JP','BR','IN','CA','AU','NL','ES','IT','SE','PL','MX','KR','TR','CH','AT','BE'])[i % 20 + 1],
        'City ' || (i % 50), (array['desktop','mobile','tablet','smarttv'])[i % 4 + 1], (array['Windows','iOS','Android','macOS'])[i % 4 + 1],
        'Chrome 131', case when i % 2 = 0 then 'https://site' || (i % 30) || '.example/page' end, 'url', 'v' || (i % ${Math.max(1, Math.round(CLICKS / SPREAD_DAYS / 3))})
      from (select i, ${now} - (i::bigint * ${span}) / ${CLICKS} as t from generate_series(1, ${CLICKS}) i) s`);
    await sql.unsafe(`alter table clicks add constraint clicks_link_id_ts_pk primary key (link_id, ts)`);
    await sql.unsafe(`insert into click_rollups (link_id, hour, count)
      select link_id, ("timestamp" / 3600000) * 3600000, count(*)::int from clicks where workspace_id = '${ws}' group by 1, 2`);
    await seedSummaries(sql, ws);
    await sql.unsafe(`vacuum analyze clicks`);
    await sql.unsafe(`vacuum analyze links`);
    // The seeding's dirty pages written now, not by a checkpoint in the middle of the timed calls.
    await sql.unsafe(`checkpoint`);
    console.log(`seeded ${fmt(CLICKS)} clicks over ${SPREAD_DAYS} days on ${fmt(LINKS)} links in ${fmt((performance.now() - t0) / 1000)} s`);

    const caller = createCaller(createContextInner(app, { headers: { authorization: `Bearer ${token}` }, ip: "127.0.0.1", method: "GET" }));
    const from = String(now - 30 * DAY_MS);
    const to = String(now);
    const cases = [
      { name: "30 days by country", input: { by: "country" as const, from, to } },
      { name: "30 days by day, Europe/Berlin", input: { by: "day" as const, from, to, tz: "Europe/Berlin" } },
      { name: "30 days by referrer_domain, country=DE", input: { by: "referrer_domain" as const, from, to, country: "DE" } },
      { name: "30 days by hour, Europe/Berlin", input: { by: "hour" as const, from, to, tz: "Europe/Berlin" } },
    ];
    console.log(`| breakdown | p50 ms | p99 ms | total clicks |`);
    console.log(`|---|---|---|---|`);
    for (const c of cases) {
      const ms: number[] = [];
      let total = 0;
      for (let i = 0; i < ROUNDS + 2; i++) {
        const s = performance.now();
        const r = await caller.analytics.breakdown(c.input);
        if (i >= 2) ms.push(performance.now() - s); // two warm-up calls
        total = r.total.clicks;
      }
      const { p50, p99 } = summary(ms);
      console.log(`| ${c.name} | ${fmt(p50)} | ${fmt(p99)} | ${fmt(total)} |`);
    }
    // The analytics page's cards: the top 10 of every attribute it ranks, one call. The range as the
    // page asks it, local days in a zone: whole UTC days from the per-day counts, the edges from the clicks.
    const berlinDay = (ms: number) => new Intl.DateTimeFormat("en-CA", { timeZone: "Europe/Berlin" }).format(ms);
    const startOf = (day: string) => {
      const wall = Date.parse(`${day}T00:00:00Z`);
      const off = (ms: number) => Date.parse(new Date(ms).toLocaleString("sv-SE", { timeZone: "Europe/Berlin" }).replace(" ", "T") + "Z") - ms;
      return wall - off(wall - off(wall));
    };
    const pageCases = [
      {
        name: "analytics page's cards (analytics.top), 30 UTC days",
        input: { from: String(Math.floor(now / DAY_MS - 29) * DAY_MS), to: String(Math.ceil(now / DAY_MS) * DAY_MS - 1) },
      },
      {
        name: "analytics page's cards (analytics.top), 30 days in Europe/Berlin",
        input: { from: String(startOf(berlinDay(now - 29 * DAY_MS))), to: String(startOf(berlinDay(now + DAY_MS)) - 1) },
      },
      { name: "analytics page's cards (analytics.top), 30 days, country=DE", input: { from, to, country: "DE" } },
    ];
    for (const c of pageCases) {
      const ms: number[] = [];
      let total = 0;
      for (let i = 0; i < ROUNDS + 2; i++) {
        const s = performance.now();
        const r = await caller.analytics.top({ ...c.input, limit: 10 });
        if (i >= 2) ms.push(performance.now() - s);
        total = r.clicks;
      }
      const { p50, p99 } = summary(ms);
      console.log(`| ${c.name} | ${fmt(p50)} | ${fmt(p99)} | ${fmt(total)} |`);
    }
  } finally {
    await sql.end();
    await app.close();
    // BENCH_KEEP=1 keeps the database to look at plans (psql on the URL printed).
    if (process.env.BENCH_KEEP) {
      console.log(`kept ${database.url}`);
      await database.close();
    } else await database.dispose();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
