import { randomBytes } from "node:crypto";
import type { Database } from "../../db/client";
import type { Logger } from "../lib/log";

/** Acknowledgements and heartbeats of the instances sharing the database. */
export const ACK_CHANNEL = "link_changed_ack";
/** Payloads that ask for an acknowledgement start with this (a slug or cache key never does). */
const CONFIRMED = "\u0001";
const HEARTBEAT_MS = 1000;
/** A peer not heard from for this long is gone (stopped, crashed, cut off): no write waits for it. */
const PEER_TTL_MS = 3500;
/**
 * How long an instance not heard from may still hold cache entries that a write must drop: the
 * caches keep an entry a minute at most (links, tokens, listings), and an instance too busy to send
 * its heartbeat (every connection of its pool taken) still hears NOTIFYs on its listener.
 */
const SILENT_PEER_MS = 65_000;
/** Longest a write waits for a peer's acknowledgement; past it, the peer's entries expire by TTL. */
const ACK_TIMEOUT_MS = 1000;
/** NOTIFY payloads are limited to 8000 bytes. */
const MAX_PAYLOAD = 7000;

export type Invalidation = {
  /**
   * Drops `keys` here and on every other instance, and resolves once every other live instance has
   * dropped them too (or ACK_TIMEOUT_MS passed), so the caller's next request sees the write on
   * whichever instance it lands.
   */
  invalidate(keys: string[]): Promise<void>;
  /**
   * `invalidate` for a write that sends the NOTIFY itself, inside its own statement (one round
   * trip): it sends `pg_notify(channel, prefix || <the keys as a JSON array>)` and then calls `sent`
   * with those keys once it committed, or `unsent` when it wrote nothing.
   */
  announce(): Announcement;
  close(): void;
};

/**
 * `prefix` is null when no other instance is there to tell: the write then sends no NOTIFY (its
 * statement skips `pg_notify` on a null prefix), and `sent` drops the keys here only.
 */
export type Announcement = { channel: string; prefix: string | null; sent(keys: string[]): Promise<void>; unsent(): void };

/**
 * Cache invalidation that the other instances confirm. A NOTIFY alone reaches another instance
 * some time after the writer's commit: a caller that got its 200 and sent the next request to that
 * instance at once could still be answered from the old entry (seen about 1 time in 8 behind
 * HAProxy). So a write waits for an acknowledgement from every instance that is alive: instances
 * find each other by a heartbeat on ACK_CHANNEL; alone (one process, PGlite) nothing is awaited.
 * Plain payloads (a key without acknowledgement) are still honoured.
 */
export async function createInvalidation(o: InvalidationOptions): Promise<Invalidation> {
  const invalidation = new ConfirmedInvalidation(o);
  await invalidation.start();
  return invalidation;
}

type InvalidationOptions = {
  database: Database;
  channel: string;
  log: Logger;
  drop(key: string): void;
  /** The listener (re)subscribed: what was sent meanwhile is lost, so drop everything. */
  reset(): void;
  /** How long after it starts listening an instance that heard of no other counts itself alone (default SILENT_PEER_MS; tests shorten it). */
  aloneAfterMs?: number;
};

