import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Column, entityKind, is, Param, SQL, sql, Table } from "drizzle-orm";
import { PgColumn, PgDialect, PgText } from "drizzle-orm/pg-core";
import { links } from "./schema";

// drizzle-orm's is() remembers its answers per prototype and entity kind (scripts/patch-drizzle.mjs,
// run by npm's postinstall); these hold it to the answers of the walk it replaces.
describe("drizzle's is(), mended to remember its answers", () => {
  const dir = path.dirname(createRequire(import.meta.url).resolve("drizzle-orm"));

  it("the installed drizzle-orm carries the mend in both its builds", () => {
    for (const file of ["entity.js", "entity.cjs"]) expect(readFileSync(path.join(dir, file), "utf8")).toContain("mended by scripts/patch-drizzle.mjs");
  });

  it("answers as the constructor chain does, the first time and every time after", () => {
    const url = links.url;
    for (let round = 0; round < 3; round++) {
      expect(is(url, PgText)).toBe(true);
      expect(is(url, PgColumn)).toBe(true);
      expect(is(url, Column)).toBe(true);
      expect(is(url, SQL)).toBe(false);
      expect(is(links, Table)).toBe(true);
      expect(is(links, Column)).toBe(false);
      expect(is(sql`select 1`, SQL)).toBe(true);
      expect(is(sql`select 1`, Param)).toBe(false);
      expect(is(new Param(1), Param)).toBe(true);
      expect(is({ a: 1 }, SQL)).toBe(false);
      expect(is([1, 2], SQL)).toBe(false);
      expect(is(null, SQL)).toBe(false);
      expect(is("text", SQL)).toBe(false);
    }
  });

  it("recognises a class of another copy of drizzle by its entity kind, as the walk did", () => {
    // Two copies of a package in one process: instanceof fails, the kind along the chain decides.
    class OtherSql {
      static readonly [entityKind] = SQL[entityKind];
    }
    class OtherSqlChild extends OtherSql {}
    class Unrelated {
      static readonly [entityKind] = "Unrelated";
    }
    expect(is(new OtherSqlChild(), SQL)).toBe(true);
    expect(is(new OtherSql(), SQL)).toBe(true);
    expect(is(new Unrelated(), SQL)).toBe(false);
    expect(is(new OtherSqlChild(), Param)).toBe(false);
  });

  it("takes a value without a prototype for no entity (the walk threw on it)", () => {
    expect(is(Object.create(null), SQL)).toBe(false);
    const json = Object.assign(Object.create(null), { a: 1 });
    const q = new PgDialect().sqlToQuery(sql`select ${new Param(json, links.targeting)}`);
    expect(q.params).toEqual(['{"a":1}']);
  });

  it("refuses a class that is no drizzle entity, as before", () => {
    class NotAnEntity {}
    expect(() => is({}, NotAnEntity as unknown as typeof SQL)).toThrow(/doesn't look like a Drizzle entity/);
  });
});
