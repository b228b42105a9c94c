import { afterAll, beforeAll, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { createTestDatabase } from "./test-db";

let database: Awaited<ReturnType<typeof createTestDatabase>>;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database?.dispose());

it("compares click keys and slugs in byte order whatever the database's default collation", async () => {
  const rows = await database.db
    .select({ table: sql<string>`table_name`, column: sql<string>`column_name`, collation: sql<string>`collation_name` })
    .from(sql`information_schema.columns`)
    .where(sql`(table_name, column_name) in (('clicks','ts'), ('clicks','link_id'), ('click_rollups','link_id'), ('links','slug'), ('slug_blocks','prefix'))`);
  expect(rows).toHaveLength(5);
  for (const r of rows) expect(`${r.table}.${r.column}: ${r.collation}`).toBe(`${r.table}.${r.column}: C`);
});
