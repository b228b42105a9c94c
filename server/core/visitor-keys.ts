import { hash, randomBytes } from "node:crypto";
import { lt, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { visitorSalts } from "../../db/schema";

const DAY_MS = 86_400_000;
/** A batch written just after midnight may still carry the last clicks of the day before. */
export const SALT_GRACE_MS = 60_000;

export const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * Unique visitors without storing addresses (the approach of privacy-first analytics): a click's
 * visitor key is a SHA-256 of (secret random salt of its UTC day, address, User-Agent): a keyed hash
 * (one-shot `crypto.hash`, a quarter of an HMAC's cost, since it runs for every click in the redirect process). Every
 * instance shares the day's salt through `visitor_salts`; the salt is deleted once its day has
 * ended (plus a minute's grace for batches in flight), so nobody, the operator included, can
 * recover an address from a key by trying addresses, or follow a visitor from one day to the next.
 */
export class VisitorKeys {
  /** The salts by day number (ms / DAY_MS): the redirect path looks them up without formatting a date. */
  private readonly salts = new Map<number, string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly db: Db) {}

  /**
   * The key of a visit at `timestamp` when its day's salt is already here, synchronously (the redirect
   * path's common case, no promise); undefined when the salt must first be read (`keyFor`).
   */
  knownKey(timestamp: number, ip: string, userAgent: string): string | undefined {
    const salt = this.salts.get(Math.floor(timestamp / DAY_MS));
    return salt ? keyOf(salt, ip, userAgent) : undefined;
  }

  /** The key of a visit at `timestamp`, or null when its day's salt is gone (a click replayed days later). */
  async keyFor(timestamp: number, ip: string, userAgent: string, now = Date.now()): Promise<string | null> {
    return (await this.keyerFor([timestamp], now))(timestamp, ip, userAgent);
  }

  /** A synchronous keyer for a batch: the salts of its days are fetched once, not per click. */
  async keyerFor(timestamps: number[], now = Date.now()): Promise<(timestamp: number, ip: string, userAgent: string) => string | null> {
    // Keyed by day number: no date formatting per click.
    const salts = new Map<number, string | null>();
    for (const ts of timestamps) {
      const n = Math.floor(ts / DAY_MS);
      if (!salts.has(n)) salts.set(n, await this.saltOf(utcDay(ts), now));
    }
    return (timestamp, ip, userAgent) => {
      const salt = salts.get(Math.floor(timestamp / DAY_MS));
      return salt ? keyOf(salt, ip, userAgent) : null;
    };
  }

  private async saltOf(day: string, now: number): Promise<string | null> {
    const dayStart = Date.parse(`${day}T00:00:00Z`);
    // Only today's salt (and yesterday's during the grace minute) may be used or made.
    if (now >= dayStart + DAY_MS + SALT_GRACE_MS || dayStart > now + SALT_GRACE_MS) return null;
    const known = this.salts.get(dayStart / DAY_MS);
    if (known) return known;
    // Whoever inserts first makes the day's salt; everyone then reads the same one.
    await this.db.execute(sql`insert into visitor_salts (day, salt) values (${day}, ${randomBytes(32).toString("base64url")}) on conflict (day) do nothing`);
    const [row] = await this.db
      .select({ salt: visitorSalts.salt })
      .from(visitorSalts)
      .where(sql`${visitorSalts.day} = ${day}`);
    if (!row) return null;
    this.salts.set(dayStart / DAY_MS, row.salt);
    return row.salt;
  }

  /** Deletes every salt whose day ended more than the grace ago, here and in the database. */
  async sweep(now = Date.now()): Promise<void> {
    const oldest = utcDay(now - SALT_GRACE_MS);
    for (const n of this.salts.keys()) if (utcDay(n * DAY_MS) < oldest) this.salts.delete(n);
    await this.db.delete(visitorSalts).where(lt(visitorSalts.day, oldest));
  }

  /** Sweeps now and then just after every UTC midnight, whether or not clicks arrive. */
  start(onError: (e: unknown) => void): void {
    const next = () => {
      const now = Date.now();
      const wait = Math.ceil((now + 1) / DAY_MS) * DAY_MS + SALT_GRACE_MS + 1_000 - now;
      this.timer = setTimeout(() => void this.sweep().catch(onError).finally(next), Math.min(wait, DAY_MS + SALT_GRACE_MS + 1_000));
      this.timer.unref();
    };
    void this.sweep().catch(onError);
    next();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}

const keyOf = (salt: string, ip: string, userAgent: string) => hash("sha256", `${salt}\n${ip}\n${userAgent}`, "base64url").slice(0, 22);
