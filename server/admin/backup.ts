/**
 * `backup:create` and `backup:restore`: every table as JSON lines, gzipped, on PGlite and PostgreSQL
 * alike (so a backup of one restores into the other).
 *
 * The file: a header line `{"$":"backup", format, version, created_at, migrations, tables}`, then per
 * table a line `{"$":"table","name":…}` followed by one line per row (PostgreSQL's own `row_to_json`,
 * never parsed here, so a bigint or a float keeps every digit), and last `{"$":"end","rows":{table: n}}`,
 * without which the file is taken as cut short. Tables come parents first (foreign keys), so a restore
 * inserts them in the order it reads them.
 */
import { once } from "node:events";
import { createReadStream, createWriteStream } from "node:fs";
import { rename, unlink } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { createGunzip, createGzip } from "node:zlib";
import { sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client";
import { migrationLevel, OperatorError, rowsOf } from "./operations";

export const BACKUP_FORMAT = "linkshort-backup";
export const BACKUP_VERSION = 1;
/** Rows fetched from the cursor at a time, and inserted by one statement at most. */
const BATCH_ROWS = 1000;
/** An insert's JSON parameter is sent when it grows past this, whatever its row count. */
const BATCH_BYTES = 4 * 1024 * 1024;

type Header = {
  $: "backup";
  format: string;
  version: number;
  created_at: string;
  migrations: { count: number; last: number | null };
  tables: string[];
};

export type BackupSummary = { file: string; created_at: string; migrations: number; rows: Record<string, number>; bytes?: number };

/** A relative path from the command line means the operator's directory (npm runs scripts in the project's). */
export function operatorPath(file: string): string {
  return path.resolve(process.env.INIT_CWD ?? process.cwd(), file);
}

/**
 * The command line's `--out`/`--in` made absolute where the operator typed them, before they reach a
 * running server whose own directory may be another.
 */
export function absolutePathArgs(argv: string[]): string[] {
  return argv.map((arg, i) => {
    const eq = /^--(out|in)=(.+)$/.exec(arg);
    if (eq) return `--${eq[1]}=${operatorPath(eq[2])}`;
    return i > 0 && (argv[i - 1] === "--out" || argv[i - 1] === "--in") && !arg.startsWith("--") ? operatorPath(arg) : arg;
  });
}

/**
 * The service's tables (partitions are read through their parent), each after the tables its foreign
 * keys point at.
 */
export async function tablesInOrder(db: DbOrTx): Promise<string[]> {
  const tables = (
    await rowsOf<{ name: string }>(
      db,
      sql`select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
          where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition order by c.relname`,
    )
  ).map((r) => r.name);
  const edges = await rowsOf<{ child: string; parent: string }>(
    db,
    sql`select ch.relname as child, pa.relname as parent from pg_constraint k
          join pg_class ch on ch.oid = k.conrelid join pg_class pa on pa.oid = k.confrelid
          join pg_namespace n on n.oid = ch.relnamespace
        where k.contype = 'f' and n.nspname = 'public'`,
  );
  const parents = new Map(tables.map((t) => [t, new Set<string>()]));
  for (const e of edges) if (e.child !== e.parent) parents.get(e.child)?.add(e.parent);
  const ordered: string[] = [];
  const placed = new Set<string>();
  while (ordered.length < tables.length) {
    const next = tables.filter((t) => !placed.has(t) && [...parents.get(t)!].every((p) => placed.has(p) || !parents.has(p)));
    if (!next.length) throw new OperatorError("INTERNAL_ERROR", `foreign keys form a circle among ${tables.filter((t) => !placed.has(t)).join(", ")}`);
    for (const t of next) {
      ordered.push(t);
      placed.add(t);
    }
  }
  return ordered;
}

/**
 * Writes a backup of every table to `file` (gzip). One REPEATABLE READ, read-only transaction: the
 * rows are one consistent snapshot while the service goes on writing (on PostgreSQL; the embedded
 * database runs one transaction at a time, so there the service waits for the backup). The file is
 * written beside its name and renamed when complete, so a failed backup leaves no partial file.
 */
export async function createBackup(db: Db, file: string): Promise<BackupSummary> {
  const target = path.resolve(file);
  const partial = `${target}.partial-${process.pid}`;
  const out = createWriteStream(partial, { mode: 0o600 });
  const failed = new Promise<never>((_, reject) => out.once("error", reject));
  failed.catch(() => {}); // read through the races below
  // A file that cannot be made is the operator's to fix, told before any row is read.
  await Promise.race([once(out, "open"), failed]).catch((e: NodeJS.ErrnoException) => {
    throw new OperatorError("USAGE", `--out ${target} cannot be written (${e.code ?? e.message})`);
  });
  const written = new Promise<void>((resolve) => out.once("close", () => resolve()));
  const gzip = createGzip();
  gzip.pipe(out);
  const write = async (line: string) => {
    if (!gzip.write(line + "\n")) await Promise.race([once(gzip, "drain"), failed]);
  };
  const created_at = new Date().toISOString();
  try {
    const result = await db.transaction(
      async (tx) => {
        // Timestamps in row_to_json are written with this offset; any zone reads them back the same.
        await tx.execute(sql`set local timezone to 'UTC'`);
        const tables = await tablesInOrder(tx);
        const migrations = await migrationLevel(tx);
        const header: Header = { $: "backup", format: BACKUP_FORMAT, version: BACKUP_VERSION, created_at, migrations, tables };
        await write(JSON.stringify(header));
        const rows: Record<string, number> = {};
        for (const table of tables) {
          await write(JSON.stringify({ $: "table", name: table }));
          rows[table] = 0;
          await tx.execute(sql`declare backup_rows no scroll cursor for select row_to_json(t)::text as j from ${sql.identifier(table)} t`);
          for (;;) {
            const batch = await rowsOf<{ j: string }>(tx, sql.raw(`fetch forward ${BATCH_ROWS} from backup_rows`));
            for (const r of batch) await write(r.j);
            rows[table] += batch.length;
            if (batch.length < BATCH_ROWS) break;
          }
          await tx.execute(sql`close backup_rows`);
        }
        await write(JSON.stringify({ $: "end", rows }));
        return { rows, migrations: migrations.count };
      },
      { isolationLevel: "repeatable read", accessMode: "read only" },
    );
    gzip.end();
    await written;
    await rename(partial, target);
    return { file: target, created_at, migrations: result.migrations, rows: result.rows, bytes: out.bytesWritten };
  } catch (e) {
    gzip.destroy();
    out.destroy();
    await unlink(partial).catch(() => {});
    throw e;
  }
}

/** Lines of a gzipped file; a file that is not gzip, or is cut short, fails the read with BACKUP_INVALID. */
async function* lines(file: string): AsyncGenerator<string> {
  const input = createReadStream(file);
  const gunzip = createGunzip();
  let failure: Error | undefined;
  input.on("error", (e) => gunzip.destroy(e));
  gunzip.on("error", (e) => (failure = e));
  const reader = createInterface({ input: input.pipe(gunzip), crlfDelay: Infinity });
  try {
    for await (const line of reader) if (line) yield line;
  } catch (e) {
    failure ??= e as Error;
  } finally {
    input.destroy();
  }
  if (failure) {
    const code = (failure as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "EACCES") throw new OperatorError("USAGE", `--in ${file} cannot be read (${code})`);
    throw new OperatorError("BACKUP_INVALID", `${file} is not a complete gzip file: ${failure.message}`);
  }
}

function parseLine(line: string, where: string): { $?: string; [k: string]: unknown } {
  try {
    return JSON.parse(line) as { $?: string };
  } catch {
    throw new OperatorError("BACKUP_INVALID", `${where}: not a JSON line`);
  }
}

/**
 * Restores a backup into an empty database migrated to the same point as the one backed up, in one
 * transaction: a failure anywhere (a cut-short file, a row the schema refuses) leaves the database as
 * it was. "Empty" means no user, no link and no workspace but the shared `public` one; the rows the
 * migrations or a first start made (slug blocks, salts) are replaced by the backup's. Triggers of the
 * service (slug blocks, cache notices) are off while the rows go in, as the backup holds their
 * effects already. Stop every server using the database first: their caches know nothing of it.
 */
export async function restoreBackup(db: Db, file: string): Promise<BackupSummary> {
  const source = lines(file);
  const first = await source.next();
  if (first.done) throw new OperatorError("BACKUP_INVALID", `${file} is empty`);
  const header = parseLine(first.value, "line 1") as Partial<Header>;
  if (header.$ !== "backup" || header.format !== BACKUP_FORMAT) throw new OperatorError("BACKUP_INVALID", `${file} is not a backup of this service`);
  if (header.version !== BACKUP_VERSION)
    throw new OperatorError("BACKUP_INVALID", `backup format version ${header.version}; this version reads ${BACKUP_VERSION}`);
  const rows: Record<string, number> = {};
  try {
    await restoreRows(db, source, header, file, rows);
  } finally {
    await source.return(undefined);
  }
  return { file: path.resolve(file), created_at: header.created_at ?? "", migrations: header.migrations?.count ?? 0, rows };
}

async function restoreRows(db: Db, source: AsyncGenerator<string>, header: Partial<Header>, file: string, rows: Record<string, number>): Promise<void> {
  await db.transaction(async (tx) => {
    const level = await migrationLevel(tx);
    if (level.count !== header.migrations?.count || level.last !== header.migrations.last) {
      throw new OperatorError(
        "MIGRATIONS_DIFFER",
        `the backup was made at migration ${header.migrations?.count}, this database is at ${level.count}: restore with the version that made the backup, then upgrade`,
      );
    }
    const [used] = await rowsOf<{ n: number }>(
      tx,
      sql`select ((select count(*) from users) + (select count(*) from links) + (select count(*) from workspaces where id <> 'public'))::int as n`,
    );
    if (Number(used.n) > 0) throw new OperatorError("DATABASE_NOT_EMPTY", "the database has users, links or workspaces: restore into a new, empty database");
    const tables = await tablesInOrder(tx);
    const expected = [...(header.tables ?? [])].sort();
    if (JSON.stringify(expected) !== JSON.stringify([...tables].sort())) {
      throw new OperatorError("MIGRATIONS_DIFFER", `the backup's tables (${expected.join(", ")}) are not this database's (${[...tables].sort().join(", ")})`);
    }
    await tx.execute(sql.raw(`truncate table ${tables.map((t) => `"${t}"`).join(", ")}`));
    const triggered = (
      await rowsOf<{ name: string }>(
        tx,
        sql`select distinct c.relname as name from pg_trigger g join pg_class c on c.oid = g.tgrelid
            join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public' and not g.tgisinternal`,
      )
    ).map((r) => r.name);
    for (const t of triggered) await tx.execute(sql`alter table ${sql.identifier(t)} disable trigger user`);

    let table: string | null = null;
    let batch: string[] = [];
    let bytes = 0;
    const flush = async () => {
      if (!batch.length || !table) return;
      await tx.execute(
        sql`insert into ${sql.identifier(table)} select * from json_populate_recordset(null::${sql.identifier(table)}, ${`[${batch.join(",")}]`}::json)`,
      );
      rows[table] += batch.length;
      batch = [];
      bytes = 0;
    };
    let ended: Record<string, number> | null = null;
    let n = 1;
    for await (const line of source) {
      n++;
      if (ended) throw new OperatorError("BACKUP_INVALID", `line ${n}: after the end line`);
      if (line.startsWith('{"$":')) {
        const mark = parseLine(line, `line ${n}`);
        await flush();
        if (mark.$ === "table") {
          if (typeof mark.name !== "string" || !tables.includes(mark.name))
            throw new OperatorError("BACKUP_INVALID", `line ${n}: unknown table ${String(mark.name)}`);
          table = mark.name;
          rows[table] = 0;
          continue;
        }
        if (mark.$ === "end") {
          ended = mark.rows as Record<string, number>;
          continue;
        }
        throw new OperatorError("BACKUP_INVALID", `line ${n}: unknown mark ${String(mark.$)}`);
      }
      if (!table) throw new OperatorError("BACKUP_INVALID", `line ${n}: a row before any table`);
      batch.push(line);
      bytes += line.length;
      if (batch.length >= BATCH_ROWS || bytes >= BATCH_BYTES) await flush();
    }
    await flush();
    if (!ended) throw new OperatorError("BACKUP_INVALID", `${file} is cut short (no end line): nothing was restored`);
    for (const t of Object.keys(ended)) {
      if (ended[t] !== (rows[t] ?? 0))
        throw new OperatorError("BACKUP_INVALID", `${t}: the backup says ${ended[t]} rows, it holds ${rows[t] ?? 0}: nothing was restored`);
    }
    for (const t of triggered) await tx.execute(sql`alter table ${sql.identifier(t)} enable trigger user`);
  });
}
