import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { links } from "../../db/schema";
import { createTestDatabase } from "../../db/test-db";
import { isUniqueViolation } from "../domain/errors";
import { newLinkId } from "./ids";
import { SLUG_INDEX, withGeneratedSlug } from "./slugs";
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
const conflict = (e: unknown) => isUniqueViolation(e, SLUG_INDEX);

/** An insert whose first slug is taken just before it runs (as by a concurrent writer). */
function racingInsert(db: DbOrTx) {
  const tried: string[] = [];
  return {
    tried,
    insert: async (slug: string, tx: DbOrTx) => {
      tried.push(slug);
      if (tried.length === 1) await database.db.insert(links).values(row(slug));
      return (await tx.insert(links).values(row(slug)).returning())[0];
    },
    db,
  };
}

describe("withGeneratedSlug", () => {
  it("picks again when the slug was taken between the pick and the insert (no transaction)", async () => {
    const r = racingInsert(database.db);
    const link = await withGeneratedSlug(database.db, r.insert, conflict);
    expect(r.tried).toHaveLength(2);
    expect(link.slug).toBe(r.tried[1]);
    expect(await database.db.select().from(links).where(eq(links.slug, r.tried[1]))).toHaveLength(1);
  });

  // PostgreSQL only: the "concurrent writer" needs a second connection while the transaction is open (PGlite has one).
  it.skipIf(!process.env.DATABASE_URL)("inside a transaction, the conflict leaves the transaction usable and the insert is part of it", async () => {
    const tried: string[] = [];
    let outcome = "";
    await database.db.transaction(async (tx) => {
      const link = await withGeneratedSlug(
        tx,
        async (slug, sp) => {
          tried.push(slug);
          // A slug taken before this transaction: the first insert fails on the unique index.
          if (tried.length === 1) await database.db.insert(links).values(row(slug));
          return (await sp.insert(links).values(row(slug)).returning())[0];
        },
        conflict,
      );
      outcome = link.slug;
      // Still usable after the failed statement (it ran in a savepoint).
      expect((await tx.select().from(links).where(eq(links.slug, link.slug))).length).toBe(1);
    });
    expect(tried).toHaveLength(2);
    expect(outcome).toBe(tried[1]);
  });
});
