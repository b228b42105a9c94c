import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq, inArray, sql } from "drizzle-orm";
import { openDatabase, type Database } from "./client";
import { createTestDatabase } from "./test-db";
import { links } from "./schema";

// On PostgreSQL, drizzle's queries are prepared per connection (one round trip, parsed once) and
// still planned for their parameters (db/client.ts, `preparing`).
describe.skipIf(!process.env.DATABASE_URL)("queries on PostgreSQL", () => {
  let test: Awaited<ReturnType<typeof createTestDatabase>>;
  let one: Database;
  beforeAll(async () => {
    test = await createTestDatabase();
    one = await openDatabase({ databaseUrl: test.url!, migrate: false, poolSize: 1 });
  });
  afterAll(async () => {
    await one?.close();
    await test?.dispose();
  });

  const prepared = async () => (await one.db.execute(sql`select statement from pg_prepared_statements`)) as unknown as { statement: string }[];

  it("a query with parameters is prepared once on its connection and reused", async () => {
    for (const slug of ["a", "b", "c"]) await one.db.select({ id: links.id }).from(links).where(eq(links.slug, slug));
    const mine = (await prepared()).filter((p) => p.statement.includes('from "links" where "links"."slug" = $1'));
    expect(mine).toHaveLength(1);
  });

  it("a statement with many parameters (bulk) is not kept prepared", async () => {
    const ids = Array.from({ length: 100 }, (_, i) => `id${i}`);
    await one.db.select({ id: links.id }).from(links).where(inArray(links.id, ids));
    expect((await prepared()).some((p) => p.statement.includes("$100"))).toBe(false);
  });

  it("inside a transaction too", async () => {
    await one.db.transaction(async (tx) => {
      await tx.select({ id: links.id }).from(links).where(eq(links.url, "https://example.com/in-tx"));
    });
    expect((await prepared()).some((p) => p.statement.includes('where "links"."url" = $1'))).toBe(true);
  });

  it("prepared statements are planned for their parameters, never with a generic plan", async () => {
    const [row] = (await one.db.execute(sql`show plan_cache_mode`)) as unknown as { plan_cache_mode: string }[];
    expect(row.plan_cache_mode).toBe("force_custom_plan");
  });
});
