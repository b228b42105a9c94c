import { sql } from "drizzle-orm";
import type { Database, Db } from "../../../db/client";
import { isDatabaseUnavailable } from "../../domain/errors";
import { clickJson, isoOf } from "../webhook-outbox";
import { dayValueCounts, dayValuesOfClicks, dayValuesOfCounts, summaryCtes } from "./summary";
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
  variant: c.variant ?? null,
  trigger: c.trigger ?? "link",
  visitor: c.visitor ?? null,
});

/** Events a stored click (or linktree page view) can be for. */
const CLICK_EVENTS = ["link.clicked", "linktree.viewed"] as const;

/**
 * Whether any workspace of the batch has an active webhook for clicks or page views: one index
 * look-up per workspace, so a batch costs nothing more while nobody subscribes. An endpoint added
 * while the batch is being written may miss it, as it would a click stored a moment earlier.
 */
async function anyClickSubscriber(db: Db, rows: ClickRecord[]): Promise<boolean> {
  const workspaces = [...new Set(rows.map((r) => r.workspaceId))];
  const found = await db.execute(sql`
    select 1 from webhooks
    where workspace_id = any(string_to_array(${workspaces.join(",")}, ',')) and active
      and events && array[${sql.raw(CLICK_EVENTS.map((e) => `'${e}'`).join(","))}]::text[]
    limit 1`);
  return (Array.isArray(found) ? found : ((found as { rows?: unknown[] }).rows ?? [])).length > 0;
}

/**
 * The outbox rows of the clicks in `source` (a table expression with at least `link_id`, `ts` and
 * `workspace_id`), one per click and active endpoint subscribed to its event, in one statement.
 * `link.clicked` rows hold only the click's key: the redirect process's storage writes a small row
 * per click, and the worker builds the body when it sends it (clickedBodySql). `linktree.viewed`
 * carries the linktree's title, which can change, so its body is fixed now; `clickOf` is the click's
 * JSON (from the source's own columns when it has them all).
 */
const deliveriesOf = (source: string, clickOf: string, now = Date.now()) => `
    insert into webhook_deliveries (id, webhook_id, workspace_id, event, payload, status, attempts, next_attempt_at, created_at)
    select ${outboxId(now)}, w.id, w.workspace_id, e.type,
      case when e.type = 'link.clicked' then jsonb_build_object('link_id', c.link_id, 'ts', c.ts)
        else (select jsonb_build_object('type', e.type, 'timestamp', ${isoOf("(x.click ->> 'timestamp')::bigint")},
          'data', jsonb_build_object('id', t.id, 'linktree_id', t.id, 'slug', l.slug, 'title', t.title, 'click', x.click)) from (select ${clickOf} as click) x) end,
      'pending', 0, ${Math.trunc(now)}::bigint, ${Math.trunc(now)}::bigint
    from ${source} c
    join links l on l.id = c.link_id
    left join linktrees t on l.kind = 'linktree' and t.link_id = l.id
    cross join lateral (select case when l.kind = 'linktree' then 'linktree.viewed' else 'link.clicked' end as type) e
    join webhooks w on w.workspace_id = c.workspace_id and w.active and e.type = any(w.events)`;

/**
 * A delivery id ("msg_" and 32 hex digits) that starts with the time in hex: a burst's rows go to
 * the right edge of the primary key's index instead of a random page each.
 */
const outboxId = (now: number) => `'msg_' || lpad(to_hex(${Math.trunc(now)}::bigint), 12, '0') || substr(replace(gen_random_uuid()::text, '-', ''), 1, 20)`;

/** The clicks an insert just stored (`ins`), each counted once, as summaryCtes' `counted`. */
const INSERTED = "(select ins.*, 1 as n from ins) a";

/**
 * One statement per batch. One JSON parameter: building a 16-column multi-row insert through the
 * query builder costs more CPU than the insert itself, and this runs in the redirect process.
 * Rollups count what the insert returns, i.e. only clicks not already stored, so a retried batch
 * is neither lost nor counted twice; webhook events likewise go only to clicks stored now, in the
 * same statement.
 */
export async function insertClicks(db: Db, rows: ClickRecord[], withEvents?: boolean): Promise<void> {
  const json = JSON.stringify(rows.map(toRow));
  if (!(withEvents ?? (await anyClickSubscriber(db, rows)))) {
    await db.execute(sql`
      with ins as (
        insert into clicks select * from json_populate_recordset(null::clicks, ${json}::json)
        on conflict do nothing returning link_id, "timestamp", country, visitor, city, device, platform, browser, referer, rule, trigger
      ), ${sql.raw(summaryCtes("ins", dayValuesOfClicks(INSERTED)))}
      insert into click_rollups (link_id, hour, count)
      select link_id, ("timestamp" / 3600000) * 3600000, count(*)::int from ins group by 1, 2 order by 1, 2
      on conflict (link_id, hour) do update set count = click_rollups.count + excluded.count`);
    return;
  }
  await db.execute(sql`
    with ins as (
      insert into clicks select * from json_populate_recordset(null::clicks, ${json}::json)
      on conflict do nothing returning *
    ), rollups as (
      insert into click_rollups (link_id, hour, count)
      select link_id, ("timestamp" / 3600000) * 3600000, count(*)::int from ins group by 1, 2 order by 1, 2
      on conflict (link_id, hour) do update set count = click_rollups.count + excluded.count
    ), ${sql.raw(summaryCtes("ins", dayValuesOfClicks(INSERTED)))}
    ${sql.raw(deliveriesOf("ins", clickJson("c")))}`);
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
  "variant",
  "trigger",
] as const;

