import { eq, inArray, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { links } from "../../db/schema";
import { createTestDatabase } from "../../db/test-db";
import { AppError } from "../domain/errors";
import { newLinkId } from "./ids";
import { pickFreeSlugs, withGeneratedSlug } from "./slugs";
import type { DbOrTx } from "../../db/client";

// A generated slug taken by someone else between the pick and the insert is picked again, whether
// the insert runs on its own or inside the caller's transaction (which must survive the conflict).

let database: Awaited<ReturnType<typeof createTestDatabase>>;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database?.dispose());

const row = (slug: string) => ({
  id: newLinkId(),
  workspaceId: "public",
  slug,
  url: "https://example.com/",
  kind: "link" as const,
  createdAt: 1,
  updatedAt: 1,
});
const rows = <T>(result: unknown): T[] => (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as T[];

/** An insert whose first slug is taken just before it runs (as by a concurrent writer). */
function racingInsert(db: DbOrTx) {
  const tried: string[] = [];
  return {
    tried,
    insert: async (slug: string) => {
      tried.push(slug);
      if (tried.length === 1) await database.db.insert(links).values(row(slug));
      return (await db.insert(links).values(row(slug)).onConflictDoNothing().returning())[0];
    },
    db,
  };
}

describe("withGeneratedSlug", () => {
  it("picks again when the slug was taken between the pick and the insert (no transaction)", async () => {
    const r = racingInsert(database.db);
    const link = await withGeneratedSlug(database.db, r.insert);
    expect(r.tried).toHaveLength(2);
    expect(link.slug).toBe(r.tried[1]);
    expect(await database.db.select().from(links).where(eq(links.slug, r.tried[1]))).toHaveLength(1);
  });

  // PostgreSQL only: the "concurrent writer" needs a second connection while the transaction is open (PGlite has one).
  it.skipIf(!process.env.DATABASE_URL)("inside a transaction, the conflict leaves the transaction usable and the insert is part of it", async () => {
    const tried: string[] = [];
    let outcome = "";
    await database.db.transaction(async (tx) => {
      const link = await withGeneratedSlug(tx, async (slug) => {
        tried.push(slug);
        // A slug taken before this transaction: the first insert finds it on the unique index.
        if (tried.length === 1) await database.db.insert(links).values(row(slug));
        return (await tx.insert(links).values(row(slug)).onConflictDoNothing().returning())[0];
      });
      outcome = link.slug;
      // Still usable after the taken slug (no statement failed).
      expect((await tx.select().from(links).where(eq(links.slug, link.slug))).length).toBe(1);
    });
    expect(tried).toHaveLength(2);
    expect(outcome).toBe(tried[1]);
  });
  it("gives up with SLUGS_EXHAUSTED (503) after eight picks that were each taken meanwhile, storing nothing", async () => {
    const tried: string[] = [];
    const failed = await withGeneratedSlug(database.db, async (slug) => void tried.push(slug)).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(AppError);
    expect((failed as AppError).publicCode).toBe("SLUGS_EXHAUSTED");
    expect(tried).toHaveLength(8);
    expect(await database.db.select().from(links).where(inArray(links.slug, tried))).toEqual([]);
  });
});

describe("pickFreeSlugs", () => {
  it("finds every free slug when the blocks after the random start are nearly full, and reports exhaustion only when none is left", async () => {
    // 600 blocks with room, 34 of their 36 slots taken (so about 1,200 free slugs in all); every other block full.
    const db = database.db;
    const chosen = sql`(select prefix from slug_blocks order by md5(prefix) limit 600)`;
    await db.execute(sql`
      insert into links (id, workspace_id, slug, url, kind, created_at, updated_at)
      select substr(md5(p.prefix || c), 1, 8), 'public', p.prefix || c, 'https://example.com/full', 'link', 1, 1
      from ${chosen} p cross join unnest(string_to_array('0123456789abcdefghijklmnopqrstuvwx', null)) c
      on conflict do nothing`);
    await db.execute(sql`update slug_blocks set free = 0 where prefix not in ${chosen}`);
    const [{ n: free }] = rows<{ n: number }>(
      await db.execute(sql`
        select count(*)::int as n from ${chosen} p cross join unnest(string_to_array('0123456789abcdefghijklmnopqrstuvwxyz', null)) c
        where not exists (select 1 from links l where l.slug = p.prefix || c and l.deleted_at is null and l.domain_id is null)`),
    );
    try {
      expect(free).toBeGreaterThan(1100);
      const some = await pickFreeSlugs(db, 1000);
      expect(some).toHaveLength(1000);
      expect(new Set(some).size).toBe(1000);
      const all = await pickFreeSlugs(db, 1300);
      expect(all).toHaveLength(free);
      expect(new Set(all).size).toBe(free);
    } finally {
      await db.execute(sql`delete from links where url = 'https://example.com/full'`);
      await db.execute(sql`
        update slug_blocks b set free = 36 - coalesce(t.n, 0)
        from slug_blocks b2 left join (
          select substr(slug, 1, 3) as prefix, count(*)::int as n from links
          where deleted_at is null and domain_id is null and slug ~ '^[0-9a-z]{4}$' group by 1
        ) t on t.prefix = b2.prefix
        where b.prefix = b2.prefix`);
    }
  }, 120_000);
});
