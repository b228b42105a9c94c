import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort } from "../harness";

/**
 * PostgreSQL servers of a fault test's own: a streaming replica (pg_basebackup -R) of a primary, and,
 * when the machine's cluster does not allow replication connections, a throwaway primary (initdb) to
 * take it from. Binaries from /usr/lib/postgresql/<major>/bin; run as the `postgres` user when the
 * test runs as root (the server refuses to run as root).
 */
export type PgServer = { url: string; port: number; dir: string; stop(mode?: "fast" | "immediate"): void; remove(): void };

const asRoot = process.getuid?.() === 0;

/** The bin directory of the PostgreSQL major version `major` (e.g. 15), or null. */
export function pgBin(major: number): string | null {
  const dir = `/usr/lib/postgresql/${major}/bin`;
  return existsSync(path.join(dir, "pg_basebackup")) && existsSync(path.join(dir, "pg_ctl")) ? dir : null;
}

/** Every installed major version, for the skip message. */
export const installedMajors = () => (existsSync("/usr/lib/postgresql") ? readdirSync("/usr/lib/postgresql") : []);

function run(bin: string, tool: string, args: string[]): string {
  const cmd = path.join(bin, tool);
  try {
    return asRoot
      ? execFileSync("runuser", ["-u", "postgres", "--", cmd, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], cwd: "/tmp" })
      : execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(`${tool} ${args.join(" ")} failed: ${err.stderr || err.message}`);
  }
}

/** A temporary directory the postgres user owns (mode 0700, as the server wants its data directory). */
function ownDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  if (asRoot) execFileSync("chown", ["postgres:postgres", dir]);
  return dir;
}

function startServer(bin: string, dir: string, port: number): PgServer {
  const log = path.join(dir, "server.log");
  try {
    run(bin, "pg_ctl", ["-D", dir, "-l", log, "-w", "-t", "60", "-o", `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`, "start"]);
  } catch (e) {
    const tail = existsSync(log) ? readFileSync(log, "utf8").slice(-2000) : "";
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`${(e as Error).message}
${tail}`);
  }
  let stopped = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dir,
    stop(mode = "fast") {
      if (stopped) return;
      stopped = true;
      try {
        run(bin, "pg_ctl", ["-D", dir, "-m", mode, "-w", "-t", "60", "stop"]);
      } catch {
        // already stopped
      }
    },
    remove() {
      this.stop("immediate");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A throwaway primary: initdb (trust, replication allowed from 127.0.0.1) on a free port. */
export async function startPrimary(bin: string): Promise<PgServer> {
  const dir = ownDir("faults-pg-primary-");
  try {
    run(bin, "initdb", ["-D", dir, "-U", "postgres", "--auth=trust", "--no-sync"]);
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  // initdb's trust configuration already admits `replication` connections; wal_level=replica is the default.
  return startServer(bin, dir, await freePort());
}

/** Why `serverUrl` cannot feed a streaming replica from 127.0.0.1, or null when it can. */
export async function replicationRefusal(serverUrl: string): Promise<string | null> {
  const { default: postgres } = await import("postgres");
  const sql = postgres(serverUrl, { max: 1, onnotice: () => {} });
  try {
    const [s] = await sql<
      { wal_level: string; senders: number }[]
    >`select current_setting('wal_level') as wal_level, current_setting('max_wal_senders')::int as senders`;
    if (s.wal_level === "minimal") return `wal_level is minimal (set wal_level = replica)`;
    if (s.senders < 1) return `max_wal_senders is 0 (set it to at least 1)`;
    const rules = await sql<{ n: number }[]>`
      select count(*)::int as n from pg_hba_file_rules
      where 'replication' = any(database) and auth_method = 'trust' and type in ('host', 'hostnossl')
        and ('all' = address or address in ('127.0.0.1', 'samehost', 'samenet')
             or (netmask is not null and '127.0.0.1'::inet <<= (address || '/' || netmask)::inet))`;
    if (rules[0].n === 0) {
      const [{ file }] = await sql<{ file: string }[]>`select current_setting('hba_file') as file`;
      return `${file} has no "host replication all 127.0.0.1/32 trust" line (pg_basebackup needs one; add it and reload)`;
    }
    return null;
  } finally {
    await sql.end();
  }
}

/**
 * A streaming replica of `source` (pg_basebackup -R: standby.signal and primary_conninfo), on a free
 * port in a temporary directory. Debian keeps a cluster's configuration files in /etc, so the copy
 * gets a minimal postgresql.conf and pg_hba.conf; the settings a standby must not have below its
 * primary's are copied from it.
 */
export async function startReplica(bin: string, source: string): Promise<PgServer> {
  const { default: postgres } = await import("postgres");
  const sql = postgres(source, { max: 1, onnotice: () => {} });
  const names = ["max_connections", "max_worker_processes", "max_wal_senders", "max_prepared_transactions", "max_locks_per_transaction"];
  const settings = await sql<{ name: string; setting: string }[]>`select name, setting from pg_settings where name in ${sql(names)}`;
  await sql.end();
  const dir = ownDir("faults-pg-replica-");
  const u = new URL(source);
  const removeOnFailure = <T>(f: () => T): T => {
    try {
      return f();
    } catch (e) {
      rmSync(dir, { recursive: true, force: true });
      throw e;
    }
  };
  removeOnFailure(() =>
    run(bin, "pg_basebackup", [
      "-h",
      u.hostname,
      "-p",
      u.port || "5432",
      "-U",
      decodeURIComponent(u.username || "postgres"),
      "-D",
      dir,
      "-R",
      "-X",
      "stream",
      "-c",
      "fast",
    ]),
  );
  const conf = path.join(dir, "postgresql.conf");
  const extra = settings.map((s) => `${s.name} = ${s.setting}`).join("\n") + "\nhot_standby = on\n";
  if (!existsSync(conf)) writeFileSync(conf, extra);
  else writeFileSync(conf, extra, { flag: "a" });
  writeFileSync(path.join(dir, "pg_hba.conf"), "local all all trust\nhost all all 127.0.0.1/32 trust\n");
  if (!existsSync(path.join(dir, "pg_ident.conf"))) writeFileSync(path.join(dir, "pg_ident.conf"), "");
  if (asRoot) execFileSync("chown", ["-R", "postgres:postgres", dir]);
  return startServer(bin, dir, await freePort());
}
