/**
 * Whole answers of reads that only links and domains decide (REST `GET /links` without filters),
 * kept until the next link or domain write. Any invalidation, from this instance or another one,
 * clears everything: the invalidation keys name slugs, not workspaces, and a new link's slug
 * belongs to no cached answer yet. Reads far outnumber writes on the listing, so a write clearing
 * every workspace's answers costs little; the redirect host's slug cache is untouched by this.
 *
 * A read that raced a write must not store what it read before the write: `generation` is taken
 * before the read and `set` stores only when no clear happened since.
 */
export class AnswerCache<V> {
  private map = new Map<string, { v: V; cost: number; until: number }>();
  private total = 0;
  /** Bumped by every clear. */
  generation = 0;

  /**
   * `maxCost`: the sum of the entries' costs kept at most (the listing counts links). `ttlMs`: the
   * safety net of the redirect cache, for a change made behind the service's back (psql).
   */
  constructor(
    private readonly maxCost: number,
    private readonly ttlMs = 60_000,
  ) {}

  get(key: string, now = Date.now()): V | undefined {
    const e = this.map.get(key);
    if (e === undefined) return undefined;
    if (e.until <= now) {
      this.map.delete(key);
      this.total -= e.cost;
      return undefined;
    }
    // Most recently used last, so eviction takes the oldest first.
    this.map.delete(key);
    this.map.set(key, e);
    return e.v;
  }

  /** Stores `value` read under `generation`; nothing when a clear came since or it alone is over the budget. */
  set(key: string, value: V, cost: number, generation: number, now = Date.now()): void {
    if (generation !== this.generation || cost > this.maxCost) return;
    const old = this.map.get(key);
    if (old) {
      this.total -= old.cost;
      this.map.delete(key);
    }
    for (const [k, e] of this.map) {
      if (this.total + cost <= this.maxCost) break;
      this.map.delete(k);
      this.total -= e.cost;
    }
    this.map.set(key, { v: value, cost, until: now + this.ttlMs });
    this.total += cost;
  }

  clear(): void {
    this.generation++;
    if (this.map.size) this.map.clear();
    this.total = 0;
  }

  get size(): number {
    return this.map.size;
  }
}
