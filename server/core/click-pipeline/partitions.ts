import { sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import type { Config } from "../../config";
import type { Logger } from "../../lib/log";
import { dropSummariesBefore } from "./summary";
import { logSafeError } from "./types";

/**
 * Upkeep of the month partitions of `clicks` (migration 0005): partitions are created ahead so
 * clicks never wait on DDL (an insert without its month's partition lands in `clicks_default`
 * and is moved when the partition is made), and with CLICK_RETENTION_DAYS whole months older
 * than the retention are dropped. `click_rollups` is never touched: the counts of a dropped
 * range stay, and analytics count it from there (analytics.service.ts `countClicks`). The breakdown
 * summaries of the dropped days go with their clicks.
 */
export const MONTHS_AHEAD = 3;
const DAY_MS = 86_400_000;
const PARTITION = /^clicks_(\d{4})_(\d{2})$/;

/** Start (ms, UTC) of the month `offset` months after the one holding `ms`. */
export const monthStart = (ms: number, offset = 0) => {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + offset, 1);
};
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
/** A click key bound: clicks' `ts` starts with the 13-digit ms timestamp. */
const tsKey = (ms: number) => String(ms).padStart(13, "0");

type Rows<T> = { rows?: T[] } | T[];
const rowsOf = <T>(r: unknown) => (r as { rows?: T[] }).rows ?? (r as T[]);

/** Makes the partitions of the month holding `now` and the MONTHS_AHEAD after it; returns those created. */
export async function ensureClickPartitions(db: Db, now = Date.now()): Promise<string[]> {
  const made: string[] = [];
  for (let i = 0; i <= MONTHS_AHEAD; i++) {
    const month = monthStart(now, i);
    const [r] = rowsOf<{ made: boolean }>((await db.execute(sql`select clicks_ensure_month(${isoDay(month)}::date) as made`)) as Rows<{ made: boolean }>);
    if (r?.made) made.push(`clicks_${isoDay(month).slice(0, 7).replace("-", "_")}`);
  }
  return made;
}

/** The month partitions of `clicks` (name and start), oldest first. */
export async function clickPartitions(db: Db): Promise<{ name: string; start: number }[]> {
  const rows = rowsOf<{ name: string }>(
    await db.execute(sql`select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'clicks'::regclass`),
  );
  return rows
    .map((r) => ({ name: r.name, m: PARTITION.exec(r.name) }))
    .filter((r) => r.m)
    .map((r) => ({ name: r.name, start: Date.UTC(Number(r.m![1]), Number(r.m![2]) - 1, 1) }))
    .sort((a, b) => a.start - b.start);
}

/**
 * Drops the clicks of whole months that ended before `cutoff`: their partitions, and older rows
 * in the default partition. The horizon (start of the month holding the cutoff) is recorded in
 * `click_retention`, in the same transaction. Returns the partitions dropped.
 */
export async function dropClicksBefore(db: Db, cutoff: number): Promise<{ dropped: string[]; horizon: number }> {
  const horizon = monthStart(cutoff);
  const old = (await clickPartitions(db)).filter((p) => monthStart(p.start, 1) <= horizon);
  await db.transaction(async (tx) => {
    // The same lock as clicks_ensure_month: one instance at a time changes the partitions.
    await tx.execute(sql`select pg_advisory_xact_lock(727275)`);
    for (const p of old) await tx.execute(sql.raw(`drop table if exists "${p.name}"`));
    await tx.execute(sql`delete from clicks_default where ts < ${tsKey(horizon)}`);
    for (const q of dropSummariesBefore(horizon)) await tx.execute(sql.raw(q));
    await tx.execute(sql`
      insert into click_retention (id, dropped_before) values (true, ${horizon})
      on conflict (id) do update set dropped_before = greatest(click_retention.dropped_before, excluded.dropped_before)`);
  });
  return { dropped: old.map((p) => p.name), horizon };
}

/** One upkeep pass: partitions ahead, then retention when configured. */
export async function maintainClicks(app: { config: Pick<Config, "clickRetentionDays">; db: Db; log: Logger }, now = Date.now()): Promise<void> {
  const made = await ensureClickPartitions(app.db, now);
  if (made.length) app.log.info({ partitions: made }, "click partitions created");
  const days = app.config.clickRetentionDays;
  if (days) {
    const { dropped, horizon } = await dropClicksBefore(app.db, now - days * DAY_MS);
    if (dropped.length) app.log.info({ partitions: dropped, before: new Date(horizon).toISOString() }, "click partitions dropped (retention)");
  }
}

/** Upkeep now (awaited: start has its partitions) and daily. A failure is logged and retried the next day. */
export async function startClickMaintenance(app: { config: Pick<Config, "clickRetentionDays">; db: Db; log: Logger }): Promise<{ stop(): void }> {
  const run = () => maintainClicks(app).catch((e) => app.log.error(logSafeError(e), "click partition upkeep failed"));
  await run();
  const timer = setInterval(() => void run(), DAY_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
