import { spawn } from "node:child_process";
import { copyFileSync, existsSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { randomBytes } from "node:crypto";
import { and, eq, isNull } from "drizzle-orm";
import postgres from "postgres";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "../../../db/client";
import { importJobs, links } from "../../../db/schema";
import { tempDataDir } from "../../../db/test-db";
import { parseConfig } from "../../config";
import { cliBundle } from "../../admin/cli.test-helper";
import { queueImport } from "../../admin/commands";
import { ensureUploadsDir, uploadName } from "../../routers/imports/imports.service";
import { ADMIN_PATH, ADMIN_SECRET_HEADER, readAdminEndpointInfo } from "../../admin/endpoint";
import { sleep, startInstance, type Instance } from "./instances";

/**
 * An import is a job in the database. Stop the real server in the middle of one (SIGTERM,
 * then kill -9), start it again on the same data, and the job resumes after the start: every row
 * decided exactly once, none created twice, none lost. On PGlite the job is queued by `npm run cli
 * -- links:import` through the running server, and that command waits across the restart for its
 * summary; on PostgreSQL it is queued in the database the way the dashboard queues it.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const PG = Boolean(process.env.DATABASE_URL);
const ROWS = PG ? 30_000 : 8_000;
const SLUGLESS = 500;
const INVALID = 50;

let instance: Instance | undefined;
let cliProc: ReturnType<typeof spawn> | undefined;
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  if (instance?.proc.exitCode === null) instance.proc.kill("SIGKILL");
  if (cliProc?.exitCode === null) cliProc.kill("SIGKILL");
  for (const c of cleanup.splice(0)) await c().catch(() => {});
});

/** A fresh database for this test on PostgreSQL (PGlite lives in DATA_DIR). */
async function freshDatabaseUrl(): Promise<string | undefined> {
  if (!PG) return undefined;
  const name = `t_${randomBytes(6).toString("hex")}`;
  const admin = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  await admin.end();
  cleanup.push(async () => {
    const a = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
    await a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await a.end();
  });
  const url = new URL(process.env.DATABASE_URL!);
  url.pathname = `/${name}`;
  return url.href;
}

/** The CSV: ROWS rows with their own slug, SLUGLESS without (generated slugs), INVALID bad URLs, mixed through. */
function csvFile(dir: string, tag: string): { file: string; slugs: string[] } {
  const lines = ["url,slug,tags"];
  const slugs: string[] = [];
  for (let i = 0; i < ROWS; i++) {
    if (i % Math.floor(ROWS / INVALID) === 7) lines.push(`not-a-url-${i},bad-${tag}-${i},`);
    else if (i % Math.floor(ROWS / SLUGLESS) === 3) lines.push(`https://example.com/${tag}/free/${i},,gen`);
    else {
      slugs.push(`${tag}-${i}`);
      lines.push(`https://example.com/${tag}/${i},${tag}-${i},a|b`);
    }
  }
  const file = path.join(dir, `${tag}.csv`);
  writeFileSync(file, lines.join("\n") + "\n");
  return { file, slugs };
}

function runCli(args: string[], env: Record<string, string>) {
  const proc = spawn(process.execPath, [cliBundle, ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  proc.stdout!.on("data", (d) => (stdout += d));
  proc.stderr!.on("data", (d) => (stderr += d));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    proc.once("exit", (code) => resolve({ code, stdout, stderr })),
  );
  return { proc, done, output: () => stderr };
}

/** An admin command through the running server's loopback endpoint (what the command line does on PGlite). */
async function askServer(dataDir: string, args: string[]): Promise<any> {
  const info = readAdminEndpointInfo(dataDir);
  if (!info) return null;
  try {
    const res = await fetch(`http://127.0.0.1:${info.port}${ADMIN_PATH}`, {
      method: "POST",
      headers: { "content-type": "application/json", [ADMIN_SECRET_HEADER]: info.secret, host: info.host },
      body: JSON.stringify({ args }),
    });
    return res.ok ? ((await res.json()) as { output: unknown }).output : null;
  } catch {
    return null;
  }
}

type JobState = { status: string; rows_done: number; created: number; skipped: number; rejected: number; rows: number | null };

describe(`an import survives a stop of the server (${PG ? "PostgreSQL" : "PGlite"})`, () => {
  for (const signal of ["SIGTERM", "SIGKILL"] as const) {
    it(`stopped by ${signal} in the middle, it resumes at the next start: every row once, none created twice, none lost`, async () => {
      const dataDir = tempDataDir();
      const databaseUrl = await freshDatabaseUrl();
      const env: Record<string, string> = { DATA_DIR: dataDir, DATABASE_URL: databaseUrl ?? "", REDIS_URL: "", SMTP_URL: "" };
      const tag = `r${signal === "SIGTERM" ? "t" : "k"}${randomBytes(3).toString("hex")}`;
      const { file, slugs } = csvFile(dataDir, tag);
      instance = await startInstance(env);
      const email = `${tag}@example.com`;
      const made = runCli(["user:create", "--email", email], env);
      const user = await made.done;
      expect(user.code, user.stderr).toBe(0);
      const workspaceId: string = JSON.parse(user.stdout).workspace.id;

      // Queue the job; `status()` reads its progress.
      let jobId = "";
      let db: Database | undefined;
      let status: () => Promise<JobState | null>;
      let cliImport: ReturnType<typeof runCli> | undefined;
      if (PG) {
        db = await openDatabase({ databaseUrl, poolSize: 2 });
        cleanup.unshift(() => db!.close());
        const config = parseConfig({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl, LOG_LEVEL: "silent" });
        const upload = uploadName("cli");
        copyFileSync(file, path.join(await ensureUploadsDir(dataDir), upload));
        jobId = (await queueImport(db.db, config, { email, upload })).id;
        status = async () => {
          const [j] = await db!.db.select().from(importJobs).where(eq(importJobs.id, jobId));
          return j ? { status: j.status, rows_done: j.rowsDone, created: j.created, skipped: j.skipped, rejected: j.rejected, rows: j.rowsTotal } : null;
        };
      } else {
        cliImport = runCli(["links:import", "--email", email, "--file", file], env);
        cliProc = cliImport.proc;
        status = async () => {
          const id = /import ([0-9a-z]{8}):/.exec(cliImport!.output())?.[1];
          if (!id) return null;
          jobId = id;
          return askServer(dataDir, ["links:import:status", "--job", id]);
        };
      }

      // Stop the server once some rows went in.
      const deadline = Date.now() + 60_000;
      let before: JobState | null = null;
      while (!(before && before.rows_done > 0)) {
        if (Date.now() > deadline) throw new Error(`the import did not start:\n${instance.output.join("").slice(-2000)}`);
        before = await status();
        await sleep(20);
      }
      const code = await instance.stop(signal);
      if (signal === "SIGTERM") {
        expect(code, instance.output.join("").slice(-2000)).toBe(0);
        expect(instance.output.join("")).toMatch(/"result":"stopped"/);
      }

      // Stopped in the middle: the rows in the database are exactly those the job counted, nothing half done.
      const check = PG ? db! : await openDatabase({ pgliteDir: path.join(dataDir, "pglite"), migrate: false });
      const [mid] = await check.db.select().from(importJobs).where(eq(importJobs.id, jobId));
      const midLinks = await check.db
        .select({ slug: links.slug })
        .from(links)
        .where(and(eq(links.workspaceId, workspaceId), isNull(links.deletedAt)));
      if (!PG) await check.close();
      expect(mid.rowsDone, "stopped before the end").toBeLessThan(ROWS);
      expect(mid.rowsDone).toBeGreaterThan(0);
      expect(midLinks.length).toBe(mid.created);
      expect(mid.created + mid.skipped + mid.rejected).toBe(mid.rowsDone);
      if (signal === "SIGTERM") expect(mid.leaseOwner).toBeNull(); // given back, not left to expire
      expect(existsSync(path.join(dataDir, mid.sourcePath)), "the file stays until the job ends").toBe(true);

      // Start again on the same data: the job resumes and ends.
      instance = await startInstance(env);
      let end: JobState | null = null;
      const deadline2 = Date.now() + 180_000;
      while (end?.status !== "done") {
        if (Date.now() > deadline2) throw new Error(`the import did not resume: ${JSON.stringify(end)}\n${instance.output.join("").slice(-2000)}`);
        if (end?.status === "failed") throw new Error(JSON.stringify(end));
        await sleep(200);
        end = PG ? await status() : ((await askServer(dataDir, ["links:import:status", "--job", jobId])) ?? end);
      }
      const expected = { rows: ROWS, created: slugs.length + SLUGLESS, skipped: 0, rejected: INVALID };
      expect({ rows: end.rows, created: end.created, skipped: end.skipped, rejected: end.rejected }).toEqual(expected);
      if (cliImport) {
        // The command line waited across the restart and prints the summary.
        const r = await cliImport.done;
        expect(r.code, r.stderr).toBe(0);
        const summary = JSON.parse(r.stdout);
        expect({ ...summary, rejects: undefined }).toEqual({ ...expected, rejects: undefined });
        expect(new Set(summary.rejects.map((x: { row: number }) => x.row)).size).toBe(INVALID);
        expect(summary.rejects.every((x: { error: string }) => x.error === "VALIDATION_FAILED")).toBe(true);
      }
      expect(await instance.stop()).toBe(0);

      const after = PG ? db! : await openDatabase({ pgliteDir: path.join(dataDir, "pglite"), migrate: false });
      const all = await after.db
        .select({ slug: links.slug, url: links.url })
        .from(links)
        .where(and(eq(links.workspaceId, workspaceId), isNull(links.deletedAt)));
      const [job] = await after.db.select().from(importJobs).where(eq(importJobs.id, jobId));
      if (!PG) await after.close();
      expect(all.length).toBe(expected.created);
      expect(new Set(all.map((l) => l.url)).size).toBe(expected.created); // no row twice
      const got = new Set(all.map((l) => l.slug));
      expect(slugs.filter((s) => !got.has(s))).toEqual([]); // none lost
      expect(job.rejects).toHaveLength(INVALID);
      expect(new Set(job.rejects.map((x) => x.row)).size).toBe(INVALID);
      expect(readdirSync(path.join(dataDir, "imports")).filter((f) => f.endsWith(".csv"))).toEqual([]); // the file went with the job
    }, 400_000);
  }
});
