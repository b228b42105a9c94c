/**
 * Bounded LRU of slug → link snapshot for the redirect hot path. Every write to a link
 * invalidates its slug here and, through NOTIFY, in every other instance.
 */
export class LruCache<V> {
  private map = new Map<string, V>();
  /** Bumped by every delete/clear, so a read that raced an invalidation does not store stale data. */
  version = 0;
  constructor(private readonly max: number) {}
  get(key: string): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }
  set(key: string, value: V): void {
    if (this.map.has(key)) this.map.delete(key);
    else if (this.map.size >= this.max) this.map.delete(this.map.keys().next().value as string);
    this.map.set(key, value);
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
