import { and, eq, sql, type Placeholder, type SQL } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { webhookDeliveries, type WebhookEvent } from "../../db/schema";

/**
 * The outbox's only entry for events of the workspace's own changes: called inside the
 * transaction of the change, so an event exists exactly when its change committed. One row per
 * active endpoint subscribed to `type`; none when no endpoint wants it (a single index lookup).
 * The body is fixed here, so every retry sends the same bytes and the same `webhook-id`.
 * `data` must never hold a visitor's address or a password.
 */
export async function enqueueWebhookEvent(db: DbOrTx, workspaceId: string, type: WebhookEvent, data: unknown, now = Date.now()): Promise<void> {
  await db.execute(webhookEventInsert(workspaceId, type, sql`${JSON.stringify(data)}::jsonb`, now));
}

/**
 * `enqueueWebhookEvent` as a statement for a caller to run inside its own (a data-modifying CTE), so
 * the event is written in the same statement as its change; `data` is an SQL expression of jsonb.
 * In a statement prepared once, the workspace and the time are placeholders (`now.iso` the time's
 * ISO form, as `toISOString` gives it).
 */
export function webhookEventInsert(
  workspaceId: string | Placeholder,
  type: WebhookEvent,
  data: SQL,
  now: number | { ms: Placeholder; iso: Placeholder } = Date.now(),
): SQL {
  const [ms, iso] = typeof now === "number" ? [now, new Date(now).toISOString()] : [now.ms, now.iso];
  return sql`
    insert into webhook_deliveries (id, webhook_id, workspace_id, event, payload, status, attempts, next_attempt_at, created_at)
    select 'msg_' || replace(gen_random_uuid()::text, '-', ''), w.id, w.workspace_id, ${type},
      jsonb_build_object('type', ${type}::text, 'timestamp', ${iso}::text, 'data', ${data}), 'pending', 0, ${ms}::bigint, ${ms}::bigint
    from webhooks w
    where w.workspace_id = ${workspaceId} and w.active and ${type} = any(w.events)`;
}

/** One event for one endpoint, whatever it subscribed to: the `ping` of "Send test". Answers the delivery's id. */
export async function enqueueWebhookDelivery(
  db: DbOrTx,
  webhook: { id: string; workspaceId: string },
  type: string,
  data: unknown,
  now = Date.now(),
): Promise<string> {
  const body = JSON.stringify({ type, timestamp: new Date(now).toISOString(), data });
  const rows = await db.execute(sql`
    insert into webhook_deliveries (id, webhook_id, workspace_id, event, payload, status, attempts, next_attempt_at, created_at)
    values ('msg_' || replace(gen_random_uuid()::text, '-', ''), ${webhook.id}, ${webhook.workspaceId}, ${type}, ${body}::jsonb, 'pending', 0, ${now}::bigint, ${now}::bigint)
    returning id`);
  return rowsOf<{ id: string }>(rows)[0].id;
}

/** A click as the analytics API answers it (so never the visitor key), from the columns of `c`. */
export const clickJson = (c: string) => `jsonb_build_object('ts', ${c}.ts, 'timestamp', ${c}."timestamp", 'country', ${c}.country, 'region', ${c}.region,
        'region_name', ${c}.region_name, 'timezone', ${c}.timezone, 'lat', ${c}.lat, 'lng', ${c}.lng, 'device', ${c}.device,
        'platform', ${c}.platform, 'browser', ${c}.browser, 'referer', ${c}.referer, 'rule', ${c}.rule)`;

/** The ISO instant of a click's `timestamp` (ms), as an event's `timestamp`. */
export const isoOf = (ms: string) => `to_char(to_timestamp(${ms} / 1000.0) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The body of a `link.clicked` delivery whose outbox row holds only the click's key
 * (`{link_id, ts}` in `payload`): `{type, timestamp, data: {link_id, click}}`, built from the stored
 * click when the delivery is sent. A click row never changes, so every attempt sends the same bytes.
 * Null when the click is gone (retention dropped its month).
 */
export const clickedBodySql = (payload: string) => `(select jsonb_build_object('type', 'link.clicked', 'timestamp', ${isoOf('c."timestamp"')},
      'data', jsonb_build_object('link_id', c.link_id, 'click', ${clickJson("c")}))::text
    from clicks c where c.link_id = ${payload} ->> 'link_id' and c.ts = ${payload} ->> 'ts')`;

/** The rows of `db.execute`, which PGlite answers as `{rows}` and postgres.js as the array itself. */
export const rowsOf = <T>(result: unknown): T[] => (Array.isArray(result) ? (result as T[]) : ((result as { rows?: T[] }).rows ?? []));

/**
 * An endpoint turned off gives up its pending deliveries: they end `failed`, never sent. One in
 * flight keeps its answer out, since its lease no longer matches.
 */
export async function giveUpPendingDeliveries(db: DbOrTx, webhookId: string): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({ status: "failed", nextAttemptAt: null, leaseUntil: null })
    .where(and(eq(webhookDeliveries.webhookId, webhookId), eq(webhookDeliveries.status, "pending")));
}

/** Whether the workspace has an active endpoint for any of `types`: lets a caller skip building events nobody receives. */
export async function anyWebhookFor(db: DbOrTx, workspaceId: string, types: readonly WebhookEvent[]): Promise<boolean> {
  const rows = await db.execute(sql`
    select 1 from webhooks
    where workspace_id = ${workspaceId} and active and events && string_to_array(${types.join(",")}, ',')
    limit 1`);
  return rowsOf(rows).length > 0;
}

/** `enqueueWebhookEvent` for many events of one workspace in one statement (bulk changes). */
export async function enqueueWebhookEvents(db: DbOrTx, workspaceId: string, events: { type: WebhookEvent; data: unknown }[], now = Date.now()): Promise<void> {
  if (!events.length) return;
  await db.execute(sql`
    insert into webhook_deliveries (id, webhook_id, workspace_id, event, payload, status, attempts, next_attempt_at, created_at)
    select 'msg_' || replace(gen_random_uuid()::text, '-', ''), w.id, w.workspace_id, e.type,
      jsonb_build_object('type', e.type, 'timestamp', ${new Date(now).toISOString()}::text, 'data', e.data), 'pending', 0, ${now}::bigint, ${now}::bigint
    from jsonb_to_recordset(${JSON.stringify(events)}::jsonb) as e(type text, data jsonb)
    join webhooks w on w.workspace_id = ${workspaceId} and w.active and e.type = any(w.events)`);
}
