import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { openDatabase, type Database } from "./client";
import { createTestDatabase } from "./test-db";

// Clicks go in by COPY on both drivers (server/core/clicks.ts). Run on PGlite, and on PostgreSQL
// whenever DATABASE_URL is set, where postgres.js 3.4 used to lose a refused COPY's error.
describe(`COPY then a statement, in one transaction (${process.env.DATABASE_URL ? "PostgreSQL" : "PGlite"})`, () => {
  let test: Awaited<ReturnType<typeof createTestDatabase>>;
  /** One connection on PostgreSQL: a COPY that left it stuck would stop every later test. */
  let one: Database;
  beforeAll(async () => {
    test = await createTestDatabase();
    await test.db.execute(sql`create table copied (id int primary key, v text)`);
    await test.db.execute(sql`create table totals (n int)`);
    one = test.url ? await openDatabase({ databaseUrl: test.url, migrate: false, poolSize: 1 }) : test;
  });
  afterAll(async () => {
    if (one !== test) await one?.close();
    await test?.dispose();
  });

  /** drizzle's execute answers an array on postgres.js and `{ rows }` on PGlite. */
  const select = async <T>(query: ReturnType<typeof sql>): Promise<T[]> => {
    const r = (await one.db.execute(query)) as unknown as T[] | { rows: T[] };
    return Array.isArray(r) ? r : r.rows;
  };
  const rows = () => select<{ id: number; v: string | null }>(sql`select id, v from copied order by id`);
  const totals = async () => (await select<{ n: number }>(sql`select n from totals order by n`)).map((r) => r.n);
  const addTotal = (n: number) => ({ text: "insert into totals (n) values ($1)", params: [n] });

  it("stores every row, quoted fields and NULLs as sent, and runs the statement after it", async () => {
    await one.copyThen("copied", ["id", "v"], '1,"a, ""quoted"" value"\n2,\n3,""', addTotal(3));
    expect(await rows()).toEqual([
      { id: 1, v: 'a, "quoted" value' },
      { id: 2, v: null },
      { id: 3, v: "" },
    ]);
    expect(await totals()).toEqual([3]);
  });

  it("a duplicate key fails with the database's error and stores nothing, the statement after it included", async () => {
    const e = await one.copyThen("copied", ["id", "v"], "4,new\n1,again", addTotal(2)).catch((err: unknown) => err);
    expect(e).toMatchObject({ code: "23505" });
    expect((await rows()).map((r) => r.id)).toEqual([1, 2, 3]);
    expect(await totals()).toEqual([3]);
  });

  it("the connection serves the next query and the next COPY after a refused one, again and again", async () => {
    for (let i = 0; i < 5; i++) await expect(one.copyThen("copied", ["id", "v"], "1,dup", addTotal(0))).rejects.toMatchObject({ code: "23505" });
    await one.copyThen("copied", ["id", "v"], "5,e", addTotal(1));
    expect((await rows()).map((r) => r.id)).toEqual([1, 2, 3, 5]);
    expect(await totals()).toEqual([1, 3]);
  });

  it("a malformed row fails whole (22P02) and stores nothing", async () => {
    await expect(one.copyThen("copied", ["id", "v"], "6,f\nseven,g", addTotal(2))).rejects.toMatchObject({ code: "22P02" });
    expect((await rows()).map((r) => r.id)).toEqual([1, 2, 3, 5]);
  });

  it("a failing statement after the COPY undoes the COPY", async () => {
    await expect(one.copyThen("copied", ["id", "v"], "8,h", { text: "insert into totals (n) values ($1)", params: ["not a number"] })).rejects.toMatchObject({
      code: "22P02",
    });
    expect((await rows()).map((r) => r.id)).toEqual([1, 2, 3, 5]);
  });
});
