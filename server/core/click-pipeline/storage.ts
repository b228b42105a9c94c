import { sql } from "drizzle-orm";
import type { Database, Db } from "../../../db/client";
import { isDatabaseUnavailable } from "../../domain/errors";
import type { ClickRecord } from "./types";

/** A click as a row of `clicks`, keyed by column name (for json_populate_recordset). */
const toRow = (c: ClickRecord) => ({
  link_id: c.linkId,
  ts: c.ts,
  workspace_id: c.workspaceId,
  timestamp: c.timestamp,
  country: c.country,
  region: c.region,
  region_name: c.regionName,
  city: c.city,
  timezone: c.timezone,
  lat: c.lat,
  lng: c.lng,
  device: c.device,
  platform: c.platform,
  browser: c.browser,
  referer: c.referer,
  rule: c.rule,
  visitor: c.visitor ?? null,
});

/**
 * One statement per batch. One JSON parameter: building a 16-column multi-row insert through the
 * query builder costs more CPU than the insert itself, and this runs in the redirect process.
 * Rollups count what the insert returns, i.e. only clicks not already stored, so a retried batch
 * is neither lost nor counted twice.
 */
export async function insertClicks(db: Db, rows: ClickRecord[]): Promise<void> {
  await db.execute(sql`
    with ins as (
      insert into clicks select * from json_populate_recordset(null::clicks, ${JSON.stringify(rows.map(toRow))}::json)
      on conflict do nothing returning link_id, "timestamp"
    )
    insert into click_rollups (link_id, hour, count)
    select link_id, ("timestamp" / 3600000) * 3600000, count(*)::int from ins group by 1, 2
    on conflict (link_id, hour) do update set count = click_rollups.count + excluded.count`);
}

const CLICK_COLUMNS = [
  "link_id",
  "ts",
  "workspace_id",
  "timestamp",
  "country",
  "region",
  "region_name",
  "city",
  "timezone",
  "lat",
  "lng",
  "device",
  "platform",
  "browser",
  "referer",
  "rule",
  "visitor",
] as const;

/** A CSV field: NULL is an empty unquoted field, every string is quoted (an empty string stays one). */
const csvField = (v: string | number | null | undefined) =>
  v === null || v === undefined ? "" : typeof v === "number" ? String(v) : `"${v.replaceAll('"', '""')}"`;

/**
 * The batch by COPY, and its hourly counts summed here and added in the same transaction: less than
 * half the database's work per click of `insertClicks` (PGlite: 7 µs instead of 18 µs a click;
 * PostgreSQL: a burst is stored at 86,000 instead of 70,000 clicks a second; docs/performance.md).
 * COPY has no ON CONFLICT, so a batch holding a click already stored (a retry after an unknown
 * outcome, a crashed run's spool replayed) fails whole and goes through insertClicks.
 */
export async function copyClicks(database: Pick<Database, "copyThen">, rows: ClickRecord[]): Promise<void> {
  const lines = new Array<string>(rows.length);
  const hours = new Map<string, { link_id: string; hour: number; count: number }>();
  for (let i = 0; i < rows.length; i++) {
    const r = toRow(rows[i]);
    lines[i] = CLICK_COLUMNS.map((c) => csvField(r[c])).join(",");
    const hour = Math.floor(r.timestamp / 3_600_000) * 3_600_000;
    const key = `${r.link_id} ${hour}`;
    const h = hours.get(key);
    if (h) h.count++;
    else hours.set(key, { link_id: r.link_id, hour, count: 1 });
  }
  await database.copyThen("clicks", CLICK_COLUMNS, lines.join("\n"), {
    text: `insert into click_rollups (link_id, hour, count)
      select link_id, hour, count from json_populate_recordset(null::click_rollups, $1::json)
      on conflict (link_id, hour) do update set count = click_rollups.count + excluded.count`,
    params: [JSON.stringify([...hours.values()])],
  });
}

/**
 * Stores a batch exactly once: by COPY, and by the idempotent insert when the COPY fails (a click of
 * it already stored). If the database is away, it fails and the batch waits.
 */
export async function storeClicks(to: { db: Db; database: Pick<Database, "copyThen"> }, rows: ClickRecord[]): Promise<void> {
  try {
    return await copyClicks(to.database, rows);
  } catch (e) {
    // The database away: the insert would fail too, a second connection attempt for nothing.
    if (isDatabaseUnavailable(e)) throw e;
    // Otherwise below: stored once whatever part of the batch is already there.
  }
  await insertClicks(to.db, rows);
}
