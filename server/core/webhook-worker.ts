import http from "node:http";
import https from "node:https";
import type net from "node:net";
import { and, eq, sql } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import type { Database, Db } from "../../db/client";
import { memberships, users, webhookDeliveries, webhooks, workspaces } from "../../db/schema";
import { base, type Config } from "../config";
import { isDatabaseUnavailable } from "../domain/errors";
import type { Logger } from "../lib/log";
import type { Metrics } from "../lib/metrics";
import { webhookDisabledMail, type Mailer } from "../lib/mail";
import { loadGauge } from "./load-gauge";
import { BlockedAddressError, guardedLookup, hostOf, isBlockedLiteral } from "./outgoing-address-guard";
import { clickedBodySql, giveUpPendingDeliveries, rowsOf } from "./webhook-outbox";

/** Waits after the 1st, 2nd, … failed attempt; a failure after the last is final (`failed`). */
export const RETRY_DELAYS_MS = [5_000, 5 * 60_000, 30 * 60_000, 2 * 3600_000, 5 * 3600_000, 10 * 3600_000, 10 * 3600_000] as const;
/** An attempt that has no 2xx answer within this long has failed. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** An endpoint none of whose deliveries succeeded for this long, while some failed all along, is turned off. */
export const DISABLE_AFTER_MS = 3 * 24 * 3600_000;
export const DISABLED_REASON = "every delivery failed for 3 days";
/** Attempts at one endpoint in flight at once, per instance: a slow receiver is not flooded. */
export const PER_ENDPOINT = 4;
/** Attempts in flight at once, per instance. */
const MAX_IN_FLIGHT = 32;
/**
 * A claimed delivery is this instance's for this long: its attempt (at most DELIVERY_TIMEOUT_MS; a
 * claim takes no more than its endpoint's free slots, so it starts at once) ends well before. An
 * instance that died leaves it to the others once the lease runs out.
 */
export const LEASE_MS = 30_000;

export type WebhookWorkerDeps = {
  db: Db;
  database: Pick<Database, "driver">;
  config: Pick<Config, "webhookAllowPrivate" | "appUrl">;
  log: Logger;
  mail: Mailer;
  /** The redirect counter tells when visits are bursting (deliveries then slow down). */
  metrics?: Metrics;
};

export type WebhookWorker = {
  /** Look for due deliveries now instead of at the next poll. */
  kick(): void;
  /** Resolves once nothing is due and nothing is in flight (tests, benchmarks). */
  idle(): Promise<void>;
  /** Stops claiming, waits for the attempts in flight (each ends within its timeout) and stops. */
  stop(): Promise<void>;
};

/** `body` is null when a click event's click is gone (retention dropped it): nothing to send. */
type Claimed = { id: string; webhook_id: string; workspace_id: string; body: string | null; attempts: number; url: string; secret: string; lease: number };

/**
 * Takes up to `limit` due deliveries nobody holds, oldest due first, leaving each endpoint at most
 * `perEndpoint` in flight counting `inFlight` (this instance's, by endpoint). `FOR UPDATE SKIP
 * LOCKED` and the lease make each delivery one instance's at a time, however many run.
 *
 * The due deliveries are read in order of `next_attempt_at` (the partial index of pending ones), at
 * most 200 at a time. `skipBusy` leaves the busy endpoints out before that limit instead, so an
 * endpoint with a long backlog cannot hide the others' deliveries; it may read every pending row
 * (there is no index by endpoint), so the worker asks for it at most once a second.
 */
