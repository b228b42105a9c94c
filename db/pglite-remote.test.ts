import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isDatabaseUnavailable, isUniqueViolation } from "../server/domain/errors";
import { RemotePglite } from "./pglite-remote";

// The embedded database runs in a worker thread (db/pglite-thread.mjs). These rules are its own;
// every other test file runs the whole service on it whenever DATABASE_URL is not set.
describe("the embedded database in its own thread", () => {
  let db: RemotePglite;
  beforeAll(async () => {
    db = await RemotePglite.create("memory://");
    await db.query("create table t (id int primary key, v text)");
  });
  afterAll(() => db.close());

  it("a long statement does not stop the server's event loop", async () => {
    let timerFired = false;
    const timer = setTimeout(() => (timerFired = true), 20);
    const done = db.query("select pg_sleep(0.5)").then(() => timerFired);
    // In the server's own thread the 20 ms timer could only fire after the 500 ms statement.
    expect(await done).toBe(true);
    clearTimeout(timer);
  });

  it("an error keeps PostgreSQL's code and constraint across the thread (a duplicate is still a 409)", async () => {
    await db.query("insert into t values (1, 'a')");
    const e = await db.query("insert into t values ($1, $2)", [1, "b"]).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(Error);
    expect(e).toMatchObject({ code: "23505", constraint: "t_pkey" });
    expect(isUniqueViolation(e, "t_pkey")).toBe(true);
    expect(isDatabaseUnavailable(e)).toBe(false);
  });

  it("a transaction that throws stores nothing; statements outside it wait for its end", async () => {
    await expect(
      db.transaction(async (tx) => {
        await tx.query("insert into t values (10, 'x')");
        throw new Error("abandoned");
      }),
    ).rejects.toThrow("abandoned");
    expect((await db.query("select count(*)::int as n from t where id = 10")).rows).toEqual([{ n: 0 }]);

    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const committed = db.transaction(async (tx) => {
      await tx.query("insert into t values (11, 'y')");
      await held;
    });
    // Issued while the transaction is open: answered after its commit, so it sees the row.
    const outside = db.query("select v from t where id = 11");
    await new Promise((r) => setTimeout(r, 50));
    release();
    await committed;
    expect((await outside).rows).toEqual([{ v: "y" }]);
  });

  it("rows come back in array mode and with drizzle's parsers (timestamps as PostgreSQL's text)", async () => {
    const r = await db.query("select 1::int as a, timestamptz '2026-01-02 03:04:05+00' as ts", [], { rowMode: "array", parsers: {} });
    expect(r.rows).toEqual([[1, "2026-01-02 03:04:05+00"]]);
    expect(r.fields.map((f) => f.name)).toEqual(["a", "ts"]);
  });

  it("a database whose thread stopped answers with a connection-level error (503), never a hang", async () => {
    const other = await RemotePglite.create("memory://");
    const pending = other.query("select pg_sleep(5)");
    await (other as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
    await expect(pending).rejects.toSatisfy(isDatabaseUnavailable);
    await expect(other.query("select 1")).rejects.toSatisfy(isDatabaseUnavailable);
  });

  it("an idle database does not keep the process alive (a CLI command ends when its work is done)", () => {
    const script = `const { RemotePglite } = await import(${JSON.stringify(new URL("./pglite-remote.ts", import.meta.url).href)});
      const db = await RemotePglite.create("memory://");
      console.log(JSON.stringify((await db.query("select 41 + 1 as n")).rows));`;
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "pglite-idle-")), "idle.mjs");
    writeFileSync(file, script);
    const out = execFileSync(process.execPath, ["--import", "tsx", file], { timeout: 30_000, encoding: "utf8" });
    expect(JSON.parse(out)).toEqual([{ n: 42 }]);
  });
});
