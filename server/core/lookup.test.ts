import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../test/harness";
import { insertLink } from "../routers/links/links.service";
import { CACHE_TTL_MS, lookupLinkBySlug, peekLinkBySlug } from "./lookup";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

it("a cached miss expires like a hit, so a link whose notification was lost is found after the TTL", async () => {
  const slug = `miss-${Date.now().toString(36)}`;
  expect(await lookupLinkBySlug(t.app, slug)).toBeNull();
  // Created behind the cache's back: no invalidation, as when another instance's NOTIFY is lost.
  const user = await t.user();
  await insertLink(t.app.db, { workspaceId: user.workspaceId, url: "https://example.com/late", slug });
  const now = Date.now();
  expect(peekLinkBySlug(t.app, slug, now)).toBeNull();
  expect(peekLinkBySlug(t.app, slug, now + CACHE_TTL_MS)).toBeUndefined();
  t.app.linkCache.set(slug, { miss: true, cachedAt: now - CACHE_TTL_MS });
  expect((await lookupLinkBySlug(t.app, slug))?.url).toBe("https://example.com/late");
});