export async function claimDue(
  db: Db,
  now: number,
  limit: number,
  inFlight: ReadonlyMap<string, number> = new Map(),
  opts: { perEndpoint?: number; skipBusy?: boolean } = {},
): Promise<Claimed[]> {
  const perEndpoint = opts.perEndpoint ?? PER_ENDPOINT;
  const lease = now + LEASE_MS;
  const busy = [...inFlight].filter(([, n]) => n >= perEndpoint).map(([id]) => id);
  const skip = opts.skipBusy && busy.length ? sql`and d.webhook_id <> all(string_to_array(${busy.join(",")}, ','))` : sql``;
  // The due line is read in the partial index's order, never by a bitmap scan and a sort of every
  // pending row: after a burst the table's statistics lag, and the planner took that path (57 ms a
  // claim with 50,000 pending instead of well under 1 ms).
  const result = await db.transaction(async (tx) => {
    await tx.execute(sql`set local enable_bitmapscan = off`);
    await tx.execute(sql`set local enable_seqscan = off`);
    return tx.execute(sql`
    with cand as (
      select d.id, d.webhook_id, d.next_attempt_at from webhook_deliveries d
      where d.status = 'pending' and d.next_attempt_at <= ${now}::bigint
        and (d.lease_until is null or d.lease_until < ${now}::bigint) ${skip}
      order by d.next_attempt_at
      limit 200
      for update skip locked
    ), pick as (
      select id from (
        select c.id, c.webhook_id, c.next_attempt_at, row_number() over (partition by c.webhook_id order by c.next_attempt_at, c.id) as n from cand c
      ) x
      where n <= ${perEndpoint}::int - coalesce((${JSON.stringify(Object.fromEntries(inFlight))}::jsonb ->> x.webhook_id)::int, 0)
      order by next_attempt_at limit ${limit}::int
    )
    update webhook_deliveries d set lease_until = ${lease}::bigint
    from webhooks w
    where d.id in (select id from pick) and w.id = d.webhook_id
    returning d.id, d.webhook_id, d.workspace_id, d.attempts, w.url, w.secret,
      case when d.event = 'link.clicked' and d.payload ->> 'type' is null then ${sql.raw(clickedBodySql("d.payload"))} else d.payload::text end as body`);
  });
  return rowsOf<Omit<Claimed, "lease">>(result).map((r) => ({ ...r, attempts: Number(r.attempts), lease }));
}

export type Attempt = { status: number | null; error?: string };

const agents = { http: new http.Agent({ keepAlive: true, maxSockets: 256 }), https: new https.Agent({ keepAlive: true, maxSockets: 256 }) };

/**
 * One attempt: POST with the Standard Webhooks headers, signed at the attempt's time. Unless private
 * addresses are allowed, the address connected to is the one checked (the guarded look-up), and an
 * address literal is checked before. Redirects are not followed: a 3xx is a failed attempt.
 */
export function attemptDelivery(
  d: Pick<Claimed, "id" | "url" | "secret"> & { body: string },
  allowPrivate: boolean,
  timeoutMs = DELIVERY_TIMEOUT_MS,
): Promise<Attempt> {
  return new Promise((resolve) => {
    let url: URL;
    try {
      url = new URL(d.url);
    } catch {
      return resolve({ status: null, error: "bad url" });
    }
    const host = hostOf(url);
    if (!allowPrivate && isBlockedLiteral(host)) return resolve({ status: null, error: "blocked address" });
    const now = new Date();
    let signature: string;
    try {
      signature = new Webhook(d.secret).sign(d.id, now, d.body);
    } catch {
      return resolve({ status: null, error: "bad secret" });
    }
    const body = Buffer.from(d.body);
    const secure = url.protocol === "https:";
    let done = false;
    const finish = (a: Attempt) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(a);
    };
    const req = (secure ? https : http).request(url, {
      method: "POST",
      agent: secure ? agents.https : agents.http,
      lookup: allowPrivate ? undefined : (guardedLookup as unknown as net.LookupFunction),
      headers: {
        "content-type": "application/json",
        "content-length": body.length,
        "user-agent": "Links-Webhooks/1.0",
        "webhook-id": d.id,
        "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
        "webhook-signature": signature,
      },
    });
    const timer = setTimeout(() => {
      finish({ status: null, error: "timeout" });
      req.destroy();
    }, timeoutMs);
    req.on("response", (res) => {
      // The answer's body is read and dropped (so the connection can be reused), but not waited for.
      res.resume();
      res.on("error", () => {});
      finish({ status: res.statusCode ?? null });
    });
    req.on("error", (e) =>
      finish({ status: null, error: e instanceof BlockedAddressError ? "blocked address" : ((e as NodeJS.ErrnoException).code ?? "error") }),
    );
    req.end(body);
  });
}

