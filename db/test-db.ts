import { existsSync, readFileSync, readdirSync, writeFileSync, mkdtempSync } from "node:fs";
import { createHash, randomBytes } from "node:crypto";
import os from "node:os";
import path from "node:path";
import { migrationsFolder, openDatabase, type Database } from "./client";

/**
 * A fresh, migrated database for one test file: a new PostgreSQL database when DATABASE_URL
 * is set, otherwise an in-memory PGlite loaded from a migrated template (0.8 s instead of 2.5 s).
 */
export async function createTestDatabase(): Promise<Database & { dispose(): Promise<void> }> {
  const url = process.env.DATABASE_URL;
  if (url) {
    const { default: postgres } = await import("postgres");
    const name = `t_${randomBytes(6).toString("hex")}`;
    const admin = postgres(url, { max: 1, onnotice: () => {} });
    await admin.unsafe(`CREATE DATABASE ${name}`);
    await admin.end();
    const dbUrl = new URL(url);
    dbUrl.pathname = `/${name}`;
    const database = await openDatabase({ databaseUrl: dbUrl.href, poolSize: 5 });
    return Object.assign(database, {
      url: dbUrl.href,
      async dispose() {
        await database.close();
        const a = postgres(url, { max: 1, onnotice: () => {} });
        await a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await a.end();
      },
    });
  }
  const template = await pgliteTemplate();
  const database = await openDatabase({ pgliteLoadDataDir: new Blob([readFileSync(template)]), migrate: false });
  return Object.assign(database, { dispose: () => database.close() });
}

/** Path of a gzipped PGlite data dir with every migration applied; built once per migration set. */
export async function pgliteTemplate(): Promise<string> {
  const hash = createHash("sha256");
  for (const f of readdirSync(migrationsFolder).sort()) if (f.endsWith(".sql")) hash.update(f).update(readFileSync(path.join(migrationsFolder, f)));
  const file = path.join(os.tmpdir(), `linkshort-pglite-${hash.digest("hex").slice(0, 16)}.tar.gz`);
  if (existsSync(file)) return file;
  const db = await openDatabase({ pgliteDir: "memory://" });
  const dump = await db.pglite!.dumpDataDir("gzip");
  await db.close();
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, Buffer.from(await dump.arrayBuffer()));
  (await import("node:fs")).renameSync(tmp, file);
  return file;
}

export const tempDataDir = () => mkdtempSync(path.join(os.tmpdir(), "linkshort-data-"));
