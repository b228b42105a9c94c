/**
 * Bounded cache of slug → link snapshot for the redirect hot path (also used for parsed user
 * agents and GeoIP answers). Every write to a link invalidates its slug here and, through
 * NOTIFY, in every other instance.
 *
 * Eviction is CLOCK (second chance), an approximation of LRU: a hit only sets a flag, where a
 * true LRU would delete and re-insert the Map entry on every hit — a measurable cost at tens of
 * thousands of redirects a second. An entry used since it was last looked at survives eviction.
 */
export class LruCache<V> {
  private map = new Map<string, { v: V; used: boolean }>();
  /** Bumped by every delete/clear, so a read that raced an invalidation does not store stale data. */
  version = 0;
  constructor(private readonly max: number) {}
  get(key: string): V | undefined {
    const e = this.map.get(key);
    if (e === undefined) return undefined;
    e.used = true;
    return e.v;
  }
  set(key: string, value: V): void {
    const e = this.map.get(key);
    if (e) {
      e.v = value;
      e.used = true;
      return;
    }
    if (this.map.size >= this.max) this.evictOne();
    this.map.set(key, { v: value, used: false });
  }
  /** Drops the oldest entry not used since its last chance; used ones go to the back once. */
  private evictOne(): void {
    for (const [k, e] of this.map) {
      this.map.delete(k);
      if (!e.used) return;
      e.used = false;
      this.map.set(k, e);
    }
  }
  delete(key: string): void {
    this.version++;
    this.map.delete(key);
  }
  clear(): void {
    this.version++;
    this.map.clear();
  }
  get size(): number {
    return this.map.size;
  }
}
