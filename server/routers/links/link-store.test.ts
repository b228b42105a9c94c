import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../../test/harness";
import { lookupLinkBySlug, peekLinkBySlug } from "../../core/lookup";
import { newLinkId } from "../../lib/ids";
import { inLinkTransaction, insertImportedLinks, insertLink, softDeleteLink, updateLink } from "./link-store";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const uniq = () => `st-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;

/** Caches `slug` as an unknown slug, as the redirect host does after a look-up that found nothing. */
function cacheMiss(slug: string) {
  t.app.linkCache.set(slug, { miss: true, cachedAt: Date.now() });
  expect(peekLinkBySlug(t.app, slug, Date.now())).toBeNull();
}

describe("the link store drops the cache keys a write touched once its transaction commits", () => {
  it("a committed insert drops the new slug's cached miss", async () => {
    const u = await t.user();
    const slug = uniq();
    cacheMiss(slug);
    await inLinkTransaction(t.app, (lt) => insertLink(lt, { workspaceId: u.workspaceId, url: "https://example.com/a", slug }));
    expect(peekLinkBySlug(t.app, slug, Date.now())).toBeUndefined();
    expect((await lookupLinkBySlug(t.app, slug))?.url).toBe("https://example.com/a");
  });

  it("a write that rolls back drops nothing and writes nothing", async () => {
    const u = await t.user();
    const slug = uniq();
    cacheMiss(slug);
    const failed = inLinkTransaction(t.app, async (lt) => {
      await insertLink(lt, { workspaceId: u.workspaceId, url: "https://example.com/b", slug });
      throw new Error("rolled back");
    });
    await expect(failed).rejects.toThrow("rolled back");
    expect(peekLinkBySlug(t.app, slug, Date.now())).toBeNull();
  });

  it("an update drops the old and the new slug, a soft delete the freed one", async () => {
    const u = await t.user();
    const [before, after] = [uniq(), uniq()];
    const row = await inLinkTransaction(t.app, (lt) => insertLink(lt, { workspaceId: u.workspaceId, url: "https://example.com/c", slug: before }));
    cacheMiss(after);
    t.app.linkCache.set(before, { miss: true, cachedAt: Date.now() }); // stands for a cached copy of the link
    const moved = await inLinkTransaction(t.app, (lt) => updateLink(lt, row, { slug: after }));
    expect(peekLinkBySlug(t.app, before, Date.now())).toBeUndefined();
    expect(peekLinkBySlug(t.app, after, Date.now())).toBeUndefined();
    expect((await lookupLinkBySlug(t.app, after))?.url).toBe("https://example.com/c");
    await inLinkTransaction(t.app, (lt) => softDeleteLink(lt, moved));
    expect(peekLinkBySlug(t.app, after, Date.now())).toBeUndefined();
    expect(await lookupLinkBySlug(t.app, after)).toBeNull();
  });

  it("an import batch drops the cached miss of each link it inserted", async () => {
    const u = await t.user();
    const slug = uniq();
    cacheMiss(slug);
    const now = Date.now();
    const value = {
      id: newLinkId(),
      slug,
      domain_id: null,
      url: "https://example.com/imported",
      title: null,
      tags: [],
      expires_at: null,
      expiration_url: null,
      targeting: null,
      og_title: null,
      og_description: null,
      og_image: null,
      created_at: now,
      updated_at: now,
    };
    const inserted = await inLinkTransaction(t.app, (lt) => insertImportedLinks(lt, u.workspaceId, [value]));
    expect([...inserted]).toEqual([value.id]);
    expect(peekLinkBySlug(t.app, slug, Date.now())).toBeUndefined();
    expect((await lookupLinkBySlug(t.app, slug))?.url).toBe("https://example.com/imported");
  });
});
