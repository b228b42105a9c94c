import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../../test/harness";
import { lookupLinkBySlug, peekLinkBySlug } from "../../core/lookup";
import { newLinkId } from "../../lib/ids";
import { sql } from "drizzle-orm";
import { auditEventParams, auditEventsInsertShape } from "../../trpc/audit";
import { openDatabase } from "../../../db/client";
import { inLinkTransaction, insertImportedLinks, insertLink, insertLinkAtOnce, softDeleteLink, updateLink } from "./link-store";

const rowsOf = (result: unknown) => (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as { id: string }[];

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

describe("a link made in one statement", () => {
  const auditRows = (linkId: string) => t.app.db.execute(sql`select id from audit_events where target_id = ${linkId}`).then(rowsOf);
  const alongside = (linkId: string, u: { id: string; workspaceId: string }) => ({
    shape: "one audit event",
    parts: () => [auditEventsInsertShape(t.app.db, 1)],
    params: auditEventParams(
      { userId: u.id },
      [{ workspaceId: u.workspaceId, action: "link.created", targetType: "link", targetId: linkId, changes: ["url"] }],
      Date.now(),
    ),
  });

  it("drops the new slug's cached miss, and writes what goes with it", async () => {
    const u = await t.user();
    const slug = uniq();
    cacheMiss(slug);
    const id = newLinkId();
    const made = await insertLinkAtOnce(
      t.app,
      { id, createdAt: Date.now(), workspaceId: u.workspaceId, url: "https://example.com/once", slug },
      alongside(id, u),
    );
    expect(made).toMatchObject({ id, slug, url: "https://example.com/once" });
    expect(peekLinkBySlug(t.app, slug, Date.now())).toBeUndefined();
    expect((await lookupLinkBySlug(t.app, slug))?.url).toBe("https://example.com/once");
    expect(await auditRows(id)).toHaveLength(1);
  });

  it("a chosen slug that is taken answers its conflict and writes nothing", async () => {
    const u = await t.user();
    const slug = uniq();
    await inLinkTransaction(t.app, (lt) => insertLink(lt, { workspaceId: u.workspaceId, url: "https://example.com/first", slug }));
    const id = newLinkId();
    const second = insertLinkAtOnce(
      t.app,
      { id, createdAt: Date.now(), workspaceId: u.workspaceId, url: "https://example.com/second", slug },
      alongside(id, u),
      "SLUG_ALREADY_IN_USE",
    );
    await expect(second).rejects.toMatchObject({ publicCode: "SLUG_ALREADY_IN_USE" });
    expect(await auditRows(id)).toEqual([]);
  });

  it("a generated pick from an out-of-date block count answers undefined and writes nothing", async () => {
    const u = await t.user();
    // One block said to have room whose 36 slugs are all in use: the pick finds the block but no slug.
    await t.app.db.execute(sql`
      insert into links (id, workspace_id, slug, url, kind, created_at, updated_at)
      select 'zz' || c || 'stale', 'public', 'zzz' || c, 'https://example.com/full', 'link', 1, 1
      from unnest(string_to_array('0123456789abcdefghijklmnopqrstuvwxyz', null)) c`);
    await t.app.db.execute(sql`create table kept_blocks as select * from slug_blocks`);
    await t.app.db.execute(sql`update slug_blocks set free = case when prefix = 'zzz' then 3 else 0 end`);
    try {
      const id = newLinkId();
      const made = await insertLinkAtOnce(t.app, { id, createdAt: Date.now(), workspaceId: u.workspaceId, url: "https://example.com/none" }, alongside(id, u));
      expect(made).toBeUndefined();
      expect(await auditRows(id)).toEqual([]);
      expect(rowsOf(await t.app.db.execute(sql`select id from links where id = ${id}`))).toEqual([]);
    } finally {
      await t.app.db.execute(sql`delete from links where url = 'https://example.com/full'`);
      await t.app.db.execute(sql`update slug_blocks b set free = k.free from kept_blocks k where k.prefix = b.prefix`);
      await t.app.db.execute(sql`drop table kept_blocks`);
    }
  });

  // Planning the statement for each link's values cost PostgreSQL more than running it (the embedded
  // database has a single connection and plans as PostgreSQL's default does).
  it.runIf(process.env.DATABASE_URL)("is planned once per connection, while other statements stay planned for their values", async () => {
    const u = await t.user();
    const own = await openDatabase({ databaseUrl: t.app.database.url!, migrate: false, poolSize: 1 });
    try {
      const app = { database: own, announceSlugs: () => t.app.announceSlugs() };
      for (let i = 0; i < 7; i++) {
        const id = newLinkId();
        expect(
          await insertLinkAtOnce(app, { id, createdAt: Date.now(), workspaceId: u.workspaceId, url: "https://example.com/planned" }, alongside(id, u)),
        ).toMatchObject({ id });
      }
      const plans = rowsOf(
        await own.plannedOnce.execute(sql`select generic_plans, custom_plans from pg_prepared_statements where statement like '%insert into "links"%'`),
      ) as unknown as { generic_plans: string; custom_plans: string }[];
      expect(plans.map((p) => [Number(p.generic_plans), Number(p.custom_plans)])).toEqual([[7, 0]]);
      const mode = rowsOf(await own.db.execute(sql`select current_setting('plan_cache_mode') as mode`)) as unknown as { mode: string }[];
      expect(mode).toEqual([{ mode: "force_custom_plan" }]);
    } finally {
      await own.close();
    }
  });

  // Concurrent creates queue on few connections, so their statements share writes and backends.
  it.runIf(process.env.DATABASE_URL)("creates links on two connections however large the main pool is", async () => {
    const u = await t.user();
    const own = await openDatabase({ databaseUrl: t.app.database.url!, migrate: false, poolSize: 10 });
    try {
      // How many backends twelve concurrent statements reach.
      const backends = async (db: typeof own.db) => {
        const results = await Promise.all(Array.from({ length: 12 }, () => db.execute(sql`select pg_backend_pid() as id, pg_sleep(0.05)`)));
        return new Set(results.map((r) => rowsOf(r)[0]!.id)).size;
      };
      expect(await backends(own.db)).toBe(10);
      expect(await backends(own.plannedOnce)).toBe(2);
      const app = { database: own, announceSlugs: () => t.app.announceSlugs() };
      const made = await Promise.all(
        Array.from({ length: 12 }, async () => {
          const id = newLinkId();
          return (await insertLinkAtOnce(app, { id, createdAt: Date.now(), workspaceId: u.workspaceId, url: "https://example.com/queued" }, alongside(id, u)))
            ?.slug;
        }),
      );
      expect(new Set(made).size).toBe(12);
    } finally {
      await own.close();
    }
  });
});