class ConfirmedInvalidation implements Invalidation {
  /** This instance's name in payloads and acknowledgements. */
  private readonly id = randomBytes(6).toString("hex");
  /** Other instances, by when they were last heard from. */
  private readonly peers = new Map<string, number>();
  /** Writes waiting for acknowledgements, by number. */
  private readonly waiting = new Map<number, { missing: Set<string>; done(): void }>();
  private seq = 0;
  /** When this instance started listening: until every live peer's heartbeat had time to arrive, it does not count itself alone. */
  private listeningSince = Infinity;
  /** When this instance last heard its own heartbeat: its listener hears the channel. */
  private selfHeardAt = -Infinity;
  /** Whether the last settled write missed an acknowledgement (logged once per change). */
  private unconfirmed = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly o: InvalidationOptions) {}

  async start(): Promise<void> {
    await this.o.database.listen(this.o.channel, (payload) => this.onChange(payload), this.o.reset);
    // A listener that lost its connection hears nothing meanwhile: it counts from its new subscription.
    await this.o.database.listen(
      ACK_CHANNEL,
      (payload) => this.onAck(payload),
      () => (this.listeningSince = Date.now()),
    );
    this.listeningSince = Date.now();
    await this.hello();
    this.timer = setInterval(() => void this.hello(), HEARTBEAT_MS);
    this.timer.unref();
  }

  async invalidate(keys: string[]): Promise<void> {
    if (!keys.length) return;
    for (const key of keys) this.o.drop(key);
    if (this.alone()) return;
    const { n, confirmed } = this.expectAcks();
    const chunks = chunk(keys);
    try {
      for (const [i, c] of chunks.entries())
        await this.send(this.o.channel, `${CONFIRMED}${this.id} ${n} ${i === chunks.length - 1 ? 1 : 0} ${JSON.stringify(c)}`);
    } catch (e) {
      // Other instances then miss this invalidation; their entries still expire by TTL.
      this.waiting.get(n)?.done();
      this.o.log.warn({ err: e }, "cache invalidation notify failed");
      return;
    }
    await this.settle(confirmed);
  }

  announce(): Announcement {
    if (this.alone())
      return {
        channel: this.o.channel,
        prefix: null,
        // Dropped here, and told to another instance that started while the statement ran
        // (`invalidate` sends nothing while this one is still alone).
        sent: (keys) => this.invalidate(keys),
        unsent: () => {},
      };
    const { n, confirmed } = this.expectAcks();
    return {
      channel: this.o.channel,
      prefix: `${CONFIRMED}${this.id} ${n} 1 `,
      sent: async (keys) => {
        for (const key of keys) this.o.drop(key);
        await this.settle(confirmed);
      },
      unsent: () => this.waiting.get(n)?.done(),
    };
  }

  close(): void {
    clearInterval(this.timer);
    for (const w of [...this.waiting.values()]) w.done();
    this.send(ACK_CHANNEL, `bye ${this.id}`).catch(() => {});
  }

  private send(channel: string, payload: string): Promise<void> {
    return this.o.database.notify(channel, payload);
  }

  private hello(): Promise<void> {
    return this.send(ACK_CHANNEL, `hello ${this.id}`).catch(() => {});
  }

  private onChange(payload: string): void {
    if (!payload.startsWith(CONFIRMED)) return this.o.drop(payload);
    // CONFIRMED <from> <seq> <last: 0|1> <keys as JSON>
    const [from, n, last] = payload.slice(1).split(" ", 3);
    const keys = JSON.parse(payload.slice(1 + from.length + n.length + last.length + 3)) as string[];
    for (const key of keys) this.o.drop(key);
    // Chunks of one write arrive in order: acknowledging the last confirms them all.
    if (from !== this.id && last === "1") this.send(ACK_CHANNEL, `ack ${from} ${n} ${this.id}`).catch(() => {});
  }

  private onAck(payload: string): void {
    const [kind, a, n, by] = payload.split(" ");
    if (kind === "hello" && a !== this.id) this.peers.set(a, Date.now());
    if (kind === "hello" && a === this.id) this.selfHeardAt = Date.now();
    if (kind === "bye") this.peers.delete(a);
    if (kind === "ack" && a === this.id) {
      this.peers.set(by, Date.now());
      const w = this.waiting.get(Number(n));
      w?.missing.delete(by);
      if (w && !w.missing.size) w.done();
    }
  }

  /**
   * No other instance shares the database: none was heard from within SILENT_PEER_MS, while this one
   * has listened that long and hears its own heartbeat (a listener that lost its connection hears no
   * other either, and must not take that silence for solitude). A NOTIFY would then reach only this
   * instance's own listener (a wake-up of PostgreSQL and of this process for every write). An
   * instance that starts later announces itself before it serves, and is counted from then on.
   */
  private alone(): boolean {
    const now = Date.now();
    if (now - this.listeningSince < (this.o.aloneAfterMs ?? SILENT_PEER_MS)) return false;
    if (now - this.selfHeardAt >= PEER_TTL_MS) return false;
    let alone = true;
    for (const [peer, seen] of this.peers) {
      if (now - seen < SILENT_PEER_MS) alone = false;
      else this.peers.delete(peer); // gone without a goodbye (a crash) and past holding anything
    }
    return alone;
  }

  /** A new write's number, and what resolves once every live instance acknowledged it (or the timeout). */
  private expectAcks(): { n: number; confirmed: Promise<boolean> } {
    const now = Date.now();
    const live = [...this.peers].filter(([, seen]) => now - seen < PEER_TTL_MS).map(([peer]) => peer);
    const n = ++this.seq;
    const confirmed = live.length
      ? new Promise<boolean>((resolve) => {
          const timeout = setTimeout(() => (this.waiting.delete(n), resolve(false)), ACK_TIMEOUT_MS);
          this.waiting.set(n, { missing: new Set(live), done: () => (clearTimeout(timeout), this.waiting.delete(n), resolve(true)) });
        })
      : Promise.resolve(true);
    return { n, confirmed };
  }

  private async settle(confirmed: Promise<boolean>): Promise<void> {
    const ok = await confirmed;
    // One line per change of state, not per write.
    if (ok === this.unconfirmed) {
      this.unconfirmed = !ok;
      if (ok) this.o.log.info("cache invalidations are confirmed by every instance again");
      else this.o.log.warn({ timeoutMs: ACK_TIMEOUT_MS }, "an instance did not confirm a cache invalidation in time; its entries expire by TTL");
    }
  }
}

/** Keys in groups whose JSON fits one NOTIFY payload. */
function chunk(keys: string[]): string[][] {
  const out: string[][] = [[]];
  let size = 2;
  for (const key of keys) {
    const cost = JSON.stringify(key).length + 1;
    if (size + cost > MAX_PAYLOAD && out[out.length - 1].length) {
      out.push([]);
      size = 2;
    }
    out[out.length - 1].push(key);
    size += cost;
  }
  return out;
}
