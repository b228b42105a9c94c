// A bench's own PostgreSQL database and data directory, made for one run and gone after it, so a
// run starts from nothing and leaves nothing behind.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import postgres from "postgres";
import { openDatabase, type Database } from "../db/client";

export const DEFAULT_ADMIN_URL = "postgres://postgres@127.0.0.1:5432/postgres";

export type Scratch = {
  /** The database's URL. */
  url: string;
  /** A DATA_DIR of the run's own. */
  dataDir: string;
  /** One connection for the bench's own statements. */
  sql: postgres.Sql;
  /** The app's database client on it (migrating it first), `poolSize` connections. */
  open(poolSize: number): Promise<Database>;
};

/**
 * Runs `fn` on a new database `<prefix>_<random>` (created through `adminUrl`) and a new
 * directory `linkshort-<prefix>-…` in the temporary folder; drops and removes both after it,
 * however it ended, with every client it opened closed first.
 */
export async function withScratchDatabase<T>(prefix: string, adminUrl: string, fn: (s: Scratch) => Promise<T>): Promise<T> {
  const name = `${prefix}_${randomBytes(4).toString("hex")}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `linkshort-${prefix.replaceAll("_", "-")}-`));
  const sql = postgres(url.href, { max: 1, onnotice: () => {} });
  const opened: Database[] = [];
  const open = async (poolSize: number) => {
    const database = await openDatabase({ databaseUrl: url.href, poolSize });
    opened.push(database);
    return database;
  };
  try {
    return await fn({ url: url.href, dataDir, sql, open });
  } finally {
    for (const database of opened) await database.close().catch(() => {});
    await sql.end().catch(() => {});
    // A database left behind is reported, not thrown: the run's own outcome is what matters.
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch((e) => console.error(`could not drop the database ${name}: ${e}`));
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
