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

export type Announcement = { channel: string; prefix: string; sent(keys: string[]): Promise<void>; unsent(): void };

/**
 * Cache invalidation that the other instances confirm. A NOTIFY alone reaches another instance
 * some time after the writer's commit: a caller that got its 200 and sent the next request to that
 * instance at once could still be answered from the old entry (seen about 1 time in 8 behind
 * HAProxy). So a write waits for an acknowledgement from every instance that is alive: instances
 * find each other by a heartbeat on ACK_CHANNEL; alone (one process, PGlite) nothing is awaited.
 * Plain payloads (a key without acknowledgement) are still honoured.
 */
export async function createInvalidation(o: {
  database: Database;
  channel: string;
  log: Logger;
  drop(key: string): void;
  /** The listener (re)subscribed: what was sent meanwhile is lost, so drop everything. */
  reset(): void;
}): Promise<Invalidation> {
  const id = randomBytes(6).toString("hex");
  const peers = new Map<string, number>();
  const waiting = new Map<number, { missing: Set<string>; done(): void }>();
  let seq = 0;
  let unconfirmed = false;

  const send = (channel: string, payload: string) => o.database.notify(channel, payload);
  const onChange = (payload: string) => {
    if (!payload.startsWith(CONFIRMED)) return o.drop(payload);
    // CONFIRMED <from> <seq> <last: 0|1> <keys as JSON>
    const [from, n, last] = payload.slice(1).split(" ", 3);
    const keys = JSON.parse(payload.slice(1 + from.length + n.length + last.length + 3)) as string[];
    for (const key of keys) o.drop(key);
    // Chunks of one write arrive in order: acknowledging the last confirms them all.
    if (from !== id && last === "1") send(ACK_CHANNEL, `ack ${from} ${n} ${id}`).catch(() => {});
  };
  const onAck = (payload: string) => {
    const [kind, a, n, by] = payload.split(" ");
    if (kind === "hello" && a !== id) peers.set(a, Date.now());
    if (kind === "bye") peers.delete(a);
    if (kind === "ack" && a === id) {
      peers.set(by, Date.now());
      const w = waiting.get(Number(n));
      w?.missing.delete(by);
      if (w && !w.missing.size) w.done();
    }
  };
  await o.database.listen(o.channel, onChange, o.reset);
  await o.database.listen(ACK_CHANNEL, onAck);
  const hello = () => send(ACK_CHANNEL, `hello ${id}`).catch(() => {});
  await hello();
  const timer = setInterval(hello, HEARTBEAT_MS);
  timer.unref();

  /** A new write's number, and what resolves once every live instance acknowledged it (or the timeout). */
  const expectAcks = () => {
    const now = Date.now();
    const live = [...peers].filter(([, seen]) => now - seen < PEER_TTL_MS).map(([peer]) => peer);
    const n = ++seq;
    const confirmed = live.length
      ? new Promise<boolean>((resolve) => {
          const timeout = setTimeout(() => (waiting.delete(n), resolve(false)), ACK_TIMEOUT_MS);
          waiting.set(n, { missing: new Set(live), done: () => (clearTimeout(timeout), waiting.delete(n), resolve(true)) });
        })
      : Promise.resolve(true);
    return { n, confirmed };
  };
  const settle = async (confirmed: Promise<boolean>) => {
    const ok = await confirmed;
    // One line per change of state, not per write.
    if (ok === unconfirmed) {
      unconfirmed = !ok;
      if (ok) o.log.info("cache invalidations are confirmed by every instance again");
      else o.log.warn({ timeoutMs: ACK_TIMEOUT_MS }, "an instance did not confirm a cache invalidation in time; its entries expire by TTL");
    }
  };

  return {
    async invalidate(keys) {
      if (!keys.length) return;
      for (const key of keys) o.drop(key);
      const { n, confirmed } = expectAcks();
      const chunks = chunk(keys);
      try {
        for (const [i, c] of chunks.entries()) await send(o.channel, `${CONFIRMED}${id} ${n} ${i === chunks.length - 1 ? 1 : 0} ${JSON.stringify(c)}`);
      } catch (e) {
        // Other instances then miss this invalidation; their entries still expire by TTL.
        waiting.get(n)?.done();
        o.log.warn({ err: e }, "cache invalidation notify failed");
        return;
      }
      await settle(confirmed);
    },
    announce() {
      const { n, confirmed } = expectAcks();
      return {
        channel: o.channel,
        prefix: `${CONFIRMED}${id} ${n} 1 `,
        async sent(keys) {
          for (const key of keys) o.drop(key);
          await settle(confirmed);
        },
        unsent: () => waiting.get(n)?.done(),
      };
    },
    close() {
      clearInterval(timer);
      for (const w of [...waiting.values()]) w.done();
      send(ACK_CHANNEL, `bye ${id}`).catch(() => {});
    },
  };
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
