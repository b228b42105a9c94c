/**
 * Operator command line: `npm run cli -- <command> …`, JSON on stdout.
 * Same environment variables as the server. With DATABASE_URL it connects to PostgreSQL
 * directly. With the embedded PGlite it asks the running server over its loopback admin
 * endpoint (one process per data directory), and opens the data directory itself only when
 * no server holds it.
 */
import { readFileSync } from "node:fs";
import { copyFile, stat, unlink } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { ConfigError, parseConfig, type Config } from "./config";
import { openDatabase } from "../db/client";
import { LINK_CHANNEL } from "./core/services";
import { absolutePathArgs } from "./admin/backup";
import { ADMIN_PATH, ADMIN_SECRET_HEADER, readAdminEndpointInfo, type AdminEndpointInfo } from "./admin/endpoint";
import { checkUsage, CommandError, commandFailure, email, HELP, importFormat, parse, queueImport, runAdminCommand, SEE_HELP } from "./admin/commands";
import { IMPORT_MAX_BYTES, IMPORT_MAX_MB } from "./routers/imports/csv-file";
import type { ImportJobDto } from "./routers/imports/imports.schema";
import { ensureUploadsDir, runImportJob, summary, uploadName, type JobProgress } from "./routers/imports/imports.service";
import { claimJob, newLeaseOwner } from "./routers/imports/runner";

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
  // A backup is of the database as it is (taken before an upgrade's migrations), and db:migrate reports what it applies.
  const migrate = !["db:migrate", "backup:create"].includes(parse(args).positionals[0] ?? "");
  const database = await openDatabase({ databaseUrl: config.databaseUrl, pgliteDir: path.join(config.dataDir, "pglite"), poolSize: 1, migrate });
  try {
    return { ok: true, output: await runAdminCommand(database.db, args, config, database) };
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

// ---- links:import ------------------------------------------------------------------------------

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const n = (x: number) => x.toLocaleString("en-US");

/** Progress on stderr, at most four lines a second (and always the last). */
function progressPrinter(jobId: string) {
  let last = 0;
  let shown = -1;
  return (p: JobProgress, force = false) => {
    const now = Date.now();
    if (p.rows_done === shown || (!force && now - last < 250)) return;
    last = now;
    shown = p.rows_done;
    process.stderr.write(
      `import ${jobId}: ${n(p.rows_done)} of ${n(p.rows ?? 0)} rows (created ${n(p.created)}, skipped ${n(p.skipped)}, rejected ${n(p.rejected)})\n`,
    );
  };
}

const finished = (job: ImportJobDto): Result =>
  job.status === "done"
    ? { ok: true, output: summary(job) }
    : {
        ok: false,
        failure: { error: "IMPORT_FAILED", message: `${job.error ?? "the import failed"} (after ${n(job.rows_done)} rows: ${n(job.created)} created)` },
      };

/** The job runs here (PostgreSQL, or PGlite that no server holds); SIGINT/SIGTERM stop after the batch in progress. */
type ImportArgs = { email?: string; workspace?: string; format?: string; "on-conflict"?: string; "title-to"?: string };

async function importHere(config: Config, args: ImportArgs, upload: string): Promise<Result> {
  const database = await openDatabase({ databaseUrl: config.databaseUrl, pgliteDir: path.join(config.dataDir, "pglite"), poolSize: 2 });
  let stop = false;
  const onSignal = () => {
    stop = true;
    process.stderr.write("stopping after the batch in progress…\n");
  };
  process.on("SIGINT", onSignal).on("SIGTERM", onSignal);
  try {
    const owner = newLeaseOwner();
    const job = await queueImport(database.db, config, {
      email: args.email,
      workspace: args.workspace,
      format: args.format,
      onConflict: args["on-conflict"],
      titleTo: args["title-to"],
      upload,
      leaseOwner: owner,
    });
    const show = progressPrinter(job.id);
    // This process has no caches of its own: the servers' caches hear of each new link on their channel.
    const invalidateSlugs = async (keys: string[]) => {
      for (const key of keys) await database.notify(LINK_CHANNEL, key);
    };
    const deps = { db: database.db, config, invalidateSlugs, driver: database.driver };
    // The workspace's imports run one at a time: wait for the earlier ones (a server may run this one meanwhile).
    for (let said = false; job.status === "queued"; await sleep(500)) {
      const turn = await claimJob(database.db, job.id, owner, database.driver === "pglite");
      if (turn === "claimed") break;
      if (turn === "ended") return finished((await runAdminCommand(database.db, ["links:import:status", "--job", job.id], config)) as ImportJobDto);
      if (stop)
        return {
          ok: false,
          failure: { error: "INTERRUPTED", message: `import ${job.id} is queued; it runs when a server with this DATABASE_URL and DATA_DIR runs` },
        };
      if (!said) process.stderr.write(`import ${job.id}: queued behind another import of this workspace…\n`);
      said = true;
    }
    const result = await runImportJob(deps, job.id, owner, { shouldStop: () => stop, onProgress: (p) => show(p) });
    const end = (await runAdminCommand(database.db, ["links:import:status", "--job", job.id], config)) as ImportJobDto;
    show(end, true);
    if (result === "stopped" || result === "lost") {
      return {
        ok: false,
        failure: {
          error: "INTERRUPTED",
          message: `stopped after ${n(end.rows_done)} of ${n(end.rows ?? 0)} rows; import ${job.id} goes on when a server with this DATABASE_URL and DATA_DIR runs`,
        },
      };
    }
    return finished(end);
  } finally {
    process.off("SIGINT", onSignal).off("SIGTERM", onSignal);
    await database.close();
  }
}

/**
 * The running server holds the embedded database: it queues the job (its import runner takes it at
 * once) and is asked how it goes until the end, across restarts of the server (the job resumes there).
 */
async function importThroughServer(config: Config, args: ImportArgs, upload: string): Promise<Result> {
  const queueArgs = ["links:import:queue", "--upload", upload, ...Object.entries(args).flatMap(([k, v]) => (v === undefined ? [] : [`--${k}`, v]))];
  const queued = await run(config, queueArgs);
  if (!queued.ok) return queued;
  const job = queued.output as ImportJobDto;
  const show = progressPrinter(job.id);
  let unreachableSince = 0;
  for (;;) {
    await sleep(300);
    const info = readAdminEndpointInfo(config.dataDir);
    let status: Result | null = null;
    try {
      if (info && alive(info.pid)) status = await askServer(info, ["links:import:status", "--job", job.id]);
    } catch {
      status = null;
    }
    if (!status) {
      // Stopped or restarting: the job resumes when the server is back.
      if (!unreachableSince) {
        unreachableSince = Date.now();
        process.stderr.write("the server does not answer; waiting for it (the import resumes when it starts again)…\n");
      } else if (Date.now() - unreachableSince > 10 * 60_000) {
        return { ok: false, failure: { error: "SERVICE_UNAVAILABLE", message: `no server for 10 minutes; import ${job.id} resumes when one starts` } };
      }
      continue;
    }
    unreachableSince = 0;
    if (!status.ok) return status;
    const now = status.output as ImportJobDto;
    show(now, now.status === "done" || now.status === "failed");
    if (now.status === "done" || now.status === "failed") return finished(now);
  }
}

/** `links:import`: the file is copied into DATA_DIR/imports/uploads, checked, made a job and run to the end. */
async function importCommand(config: Config, argv: string[]): Promise<Result> {
  const { values, positionals } = parse(argv);
  if (positionals.length > 1) throw new CommandError("USAGE", `unexpected argument ${positionals[1]}${SEE_HELP}`);
  if (!values.file) throw new CommandError("USAGE", `--file is required${SEE_HELP}`);
  email(values.email);
  importFormat(values.format);
  let size: number;
  try {
    size = (await stat(values.file)).size;
  } catch {
    throw new CommandError("USAGE", `--file ${values.file} cannot be read`);
  }
  if (size > IMPORT_MAX_BYTES) return { ok: false, failure: { error: "VALIDATION_FAILED", message: `file: is larger than ${IMPORT_MAX_MB} MB` } };
  const upload = uploadName("cli");
  const copy = path.join(await ensureUploadsDir(config.dataDir), upload);
  await copyFile(values.file, copy);
  const args: ImportArgs = {
    email: values.email,
    workspace: values.workspace,
    format: values.format,
    "on-conflict": values["on-conflict"],
    "title-to": values["title-to"],
  };
  try {
    const info = readAdminEndpointInfo(config.dataDir);
    const serverHolds = !config.databaseUrl && info !== null && alive(info.pid);
    return serverHolds ? await importThroughServer(config, args, upload) : await importHere(config, args, upload);
  } finally {
    await unlink(copy).catch(() => {}); // gone already when a job took it
  }
}

async function main() {
  const raw = process.argv.slice(2);
  // Before the configuration is read: help must work on a machine not yet configured.
  if (raw.some((a) => a === "--help" || a === "-h") || raw[0] === "help") {
    process.stdout.write(`${HELP}\n`);
    process.exit(0);
  }
  if (raw[0] === "--version" || raw[0] === "-v") {
    const { name, version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { name: string; version: string };
    process.stdout.write(`${name} ${version}\n`);
    process.exit(0);
  }
  let result: Result;
  try {
    const argv = absolutePathArgs(raw);
    // A wrong command line is said before the configuration is read or a database opened.
    checkUsage(argv);
    const config = parseConfig();
    result = parse(argv).positionals[0] === "links:import" ? await importCommand(config, argv) : await run(config, argv);
  } catch (e) {
    result = { ok: false, failure: e instanceof ConfigError ? { error: "CONFIG", message: e.message } : commandFailure(e) };
  }
  if (result.ok) {
    process.stdout.write(JSON.stringify(result.output, null, 2) + "\n");
    process.exit(0);
  }
  // One line whatever the message holds (a database's error may span several).
  process.stderr.write(JSON.stringify({ ...result.failure, message: result.failure.message.replace(/\s*\n\s*/g, " ") }) + "\n");
  process.exit(result.failure.error === "USAGE" ? 2 : 1);
}

// Whatever escapes main is still one line and exit code 1, never a stack trace.
main().catch((e: unknown) => {
  process.stderr.write(JSON.stringify({ error: "INTERNAL_ERROR", message: String(e instanceof Error ? e.message : e).replace(/\s*\n\s*/g, " ") }) + "\n");
  process.exit(1);
});
