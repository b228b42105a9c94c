// Bench data straight into the tables with generate_series (COPY-like speed): indexes are
// dropped and rebuilt around the bulk insert, then the tables are vacuumed and analysed so
// plans and index-only scans are what a long-running database would have. The sections' own few
// thousand links are rows built here, inserted 500 to a statement.
import type postgres from "postgres";
import type { Database } from "../db/client";
import { links } from "../db/schema";
import { dayValuesFromClicks, visitorHoursFromSets } from "../server/core/click-pipeline/summary";
import { newLinkId } from "../server/lib/ids";

const BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz";
export const NAMESPACE = 36 ** 4;
/** Slot i of the 4-character namespace is left free when i % 100 == 50 (1% free). */
export const isFreeSlot = (i: number) => i % 100 === 50;
export const slugOf = (i: number) => BASE36[Math.floor(i / 46656) % 36] + BASE36[Math.floor(i / 1296) % 36] + BASE36[Math.floor(i / 36) % 36] + BASE36[i % 36];
const slugSql = (i: string) =>
  `substr('${BASE36}', (${i} / 46656) % 36 + 1, 1) || substr('${BASE36}', (${i} / 1296) % 36 + 1, 1) || substr('${BASE36}', (${i} / 36) % 36 + 1, 1) || substr('${BASE36}', ${i} % 36 + 1, 1)`;

/** `n` links of `workspaceId` made at `now`, each with a new id and what `row(i)` gives (its slug and URL at least). */
export const linkRows = <R extends Partial<typeof links.$inferInsert> & { slug: string; url: string }>(
  n: number,
  workspaceId: string,
  row: (i: number) => R,
  now = Date.now(),
) => Array.from({ length: n }, (_, i) => ({ id: newLinkId(), workspaceId, createdAt: now, updatedAt: now, ...row(i) }));

/** The redirect sections' links: `n` plain public links, bench-0 … bench-(n - 1). */
export const redirectLinkRows = (n: number, now = Date.now()) =>
  linkRows(n, "public", (i) => ({ slug: `bench-${i}`, url: `https://example.com/landing/${i}?utm_source=bench` }), now);

/** Inserts link rows 500 to a statement, which keeps a statement's parameters within PostgreSQL's limit. */
export async function insertLinks(db: Database["db"], rows: (typeof links.$inferInsert)[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 500) await db.insert(links).values(rows.slice(i, i + 500));
}

/**
 * ANALYZE of the whole database, after seeding: with autovacuum off (a test cluster) an unanalysed
 * `links` table planned the listing as a sequential scan once it held tens of thousands of rows.
 */
export async function analyze(sql: postgres.Sql): Promise<void> {
  await sql.unsafe(`analyze`);
}

/** 99% of the 36⁴ generated-slug namespace taken (by live links of workspace `slugs` and any already there). */
export async function seedSlugNamespace(sql: postgres.Sql): Promise<number> {
  const now = Date.now();
  await sql.begin(async (tx) => {
    await tx.unsafe(`set local maintenance_work_mem = '256MB'`);
    await tx.unsafe(`insert into workspaces (id, name, created_at) values ('slugs', 'slugs', ${now}) on conflict do nothing`);
    await tx.unsafe(`alter table links disable trigger links_slug_blocks`);
    // Rebuilt below from their own definitions (whatever the migrations made them).
    const defs = await tx.unsafe<{ def: string }[]>(
      `select pg_get_indexdef(c.oid) as def from pg_class c where c.relname in ('links_live_slug_idx', 'links_workspace_created_idx')`,
    );
    await tx.unsafe(`drop index links_live_slug_idx`);
    await tx.unsafe(`drop index links_workspace_created_idx`);
    await tx.unsafe(`
      insert into links (id, workspace_id, slug, url, kind, created_at, updated_at)
      select 'n' || lpad(i::text, 7, '0'), 'slugs', ${slugSql("i")}, 'https://example.com/n/' || i, 'link', ${now}, ${now}
      from generate_series(0, ${NAMESPACE - 1}) i
      where i % 100 <> 50 and ${slugSql("i")} not in (select slug from links where deleted_at is null and length(slug) = 4)`);
    for (const { def } of defs) await tx.unsafe(def);
    await tx.unsafe(`alter table links enable trigger links_slug_blocks`);
    // What the trigger would have done, in one statement.
    await tx.unsafe(`
      update slug_blocks b set free = 36 - coalesce(t.n, 0)
      from slug_blocks b2 left join (
        select substr(slug, 1, 3) p, count(*)::int n from links where deleted_at is null and slug ~ '^[0-9a-z]{4}$' group by 1
      ) t on t.p = b2.prefix
      where b.prefix = b2.prefix`);
  });
  await sql.unsafe(`vacuum analyze links`);
  await sql.unsafe(`vacuum analyze slug_blocks`);
  const [{ n }] = await sql`select count(*)::int n from links where deleted_at is null and slug ~ '^[0-9a-z]{4}$'`;
  return n;
}

