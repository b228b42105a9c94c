/**
 * Operator command line (decisions §2): `npm run cli -- <command> …`, JSON on stdout.
 * Same environment variables as the server. With DATABASE_URL it connects to PostgreSQL
 * directly. With the embedded PGlite it asks the running server over its loopback admin
 * endpoint (one process per data directory), and opens the data directory itself only when
 * no server holds it.
 */
import http from "node:http";
import path from "node:path";
import { ConfigError, parseConfig, type Config } from "./config";
import { openDatabase } from "../db/client";
import { ADMIN_PATH, ADMIN_SECRET_HEADER, readAdminEndpointInfo, type AdminEndpointInfo } from "./admin/endpoint";
import { CommandError, commandFailure, runAdminCommand } from "./admin/commands";

type Result = { ok: true; output: unknown } | { ok: false; failure: { error: string; message: string } };

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

function askServer(info: AdminEndpointInfo, args: string[]): Promise<Result> {
  const body = JSON.stringify({ args });
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port: info.port,
        path: ADMIN_PATH,
        method: "POST",
        headers: { host: info.host, "content-type": "application/json", "content-length": Buffer.byteLength(body), [ADMIN_SECRET_HEADER]: info.secret },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c) => (text += c));
        res.on("end", () => {
          let json: { output?: unknown; error?: string; message?: string } = {};
          try {
            json = JSON.parse(text);
          } catch {
            /* handled below */
          }
          if (res.statusCode === 200) resolve({ ok: true, output: json.output });
          else resolve({ ok: false, failure: { error: json.error ?? "INTERNAL_ERROR", message: json.message ?? `server answered ${res.statusCode}` } });
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

async function runDirect(config: Config, args: string[]): Promise<Result> {
  const database = await openDatabase({ databaseUrl: config.databaseUrl, pgliteDir: path.join(config.dataDir, "pglite"), poolSize: 1 });
  try {
    return { ok: true, output: await runAdminCommand(database.db, args) };
  } catch (e) {
    return { ok: false, failure: commandFailure(e) };
  } finally {
    await database.close();
  }
}

async function run(config: Config, args: string[]): Promise<Result> {
  if (config.databaseUrl) return runDirect(config, args);
  const info = readAdminEndpointInfo(config.dataDir);
  if (!info || !alive(info.pid)) return runDirect(config, args);
  // A live server holds the data directory: it must answer (it may still be starting).
  for (let attempt = 0; ; attempt++) {
    try {
      return await askServer(info, args);
    } catch (e) {
      if (attempt >= 20)
        throw new CommandError(
          "SERVICE_UNAVAILABLE",
          `the server (pid ${info.pid}) holds ${config.dataDir} but does not answer on port ${info.port}: ${(e as Error).message}`,
        );
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

async function main() {
  let result: Result;
  try {
    result = await run(parseConfig(), process.argv.slice(2));
  } catch (e) {
    result = { ok: false, failure: e instanceof ConfigError ? { error: "CONFIG", message: e.message } : commandFailure(e) };
  }
  if (result.ok) {
    process.stdout.write(JSON.stringify(result.output, null, 2) + "\n");
    process.exit(0);
  }
  process.stderr.write(JSON.stringify(result.failure) + "\n");
  process.exit(result.failure.error === "USAGE" ? 2 : 1);
}

void main();
