import { inArray, sql } from "drizzle-orm";
import { links } from "../../../db/schema";
import type { DbOrTx } from "../../../db/client";
import { isDatabaseUnavailable } from "../../domain/errors";
import type { AppServices } from "../../core/services";
import { prober as sharedProber, type Prober } from "../../core/health-probe";
import { CHECK_INTERVAL_MS, checkLink } from "./health.service";
import { sendHealthDigests } from "./digest";
import { loadGauge } from "../../core/load-gauge";

/** How long a claimed check stays with its instance; a check not finished by then (the instance died) is taken by another. */
export const LEASE_MS = 5 * 60_000;
/** Least links claimed at once (fewer free places in flight wait for more to finish). */
const BATCH = 8;
/**
 * Link checks in flight at once: many more than the prober's slots, because a check waiting for
 * its host's turn holds no slot, and the slots should stay busy with other hosts meanwhile.
 */
const IN_FLIGHT = 64;
/** While the process is busy serving visits: checks in flight at most, and started a second at most. */
const BUSY_IN_FLIGHT = 2;
const BUSY_RATE = 10;
/** New links get their row (and their first check) within this long. */
const SWEEP_MS = 60_000;
/** Rows a sweep inserts per statement, and statements at most per sweep (a million links). */
const SWEEP_STEP = 5000;
const SWEEP_STEPS = 200;

/**
 * Gives every live link (not deleted, not archived; linktree pages are the service's own) that has no
 * health row one, status `unknown`, due now; moves the due checks of links that are no longer live a
 * day on, so they are not looked at again on every poll; and drops the rows of links that are gone
 * altogether (a deleted account's).
 */
export async function sweepHealthRows(db: DbOrTx, now = Date.now()): Promise<void> {
  // In steps of SWEEP_STEP rows (short statements), until none is missing: a large import gets
  // its rows at the next sweep, not one step a minute.
  for (let step = 0; step < SWEEP_STEPS; step++) {
    const r = (await db.execute(sql`
      insert into link_health (link_id, workspace_id, status, failures, next_check_at)
      select l.id, l.workspace_id, 'unknown', 0, ${now}::bigint
      from links l
      where l.deleted_at is null and l.archived_at is null and l.kind <> 'linktree'
        and not exists (select 1 from link_health h where h.link_id = l.id)
      limit ${SWEEP_STEP}
      on conflict (link_id) do nothing
      returning link_id`)) as unknown as { rows: unknown[] } | unknown[];
    if ((Array.isArray(r) ? r : r.rows).length < SWEEP_STEP) break;
  }
  await db.execute(sql`
    update link_health h set next_check_at = ${now + CHECK_INTERVAL_MS}::bigint
    from links l
    where l.id = h.link_id and h.next_check_at <= ${now}::bigint
      and (l.deleted_at is not null or l.archived_at is not null)`);
  await db.execute(sql`
    delete from link_health h
    where h.next_check_at <= ${now}::bigint and not exists (select 1 from links l where l.id = h.link_id)`);
}

/**
 * Takes up to `n` due checks of live links for this instance: a lease on each row, under
 * FOR UPDATE SKIP LOCKED, so instances polling at the same time take different rows and a row whose
 * lease ran out (its instance stopped mid-check) is taken again.
 */
export async function claimDueChecks(db: DbOrTx, n: number, now = Date.now()): Promise<string[]> {
  const r = (await db.execute(sql`
    update link_health set lease_until = ${now + LEASE_MS}::bigint
    where link_id in (
      select h.link_id from link_health h join links l on l.id = h.link_id
      where h.next_check_at <= ${now}::bigint and (h.lease_until is null or h.lease_until < ${now}::bigint)
        and l.deleted_at is null and l.archived_at is null
      order by h.next_check_at
      limit ${n}
      for update of h skip locked)
    returning link_id`)) as unknown as { rows: { link_id: string }[] } | { link_id: string }[];
  return (Array.isArray(r) ? r : r.rows).map((row) => row.link_id);
}

