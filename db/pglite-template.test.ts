import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { migrationsFolder, openDatabase, type Database } from "./client";
import { ensureTemplate, findTemplate, makeMigrated, prepareDataDir, templateKey } from "./pglite-template.mjs";

// Embedded database only: PostgreSQL databases are made by their operator, never from a template.
// Each database here is made on disk (initdb in WebAssembly): slow on a busy machine, hence the timeouts.
const SLOW = 240_000;

const root = mkdtempSync(path.join(os.tmpdir(), "pglite-template-"));
const journalTags = (JSON.parse(readFileSync(path.join(migrationsFolder, "meta/_journal.json"), "utf8")) as { entries: { tag: string }[] }).entries.map(
  (e) => e.tag,
);

type Shape = { columns: unknown[]; indexes: unknown[]; journal: unknown[] };

/** What must not differ between two databases: every column, every index, the migration journal. */
async function shape(database: Database): Promise<Shape> {
  const q = async (sql: string) => (await database.pglite!.query(sql)).rows;
  return {
    columns: await q(`SELECT table_schema, table_name, column_name, data_type, column_default, is_nullable
      FROM information_schema.columns WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2, 3`),
    indexes: await q(`SELECT schemaname, tablename, indexname, indexdef FROM pg_indexes WHERE schemaname NOT IN ('pg_catalog') ORDER BY 1, 2, 3`),
    journal: await q(`SELECT hash, created_at FROM drizzle.__drizzle_migrations ORDER BY id`),
  };
}

async function shapeOf(dir: string, opts: { pgliteTemplate?: string | null; migrate?: boolean } = {}): Promise<Shape> {
  const database = await openDatabase({ pgliteDir: dir, ...opts });
  try {
    return await shape(database);
  } finally {
    await database.close();
  }
}

/** The migrations without the last `n`, in a folder of their own: what an older checkout had. */
function olderMigrations(n: number): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "migrations-"));
  cpSync(migrationsFolder, dir, { recursive: true });
  const journalPath = path.join(dir, "meta/_journal.json");
  const journal = JSON.parse(readFileSync(journalPath, "utf8")) as { entries: unknown[] };
  journal.entries = journal.entries.slice(0, -n);
  writeFileSync(journalPath, JSON.stringify(journal));
  return dir;
}

let template: string;
let fromScratch: Shape;

beforeAll(async () => {
  template = await ensureTemplate(root);
  fromScratch = await shapeOf(path.join(root, "scratch"), { pgliteTemplate: null });
}, SLOW);

it(
  "a new data directory copied from the template has the columns, indexes and migration journal of one migrated from scratch",
  async () => {
    expect(fromScratch.journal).toHaveLength(journalTags.length);
    expect(await shapeOf(path.join(root, "copied"), { pgliteTemplate: template })).toEqual(fromScratch);
  },
  SLOW,
);

it(
  "a template older than the code gets the newer migrations when a data directory starts from it",
  async () => {
    const folder = olderMigrations(2);
    const old = path.join(root, `pglite-template-${templateKey(folder)}`);
    await makeMigrated(old, { folder, shared: true });
    // The template itself lacks the last two migrations: without running them the copy would differ.
    const bare = await shapeOf(path.join(root, "old-bare"), { pgliteTemplate: old, migrate: false });
    expect(bare.journal).toHaveLength(journalTags.length - 2);
    expect(await shapeOf(path.join(root, "old-migrated"), { pgliteTemplate: old })).toEqual(fromScratch);
  },
  SLOW,
);

describe("which template a new data directory starts from", () => {
  const version = templateKey().split("-").slice(0, -1).join("-");
  const fake = (dir: string, names: string[]) => {
    for (const n of names) mkdirSync(path.join(dir, n), { recursive: true });
    return dir;
  };

  it("the template of the current migrations, when there is one", () => {
    const dir = fake(mkdtempSync(path.join(os.tmpdir(), "templates-")), [`pglite-template-${version}-0000000000000000`, `pglite-template-${templateKey()}`]);
    expect(findTemplate(dir)).toBe(path.join(dir, `pglite-template-${templateKey()}`));
  });

  it("else an older one of the same PGlite version (the migrations then bring it up to date)", () => {
    const dir = fake(mkdtempSync(path.join(os.tmpdir(), "templates-")), [`pglite-template-${version}-0000000000000000`]);
    expect(findTemplate(dir)).toBe(path.join(dir, `pglite-template-${version}-0000000000000000`));
  });

  it("never one of another PGlite version, nor one still being made", () => {
    const dir = fake(mkdtempSync(path.join(os.tmpdir(), "templates-")), [
      `pglite-template-0.0.1-0000000000000000`,
      `pglite-template-${templateKey()}.new-12345`,
    ]);
    expect(findTemplate(dir)).toBeUndefined();
  });
});

it("making the template removes the older ones and dead processes' leftovers, never one another process is making", async () => {
  const version = templateKey().split("-").slice(0, -1).join("-");
  const dir = mkdtempSync(path.join(os.tmpdir(), "templates-"));
  // A pid no process has: above the kernel's largest.
  const dead = 4_194_304 + 1;
  const names = [
    `pglite-template-${templateKey()}`,
    `pglite-template-${version}-0000000000000000`,
    `pglite-template-0.0.1-0000000000000000`,
    `pglite-template-${version}-1111111111111111.new-${dead}`,
    `pglite-template-${version}-2222222222222222.new-${process.pid}`,
    "server.mjs",
  ];
  for (const n of names) mkdirSync(path.join(dir, n));
  await ensureTemplate(dir);
  expect(readdirSync(dir).sort()).toEqual([names[0], names[4], "server.mjs"].sort());
});

/**
 * Starts preparing `dir` in a process of its own and kills it (SIGKILL: no cleanup runs) as soon as
 * its temporary directory appears, that is while the database is being copied or made.
 */
async function killMidway(dir: string, from: string | undefined): Promise<void> {
  const module = pathToFileURL(path.resolve("db/pglite-template.mjs")).href;
  const child = spawn(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `import { prepareDataDir } from ${JSON.stringify(module)}; await prepareDataDir(${JSON.stringify(dir)}, ${JSON.stringify(from)});`,
    ],
    { stdio: "ignore" },
  );
  const exited = new Promise((r) => child.once("exit", r));
  const tmp = `${path.basename(dir)}.new-${child.pid}`;
  for (;;) {
    if (readdirSync(path.dirname(dir)).includes(tmp)) break;
    if (child.exitCode !== null) throw new Error("the first start ended before it could be killed");
    await new Promise((r) => setTimeout(r, 2));
  }
  child.kill("SIGKILL");
  await exited;
}

for (const [name, from] of [
  ["copying the template", () => template],
  ["making the database without a template", () => undefined],
] as const) {
  it(
    `a first start killed while ${name} leaves no data directory, and the next start makes a whole one`,
    async () => {
      const parent = mkdtempSync(path.join(os.tmpdir(), "killed-"));
      const dir = path.join(parent, "pglite");
      await killMidway(dir, from());
      expect(existsSync(dir)).toBe(false);
      await prepareDataDir(dir, from());
      // The dead process's temporary directory went with the next start.
      expect(readdirSync(parent)).toEqual(["pglite"]);
      expect(await shapeOf(dir, { migrate: false })).toEqual(fromScratch);
    },
    SLOW,
  );
}
