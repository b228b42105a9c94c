import { withTimeout } from "../../db/client";
import type { LruCache } from "../lib/lru";

/**
 * Longest a read of the source may take. A connection reset at the wrong moment can leave a driver
 * query that never settles; past this the read fails as "unavailable" (ETIMEDOUT), so the caller
 * gets the stale entry or a 503 instead of waiting for ever, and a graceful stop is not held up.
 */
export const READ_DEADLINE_MS = 5_000;

export type CacheReaderOptions<E, V> = {
  cache: LruCache<E>;
  /** Whether an entry may be answered without asking the source. */
  fresh(entry: E, now: number): boolean;
  valueOf(entry: E): V;
  /** What to keep for a value just read; undefined keeps nothing (it is asked again next time). */
  entryOf(value: V, now: number): E | undefined;
  /**
   * Stale-while-error: while the source is unavailable, an expired entry is still the answer, and
   * the source is tried again at most every `retryMs`. Without it, a failed read fails.
   */
  staleWhileError?: {
    isUnavailable(e: unknown): boolean;
    retryMs: number;
    /** Once an outage is known, answer an expired entry at once and read in the background. */
    answerAtOnce?: boolean;
  };
};

/**
 * One way to read through a cache, for links, domains and tokens: `peek` answers from the cache
 * without awaiting (undefined: it must be read), `read` asks the source on a miss and keeps the
 * answer unless an invalidation came while it read (the cache's version moved: the row may be
 * stale already).
 */
export class CacheReader<E, V> {
  /** Until when the source is taken to be down; undefined: it answered last. */
  private outageUntil: number | undefined;

  constructor(private readonly opts: CacheReaderOptions<E, V>) {}

  peek(key: string, now = Date.now()): V | undefined {
    const entry = this.opts.cache.get(key);
    if (entry === undefined) return undefined;
    // Invalidations drop entries at once; expiry covers one that never came. While the source is
    // known to be down, an expired entry is still the answer.
    if (!this.opts.fresh(entry, now) && !(now < (this.outageUntil ?? 0))) return undefined;
    return this.opts.valueOf(entry);
  }

  async read(key: string, load: () => Promise<V>, now = Date.now()): Promise<V> {
    const hit = this.peek(key, now);
    if (hit !== undefined) return hit;
    const swe = this.opts.staleWhileError;
    const stale = this.opts.cache.get(key);
    if (stale !== undefined && swe?.answerAtOnce && this.outageUntil !== undefined) {
      // The last read found the source down: answer from the expired entry at once and try the
      // source in the background, once per retryMs, instead of making callers wait on it.
      this.outageUntil = now + swe.retryMs;
      this.readThrough(key, load, now).catch(() => {});
      return this.opts.valueOf(stale);
    }
    return this.readThrough(key, load, now);
  }

  private async readThrough(key: string, load: () => Promise<V>, now: number): Promise<V> {
    const { cache, staleWhileError: swe } = this.opts;
    const version = cache.version;
    let value: V;
    try {
      value = await withTimeout(load(), READ_DEADLINE_MS);
    } catch (e) {
      if (!swe) throw e;
      if (swe.isUnavailable(e)) this.outageUntil = Date.now() + swe.retryMs;
      // The source away: the expired entry is the best answer there is; invalidations still drop it.
      const stale = cache.get(key);
      if (stale) return this.opts.valueOf(stale);
      throw e;
    }
    this.outageUntil = undefined;
    const entry = this.opts.entryOf(value, now);
    if (entry !== undefined && cache.version === version) cache.set(key, entry);
    return value;
  }
}
