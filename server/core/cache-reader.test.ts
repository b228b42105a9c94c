import { describe, expect, it, vi } from "vitest";
import { LruCache } from "../lib/lru";
import { CacheReader, READ_DEADLINE_MS } from "./cache-reader";

type Entry = { v: string; at: number };
const down = Object.assign(new Error("down"), { code: "ECONNREFUSED" });
const make = (cache = new LruCache<Entry>(10), answerAtOnce = false) =>
  new CacheReader<Entry, string>({
    cache,
    fresh: (e, now) => now - e.at < 100,
    valueOf: (e) => e.v,
    entryOf: (v, now) => (v === "uncached" ? undefined : { v, at: now }),
    staleWhileError: { isUnavailable: (e) => (e as { code?: string }).code === "ECONNREFUSED", retryMs: 1_000, answerAtOnce },
  });

describe("cache reader", () => {
  it("peek answers a fresh entry without the source, and nothing for an expired one", async () => {
    const r = make();
    expect(r.peek("a", 0)).toBeUndefined();
    expect(await r.read("a", async () => "one", 0)).toBe("one");
    expect(r.peek("a", 50)).toBe("one");
    expect(r.peek("a", 100)).toBeUndefined();
  });

  it("read-through keeps what it read, unless told to keep nothing", async () => {
    const r = make();
    let reads = 0;
    const load = async () => (reads++, "uncached");
    await r.read("b", load, 0);
    await r.read("b", load, 0);
    expect(reads).toBe(2);
  });

  it("version guard: an invalidation during the read means the answer is not kept", async () => {
    const cache = new LruCache<Entry>(10);
    const r = make(cache);
    expect(await r.read("c", async () => (cache.delete("c"), "old"), 0)).toBe("old");
    expect(cache.get("c")).toBeUndefined();
  });

  it("stale-while-error: while the source is down an expired entry is the answer, and a failure without one fails", async () => {
    // The outage is timed by the clock, so these times start from it.
    const t0 = Date.now();
    const r = make();
    await r.read("d", async () => "kept", t0);
    expect(await r.read("d", () => Promise.reject(down), t0 + 500)).toBe("kept");
    // Known down: the expired entry is even a peek's answer, until the retry time.
    expect(r.peek("d", t0 + 600)).toBe("kept");
    await expect(r.read("e", () => Promise.reject(down), t0 + 600)).rejects.toBe(down);
    // Back: the next read is kept, and expired entries expire again.
    expect(await r.read("d", async () => "new", t0 + 2_000)).toBe("new");
    expect(r.peek("d", t0 + 2_200)).toBeUndefined();
  });

  it("answer at once: once an outage is known, an expired entry answers without waiting for the source", async () => {
    // The outage is timed by the clock, so these times start from it.
    const t0 = Date.now();
    const r = make(undefined, true);
    await r.read("f", async () => "kept", t0);
    await r.read("f", () => Promise.reject(down), t0 + 500);
    let started = false;
    const never = () => ((started = true), new Promise<string>(() => {}));
    expect(await r.read("f", never, t0 + 5_000)).toBe("kept");
    expect(started).toBe(true); // tried again in the background
  });

  it("a read the source never answers fails as unavailable at its deadline: the stale entry is the answer, or the read fails", async () => {
    vi.useFakeTimers();
    try {
      const timedOut = new CacheReader<Entry, string>({
        cache: new LruCache<Entry>(10),
        fresh: (e, now) => now - e.at < 100,
        valueOf: (e) => e.v,
        entryOf: (v, now) => ({ v, at: now }),
        staleWhileError: { isUnavailable: (e) => (e as { code?: string }).code === "ETIMEDOUT", retryMs: 1_000 },
      });
      const never = () => new Promise<string>(() => {});
      // No entry to fall back on: the read fails once the deadline passes.
      const bare = timedOut.read("n", never, 0);
      const failed = expect(bare).rejects.toMatchObject({ code: "ETIMEDOUT" });
      await vi.advanceTimersByTimeAsync(READ_DEADLINE_MS);
      await failed;
      // An expired entry: it is the answer once the deadline passes.
      await timedOut.read("s", async () => "kept", 0);
      const stale = timedOut.read("s", never, 500);
      await vi.advanceTimersByTimeAsync(READ_DEADLINE_MS);
      expect(await stale).toBe("kept");
    } finally {
      vi.useRealTimers();
    }
  });
});