/** Records an attempt's outcome, if the delivery is still ours (same lease, still pending). True when it failed. */
async function recordAttempt(db: Db, d: Claimed, a: Attempt, now: number): Promise<boolean> {
  const ok = a.status !== null && a.status >= 200 && a.status < 300;
  const attempts = d.attempts + 1;
  const last = !ok && attempts > RETRY_DELAYS_MS.length;
  await db
    .update(webhookDeliveries)
    .set({
      status: ok ? "delivered" : last ? "failed" : "pending",
      attempts,
      responseStatus: a.status,
      lastAttemptAt: now,
      nextAttemptAt: ok || last ? null : now + RETRY_DELAYS_MS[attempts - 1],
      leaseUntil: null,
    })
    .where(and(eq(webhookDeliveries.id, d.id), eq(webhookDeliveries.status, "pending"), eq(webhookDeliveries.leaseUntil, d.lease)));
  return !ok;
}

/** A click event whose click is gone (its month dropped before it was sent) ends `failed`, never sent. */
async function giveUpDelivery(db: Db, d: Claimed): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({ status: "failed", nextAttemptAt: null, leaseUntil: null })
    .where(and(eq(webhookDeliveries.id, d.id), eq(webhookDeliveries.status, "pending"), eq(webhookDeliveries.leaseUntil, d.lease)));
}

/**
 * Turns the endpoint off when none of its deliveries succeeded for DISABLE_AFTER_MS while one has
 * been failing at least that long: its pending deliveries are given up and the workspace's owners
 * are mailed. True when it was turned off here.
 */
export async function disableIfFailing(deps: WebhookWorkerDeps, webhookId: string, now: number): Promise<boolean> {
  const since = now - DISABLE_AFTER_MS;
  const failingLong = rowsOf(
    await deps.db.execute(sql`
      select 1 from webhook_deliveries
      where webhook_id = ${webhookId} and created_at <= ${since}::bigint and status <> 'delivered' and attempts > 0 limit 1`),
  );
  if (!failingLong.length) return false;
  // A delivery that succeeded since was created at most the whole retry schedule before it.
  const succeeded = rowsOf(
    await deps.db.execute(sql`
      select 1 from webhook_deliveries
      where webhook_id = ${webhookId} and created_at >= ${since - 2 * DISABLE_AFTER_MS}::bigint
        and status = 'delivered' and last_attempt_at >= ${since}::bigint limit 1`),
  );
  if (succeeded.length) return false;
  const turnedOff = await deps.db.transaction(async (tx) => {
    const [row] = await tx
      .update(webhooks)
      .set({ active: false, disabledReason: DISABLED_REASON, updatedAt: now })
      .where(and(eq(webhooks.id, webhookId), eq(webhooks.active, true)))
      .returning();
    if (row) await giveUpPendingDeliveries(tx, webhookId);
    return row;
  });
  if (!turnedOff) return false;
  deps.log.warn({ webhook: webhookId }, "webhook endpoint turned off: every delivery failed for 3 days");
  const owners = await deps.db
    .select({ email: users.email, workspace: workspaces.name, personal: workspaces.personal })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .innerJoin(workspaces, eq(workspaces.id, memberships.workspaceId))
    .where(and(eq(memberships.workspaceId, turnedOff.workspaceId), eq(memberships.role, "owner")));
  for (const o of owners) {
    const mail = webhookDisabledMail(o.email, {
      workspace: o.workspace ?? (o.personal ? "Personal" : "your workspace"),
      url: turnedOff.url,
      reason: DISABLED_REASON,
      pageUrl: `${base(deps.config.appUrl)}/webhooks`,
    });
    await deps.mail.send(mail).catch((e) => deps.log.error({ err: e }, "webhook disabled mail failed"));
  }
  return true;
}

