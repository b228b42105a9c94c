import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { openDatabase, type Database } from "./client";
import { createTestDatabase } from "./test-db";

// Only a real PostgreSQL refuses connections at start-up. postgres.js 3.4.9 left a query waiting for
// ever here after a few refusals; scripts/patch-postgres.mjs (postinstall) mends it.
describe.skipIf(!process.env.DATABASE_URL)("a database that refuses new connections", () => {
  let test: Awaited<ReturnType<typeof createTestDatabase>>;
  let pool: Database;
  let admin: Awaited<ReturnType<typeof adminClient>>;
  const adminClient = async () => (await import("postgres")).default(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
  beforeAll(async () => {
    test = await createTestDatabase();
    pool = await openDatabase({ databaseUrl: test.url!, migrate: false, poolSize: 5 });
    admin = await adminClient();
  });
  afterAll(async () => {
    await pool?.close();
    await test?.dispose(); // drops it WITH (FORCE), whatever ALLOW_CONNECTIONS says
    await admin?.end();
  });

  it("every query and transaction fails at once, however many times the pool reconnects", async () => {
    const name = new URL(test.url!).pathname.slice(1);
    // Five open connections, all of them then cut: the state the defect needed.
    await Promise.all([1, 2, 3, 4, 5].map(() => pool.db.execute(sql`select pg_sleep(0.05)`)));
    await admin.unsafe(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
    await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${name} AND pid <> pg_backend_pid()`;
    const kinds = [
      () => pool.db.transaction(async (tx) => tx.execute(sql`select 1`)),
      () => pool.db.execute(sql`select 1`),
      () => pool.db.transaction(async (tx) => tx.transaction(async (sp) => sp.execute(sql`select 1`))),
    ];
    for (let i = 0; i < 15; i++) {
      const outcome = await Promise.race([
        kinds[i % 3]().then(
          () => "answered",
          () => "failed",
        ),
        new Promise((r) => setTimeout(() => r("still waiting after 5 s"), 5000)),
      ]);
      expect(outcome, `query ${i + 1}`).toBe("failed");
    }
  }, 90_000);
});
