import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { links } from "../../../db/schema";
import { lookupLinkBySlug, OUTAGE_RETRY_MS, peekLinkBySlug } from "../../core/lookup";
import { LINK_CHANNEL, type AppServices } from "../../core/services";
import { createTestApp, type TestApp } from "../harness";
import { withFailingReads } from "./failing-reads";

/** Cached links keep redirecting while the database is away, even past the cache TTL. */
let t: TestApp;
beforeAll(async () => void (t = await createTestApp()));
afterAll(() => t.close());

const withDatabaseDown = (app: AppServices): AppServices => ({
  ...app,
  db: withFailingReads(app.db, () => Promise.reject(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }))),
});

describe("link lookup during a database outage", () => {
  it("an expired cache entry is served when the database cannot be read", async () => {
    const u = await t.user();
    const link = await t.caller(u.auth).link.create({ url: "https://example.com/stale" });
    const fresh = await lookupLinkBySlug(t.app, link.slug);
    expect(fresh?.url).toBe("https://example.com/stale");
    const down = withDatabaseDown(t.app);
    // Past the TTL, so a normal lookup re-reads it. Set right before the lookup: nothing yields to
    // the event loop in between, so the create's own asynchronous NOTIFY cannot drop it first.
    t.app.linkCache.set(link.slug, { ...fresh!, cachedAt: 0 });
    expect((await lookupLinkBySlug(down, link.slug))?.url).toBe("https://example.com/stale");
  });

  it("a slug that was never cached still fails (the caller answers 503)", async () => {
    await expect(lookupLinkBySlug(withDatabaseDown(t.app), "never-cached")).rejects.toMatchObject({ code: "ECONNREFUSED" });
  });
});

/** A database whose reads fail after `delayMs`, as a connect timeout does; counts the reads. */
const withSlowOutage = (app: AppServices, delayMs: number) => {
  const state = { reads: 0, down: true };
  const db = withFailingReads(app.db, () => {
    if (!state.down) return undefined;
    state.reads++;
    return new Promise<never>((_, reject) => setTimeout(() => reject(Object.assign(new Error("connect timeout"), { code: "CONNECT_TIMEOUT" })), delayMs));
  });
  return { app: { ...app, db }, state };
};

describe("stale-while-error during a long outage", () => {
  it("once a read found the database down, expired entries are answered at once, and refreshed in the background when it is back", async () => {
    const u = await t.user();
    const a = await t.caller(u.auth).link.create({ url: "https://example.com/a" });
    const b = await t.caller(u.auth).link.create({ url: "https://example.com/b" });
    const fresh = { a: (await lookupLinkBySlug(t.app, a.slug))!, b: (await lookupLinkBySlug(t.app, b.slug))! };
    // Let the creates' own NOTIFYs arrive first (delivered in order): they would drop the entries set below.
    t.app.linkCache.set("settle-notify", { miss: true, cachedAt: Date.now() });
    await t.app.database.notify(LINK_CHANNEL, "settle-notify");
    await vi.waitFor(() => expect(t.app.linkCache.get("settle-notify")).toBeUndefined(), { timeout: 20_000 }); // not 1 s: a busy machine may take longer
    const down = withSlowOutage(t.app, 400);
    t.app.linkCache.set(a.slug, { ...fresh.a, cachedAt: 0 });
    t.app.linkCache.set(b.slug, { ...fresh.b, cachedAt: 0 });

    // The first expired entry finds out: it waits for the failed read, then answers stale.
    expect((await lookupLinkBySlug(down.app, a.slug))?.url).toBe("https://example.com/a");
    expect(down.state.reads).toBe(1);
    // Every other expired entry is answered without waiting, on the hot path without a read at all.
    const started = Date.now();
    expect(peekLinkBySlug(down.app, b.slug)?.url).toBe("https://example.com/b");
    expect((await lookupLinkBySlug(down.app, b.slug))?.url).toBe("https://example.com/b");
    expect(Date.now() - started).toBeLessThan(100);
    expect(down.state.reads).toBe(1);

    // The database is back (and b changed meanwhile). Past the retry window, the next visit still
    // gets the stale entry at once while one background read refreshes it.
    down.state.down = false;
    await t.app.db.update(links).set({ url: "https://example.com/b2" }).where(eq(links.id, b.id));
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + OUTAGE_RETRY_MS + 1 });
    try {
      expect((await lookupLinkBySlug(down.app, b.slug))?.url).toBe("https://example.com/b");
      await vi.waitFor(() => expect(peekLinkBySlug(down.app, b.slug)?.url).toBe("https://example.com/b2"), { timeout: 20_000 });
      // The outage is over: an expired entry is read again before it is answered.
      t.app.linkCache.set(a.slug, { ...fresh.a, url: "https://example.com/old", cachedAt: 0 });
      expect(peekLinkBySlug(down.app, a.slug)).toBeUndefined();
      expect((await lookupLinkBySlug(down.app, a.slug))?.url).toBe("https://example.com/a");
    } finally {
      vi.useRealTimers();
    }
  });
});