/** While busy: one attempt at a time, and at most this many a second. */
const BUSY_RATE = 10;

const workers = new Set<WebhookWorker>();
/** Wakes this process's workers (a test event was just queued here). */
export function kickWebhookWorkers(): void {
  for (const w of workers) w.kick();
}

/**
 * The delivery worker of a server process: claims due deliveries under a lease and sends them, at
 * most PER_ENDPOINT at once per endpoint and MAX_IN_FLIGHT in all, polling when idle. Its state is
 * the table: a restart, or another instance after a kill -9 (once the lease runs out), carries on.
 */
export function startWebhookWorker(deps: WebhookWorkerDeps, opts: { pollMs?: number; now?: () => number } = {}): WebhookWorker {
  const loop = new DeliveryLoop(deps, opts.pollMs ?? 1000, opts.now ?? Date.now);
  const worker: WebhookWorker = {
    kick: () => loop.kick(),
    idle: () => loop.idle(),
    async stop() {
      workers.delete(worker);
      await loop.stop();
    },
  };
  workers.add(worker);
  return worker;
}

/** The worker's loop; its fields are the worker's state. */
class DeliveryLoop {
  private readonly allowPrivate: boolean;
  /** Claimed and not yet recorded, per endpoint: an endpoint with PER_ENDPOINT of them is not claimed for. */
  private readonly inFlight = new Map<string, number>();
  private total = 0;
  private stopping = false;
  private wake: (() => void) | null = null;
  /** A kick while the loop is busy is kept, so the next sleep ends at once. */
  private kicked = false;
  private idleWaiters: (() => void)[] = [];
  /** When the worker last looked past the busy endpoints' deliveries (claimDue's skipBusy). */
  private lookedPast = 0;
  private lastEndpoint: string | null = null;
  /** When an endpoint was last checked for turning off (at most once a minute each). */
  private readonly checked = new Map<string, number>();
  /** Attempts running per endpoint (at most PER_ENDPOINT), and those claimed that wait for one of them. */
  private readonly running = new Map<string, number>();
  private readonly queued = new Map<string, Claimed[]>();
  private readonly gauge: ReturnType<typeof loadGauge>;
  private readonly done: Promise<void>;

  constructor(
    private readonly deps: WebhookWorkerDeps,
    private readonly pollMs: number,
    private readonly clock: () => number,
  ) {
    this.allowPrivate = deps.config.webhookAllowPrivate ?? false;
    this.gauge = loadGauge(deps.metrics);
    this.done = this.run();
  }

  kick(): void {
    if (this.wake) this.wake();
    else this.kicked = true;
  }

  idle(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.idleWaiters.push(resolve);
      this.kick();
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.kick();
    await this.done;
    for (const w of this.idleWaiters) w();
  }