/**
 * `total` clicks in workspace `workspaceId`: `big` on `bigLinkId`, the rest spread over
 * `otherLinkIds`, a click every 2.5 s (big link) / 0.26 s (the rest) back from now, so they
 * span weeks of hourly rollups. Rollups are built from the clicks in one pass.
 */
export async function seedClicks(sql: postgres.Sql, o: { workspaceId: string; bigLinkId: string; big: number; otherLinkIds: string[]; total: number }) {
  const now = Date.now();
  const others = o.otherLinkIds.length;
  const rest = o.total - o.big;
  const cols = `link_id, ts, workspace_id, "timestamp", country, city, device, platform, browser, referer, rule, visitor`;
  // About three clicks per visitor key, cities and referrers of several values, so every card of the analytics page has rows.
  const row = (link: string, t: string) =>
    `${link}, lpad((${t})::text, 13, '0') || '#' || lpad(to_hex(i), 8, '0'), '${o.workspaceId}', ${t}, (array['US','DE','FR','GB','JP'])[i % 5 + 1], 'City ' || (i % 40), (array['desktop','mobile'])[i % 2 + 1], 'Windows', 'Chrome 131', case when i % 2 = 0 then 'https://site' || (i % 30) || '.example/page' end, 'url', 'v' || (i / 3)`;
  await sql.begin(async (tx) => {
    await tx.unsafe(`set local maintenance_work_mem = '512MB'`);
    await tx.unsafe(`set local synchronous_commit = off`);
    await tx.unsafe(`alter table clicks drop constraint clicks_link_id_ts_pk`);
    await tx.unsafe(`insert into clicks (${cols}) select ${row(`'${o.bigLinkId}'`, `${now} - i::bigint * 2500`)} from generate_series(1, ${o.big}) i`);
    await tx.unsafe(
      `insert into clicks (${cols}) select ${row(`(array[${o.otherLinkIds.map((id) => `'${id}'`).join(",")}])[i % ${others} + 1]`, `${now} - i::bigint * 260`)} from generate_series(1, ${rest}) i`,
    );
    await tx.unsafe(`alter table clicks add constraint clicks_link_id_ts_pk primary key (link_id, ts)`);
    await tx.unsafe(`
      insert into click_rollups (link_id, hour, count)
      select link_id, ("timestamp" / 3600000) * 3600000, count(*)::int from clicks where workspace_id = '${o.workspaceId}' group by 1, 2
      on conflict (link_id, hour) do update set count = click_rollups.count + excluded.count`);
  });
  await seedSummaries(sql, o.workspaceId);
  await sql.unsafe(`vacuum analyze clicks`);
  await sql.unsafe(`vacuum analyze click_rollups`);
}

/** The breakdown summaries of a workspace whose clicks were seeded straight into `clicks`, built as the migrations build them. */
export async function seedSummaries(sql: postgres.Sql, ws: string): Promise<void> {
  const own = `from clicks c join links l on l.id = c.link_id and l.kind = 'link' where l.workspace_id = '${ws}'`;
  await sql.unsafe(`insert into click_hour_countries (workspace_id, hour, country, clicks)
    select l.workspace_id, (c."timestamp" / 3600000) * 3600000, coalesce(c.country, ''), count(*)::int ${own} group by 1, 2, 3`);
  await sql.unsafe(`insert into click_visitor_days (workspace_id, day, visitor, hours)
    select l.workspace_id, (c."timestamp" / 86400000)::int, c.visitor, bit_or(1 << ((c."timestamp" / 3600000) % 24)::int)
    ${own} and c.visitor is not null group by 1, 2, 3`);
  await sql.unsafe(`insert into click_visitor_countries (workspace_id, day, country, visitor, hours)
    select l.workspace_id, (c."timestamp" / 86400000)::int, coalesce(c.country, ''), c.visitor, bit_or(1 << ((c."timestamp" / 3600000) % 24)::int)
    ${own} and c.visitor is not null group by 1, 2, 3, 4`);
  await sql.unsafe(`insert into click_day_visitors (workspace_id, day, dim, value, visitors)
    select workspace_id, day, 'total', '', count(*)::int from click_visitor_days where workspace_id = '${ws}' group by 1, 2
    union all select workspace_id, day, 'country', country, count(*)::int from click_visitor_countries where workspace_id = '${ws}' group by 1, 2, 4`);
  await sql.unsafe(visitorHoursFromSets(`workspace_id = '${ws}'`));
  await sql.unsafe(dayValuesFromClicks(`l.workspace_id = '${ws}'`));
  for (const t of ["click_hour_countries", "click_visitor_days", "click_visitor_countries", "click_day_visitors", "click_visitor_hours", "click_day_values"])
    await sql.unsafe(`vacuum analyze ${t}`);
}
