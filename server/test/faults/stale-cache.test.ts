import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../../db/client";
import { lookupLinkBySlug } from "../../redirect/lookup";
import type { AppServices } from "../../services";
import { createTestApp, type TestApp } from "../harness";

/** Issue 8.3: cached links keep redirecting while the database is away, even past the cache TTL. */
let t: TestApp;
beforeAll(async () => void (t = await createTestApp()));
afterAll(() => t.close());

const withDatabaseDown = (app: AppServices): AppServices => {
  const db = new Proxy(app.db, {
    get(target, prop, receiver) {
      if (prop === "select") return () => ({ from: () => ({ where: () => ({ limit: () => Promise.reject(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" })) }) }) });
      return Reflect.get(target, prop, receiver);
    },
  }) as Db;
  return { ...app, db };
};

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