  private sleep(ms: number): Promise<void> {
    if (this.kicked) return Promise.resolve().then(() => void (this.kicked = false));
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => (clearTimeout(timer), resolve());
    }).finally(() => (this.wake = null));
  }

  private async run(): Promise<void> {
    if (this.deps.database.driver === "pglite") {
      // One process per embedded database: any lease left is a dead process's.
      await this.deps.db
        .update(webhookDeliveries)
        .set({ leaseUntil: null })
        .where(sql`${webhookDeliveries.status} = 'pending' and ${webhookDeliveries.leaseUntil} is not null`)
        .catch(() => {});
    }
    while (!this.stopping) {
      const busy = this.gauge.busy();
      const cap = busy ? 1 : MAX_IN_FLIGHT;
      let claimed: number;
      try {
        claimed = this.total < cap ? await this.claim(busy, cap) : 0;
      } catch (e) {
        if (!this.stopping) this.deps.log.warn({ err: isDatabaseUnavailable(e) ? undefined : e }, "webhook worker: claim failed");
        if (!this.stopping) await this.sleep(5000);
        continue;
      }
      if (!claimed && this.total === 0) {
        const waiting = this.idleWaiters;
        this.idleWaiters = [];
        for (const w of waiting) w();
      }
      // Not cut short by a kick: while busy, the pace is the point.
      if (!this.stopping && busy && claimed) await new Promise((r) => setTimeout(r, 1000 / BUSY_RATE));
      else if (!this.stopping && (!claimed || this.total >= cap)) await this.sleep(this.pollMs);
    }
    while (this.total > 0) await new Promise((r) => setTimeout(r, 20));
    this.gauge.stop();
  }

  /** Claims what is due, up to the cap, and starts it; how many were claimed. */
  private async claim(busy: boolean, cap: number): Promise<number> {
    const { db } = this.deps;
    // While busy (one at a time), once a second the endpoint served last is passed over, so
    // another endpoint's deliveries are not held up behind its backlog.
    const passOver = busy && this.lastEndpoint !== null && Date.now() - this.lookedPast > 1000;
    let due: Claimed[] = passOver ? [] : await claimDue(db, this.clock(), cap - this.total, this.inFlight);
    // Nothing at the head of the line for a free endpoint while some are busy: look past them, once a second at most.
    if (passOver || (!due.length && this.total > 0 && Date.now() - this.lookedPast > 1000)) {
      this.lookedPast = Date.now();
      const full = new Map(this.inFlight);
      if (passOver) full.set(this.lastEndpoint!, PER_ENDPOINT);
      due = await claimDue(db, this.clock(), cap - this.total, full, { skipBusy: true });
      if (passOver && !due.length) due = await claimDue(db, this.clock(), cap - this.total, this.inFlight);
    }
    if (due.length) this.lastEndpoint = due[due.length - 1].webhook_id;
    for (const d of due) {
      this.inFlight.set(d.webhook_id, (this.inFlight.get(d.webhook_id) ?? 0) + 1);
      this.total++;
      this.schedule(d);
    }
    return due.length;
  }

  private schedule(d: Claimed): void {
    const n = this.running.get(d.webhook_id) ?? 0;
    if (n >= PER_ENDPOINT) return void this.queued.set(d.webhook_id, [...(this.queued.get(d.webhook_id) ?? []), d]);
    this.running.set(d.webhook_id, n + 1);
    void this.send(d);
  }

  private async send(d: Claimed): Promise<void> {
    try {
      if (d.body === null) {
        await giveUpDelivery(this.deps.db, d);
        return;
      }
      const attempt = await attemptDelivery({ ...d, body: d.body }, this.allowPrivate);
      const now = this.clock();
      const failed = await recordAttempt(this.deps.db, d, attempt, now);
      if (failed && now - (this.checked.get(d.webhook_id) ?? 0) > 60_000) {
        this.checked.set(d.webhook_id, now);
        await disableIfFailing(this.deps, d.webhook_id, now);
      }
    } catch (e) {
      // The lease runs out and the delivery is tried again (by this or another instance).
      this.deps.log.warn({ err: isDatabaseUnavailable(e) ? undefined : e, delivery: d.id }, "webhook attempt not recorded");
    } finally {
      this.finished(d);
    }
  }

  /** An attempt ended: the endpoint's next waiting delivery starts, and the loop looks for more. */
  private finished(d: Claimed): void {
    const id = d.webhook_id;
    const r = (this.running.get(id) ?? 1) - 1;
    if (r) this.running.set(id, r);
    else this.running.delete(id);
    const next = this.queued.get(id)?.shift();
    if (!this.queued.get(id)?.length) this.queued.delete(id);
    if (next) this.schedule(next);
    const n = (this.inFlight.get(id) ?? 1) - 1;
    if (n) this.inFlight.set(id, n);
    else this.inFlight.delete(id);
    this.total--;
    this.kick();
  }
}