export type HealthScheduler = {
  /** Look for due checks now instead of at the next poll. */
  kick(): void;
  /** Stops polling; checks in flight are waited for a few seconds, the rest keep their lease and are taken again later. */
  stop(): Promise<void>;
};

/**
 * The scheduled destination checks of a server process (started by main.ts unless
 * LINK_HEALTH_CHECKS=off): every live link about once a day. All state is in `link_health`, so the
 * schedule survives restarts, and leases keep several instances from checking one link together.
 * About once a minute it also sends the daily broken-links digests that are due.
 */
export function startHealthChecks(app: SchedulerDeps, opts: { pollMs?: number; prober?: Prober } = {}): HealthScheduler {
  if (app.config.linkHealthChecks === false) return { kick() {}, stop: async () => {} };
  return new Scheduler(app, opts.pollMs ?? 5000, opts.prober ?? sharedProber);
}

type SchedulerDeps = Pick<AppServices, "config" | "db" | "log" | "mail" | "metrics">;

class Scheduler implements HealthScheduler {
  private stopping = false;
  /** Ends the current nap early (set while the loop sleeps). */
  private wake: (() => void) | null = null;
  /** When the last sweep (and digest round) ran. */
  private swept = 0;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly gauge: ReturnType<typeof loadGauge>;
  private readonly loop: Promise<void>;

  constructor(
    private readonly app: SchedulerDeps,
    private readonly pollMs: number,
    private readonly prober: Prober,
  ) {
    this.gauge = loadGauge(app.metrics);
    this.loop = this.run();
  }

  kick(): void {
    this.wake?.();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.gauge.stop();
    this.wake?.();
    await Promise.race([Promise.all([this.loop, ...this.inFlight]), new Promise((r) => setTimeout(r, 5000).unref())]);
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      // When more may be due than were claimed, wait only for room, not for the next poll.
      let more = false;
      let pace = 0;
      try {
        ({ more, pace } = await this.round());
      } catch (e) {
        if (!isDatabaseUnavailable(e) && !this.stopping) this.app.log.error({ err: e }, "health checks");
      }
      if (this.stopping) break;
      if (!more) await this.sleep(this.pollMs);
      else if (pace) await this.sleep(pace);
      else if (this.inFlight.size >= IN_FLIGHT - BATCH) {
        const napping = this.sleep(this.pollMs);
        await Promise.race([...this.inFlight, napping]);
        this.kick(); // ends the nap if a check finished first
      }
    }
  }

  /** One round: the sweep and digests when due, then as many checks as there is room for. Whether more may be due than were claimed. */
  private async round(): Promise<{ more: boolean; pace: number }> {
    const now = Date.now();
    if (now - this.swept >= SWEEP_MS) {
      await sweepHealthRows(this.app.db, now);
      this.swept = now;
      await sendHealthDigests(this.app, now);
    }
    // Visits first: a few checks at a time and a second, the rest once the burst is over.
    if (this.gauge.busy()) return { more: this.inFlight.size >= BUSY_IN_FLIGHT || (await this.claimAndStart(1)) === 1, pace: 1000 / BUSY_RATE };
    const room = IN_FLIGHT - this.inFlight.size;
    return { more: room < BATCH || (await this.claimAndStart(room)) === room, pace: 0 };
  }

  /** Claims up to `n` due checks and starts them; returns how many were claimed. */
  private async claimAndStart(n: number): Promise<number> {
    const ids = await claimDueChecks(this.app.db, n, Date.now());
    if (!ids.length) return 0;
    const rows = await this.app.db.select().from(links).where(inArray(links.id, ids));
    for (const link of rows) {
      const check: Promise<void> = checkLink(this.app, link, this.prober)
        .then(() => undefined)
        .catch((e: unknown) => {
          if (!this.stopping) this.app.log.error({ err: e, link: link.id }, "health check failed");
        })
        .finally(() => this.inFlight.delete(check));
      this.inFlight.add(check);
    }
    return ids.length;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (this.wake === done) this.wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }
}