/** A text field of the COPY: NULL is an empty unquoted field, every string is quoted (an empty string stays one). */
const csvText = (v: string | null | undefined) => (v === null || v === undefined ? "" : v.includes('"') ? `"${v.replaceAll('"', '""')}"` : `"${v}"`);
const csvNumber = (v: number | null | undefined) => (v === null || v === undefined ? "" : String(v));

/**
 * A click as a line of the COPY, its fields in the order of CLICK_COLUMNS (parts.test.ts holds it
 * to that order) and with toRow's values: one template rather than the columns mapped and joined, as
 * the redirect process writes a line per click (1.5 µs less each).
 */
const csvLine = (c: ClickRecord) =>
  `${csvText(c.linkId)},${csvText(c.ts)},${csvText(c.workspaceId)},${csvNumber(c.timestamp)},${csvText(c.country)},${csvText(c.region)},` +
  `${csvText(c.regionName)},${csvText(c.city)},${csvText(c.timezone)},${csvNumber(c.lat)},${csvNumber(c.lng)},${csvText(c.device)},` +
  `${csvText(c.platform)},${csvText(c.browser)},${csvText(c.referer)},${csvText(c.rule)},${csvText(c.visitor)},${csvNumber(c.variant)},` +
  `${csvText(c.trigger ?? "link")}`;

/** A just-copied click's JSON, read back by its key (the COPY's transaction sees it): linktree views only. */
const COPIED_CLICK = `(select ${clickJson("k")} from clicks k where k.link_id = c.link_id and k.ts = c.ts)`;

/**
 * The batch by COPY, and its hourly counts summed here and added in the same transaction: less than
 * half the database's work per click of `insertClicks` (PGlite: 7 µs instead of 18 µs a click;
 * PostgreSQL: a burst is stored at 86,000 instead of 70,000 clicks a second; docs/performance.md).
 * COPY has no ON CONFLICT, so a batch holding a click already stored (a retry after an unknown
 * outcome, a crashed run's spool replayed) fails whole and goes through insertClicks.
 */
export async function copyClicks(database: Pick<Database, "copyThen">, rows: ClickRecord[], withEvents = false): Promise<void> {
  const lines = new Array<string>(rows.length);
  const hours = new Map<string, { link_id: string; hour: number; count: number }>();
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    lines[i] = csvLine(r);
    const hour = Math.floor(r.timestamp / 3_600_000) * 3_600_000;
    const key = `${r.linkId} ${hour}`;
    const h = hours.get(key);
    if (h) h.count++;
    else hours.set(key, { link_id: r.linkId, hour, count: 1 });
  }
  const rollups = `insert into click_rollups (link_id, hour, count)
      select link_id, hour, count from json_populate_recordset(null::click_rollups, $1::json) order by 1, 2
      on conflict (link_id, hour) do update set count = click_rollups.count + excluded.count`;
  // The batch's keys (and what the summaries count) go along for the summaries and, with subscribers,
  // the webhook events, written in the COPY's transaction (every click of a COPY is new: it fails
  // whole otherwise).
  const keys = `unnest($2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[]) as c(link_id, ts, workspace_id, "timestamp", country, visitor)`;
  await database.copyThen("clicks", CLICK_COLUMNS, lines.join("\n"), {
    text: `with rollups as (${rollups}), src as materialized (select * from ${keys}), ${summaryCtes("src", dayValuesOfCounts("$8::json", "src"))} ${withEvents ? deliveriesOf("src", COPIED_CLICK) : "select 1"}`,
    params: [
      JSON.stringify([...hours.values()]),
      rows.map((r) => r.linkId),
      rows.map((r) => r.ts),
      rows.map((r) => r.workspaceId),
      rows.map((r) => r.timestamp),
      rows.map((r) => r.country ?? null),
      rows.map((r) => r.visitor ?? null),
      dayValueCounts(rows),
    ],
  });
}

/**
 * Stores a batch exactly once: by COPY, and by the idempotent insert when the COPY fails (a click of
 * it already stored). If the database is away, it fails and the batch waits.
 */
export async function storeClicks(to: { db: Db; database: Pick<Database, "copyThen"> }, rows: ClickRecord[]): Promise<void> {
  const withEvents = await anyClickSubscriber(to.db, rows);
  try {
    return await copyClicks(to.database, rows, withEvents);
  } catch (e) {
    // The database away: the insert would fail too, a second connection attempt for nothing.
    if (isDatabaseUnavailable(e)) throw e;
    // Otherwise below: stored once whatever part of the batch is already there.
  }
  await insertClicks(to.db, rows, withEvents);
}
