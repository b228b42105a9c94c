// The CSV import: 100,000 rows into PostgreSQL within a minute, memory bounded.
// Once by `npm run cli -- links:import` (the job runs in the command line's process on PostgreSQL),
// once by a running server's import runner (the job queued the way the dashboard queues it).
import { spawn } from "node:child_process";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { eq } from "drizzle-orm";
import type { Database } from "../db/client";
import { importJobs } from "../db/schema";
import { parseConfig } from "../server/config";
import { queueImport } from "../server/admin/commands";
import { createUserWithWorkspace } from "../server/lib/users";
import { ensureUploadsDir, uploadName } from "../server/routers/imports/imports.service";
import { root, samplePeak, startServer } from "./server";

export type ImportRun = { rows: number; ms: number; rowsPerSecond: number; peakRssMb: number; created: number; rejected: number; idleRssMb?: number };

/** A generic CSV of `rows` links: 9 in 10 with their own slug, 1 in 10 without (a generated slug), tags, a title, a creation time. */
export function importFile(dir: string, tag: string, rows: number): string {
  const lines = ["url,slug,tags,og_title,created_at"];
  for (let i = 0; i < rows; i++) {
    lines.push(
      `https://example.com/${tag}/${i}?utm_source=import&utm_medium=csv,${i % 10 ? `${tag}-${i}` : ""},${tag}|t${i % 7},Title ${i},2023-01-01T00:00:00Z`,
    );
  }
  const file = path.join(dir, `${tag}.csv`);
  writeFileSync(file, lines.join("\n") + "\n");
  return file;
}

const rssOf = (pid: number | undefined) => () => {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
};

/** `npm run cli -- links:import` on PostgreSQL: the whole run, process start included; peak RSS of that process. */
export async function benchImportCli(database: Database, o: { databaseUrl: string; dataDir: string; rows: number }): Promise<ImportRun> {
  const email = "cli-importer@bench.test";
  await createUserWithWorkspace(database.db, { email, plan: "pro" });
  const file = importFile(o.dataDir, "cli", o.rows);
  const t0 = performance.now();
  const child = spawn(process.execPath, ["--import", "tsx", "server/cli.ts", "links:import", "--email", email, "--file", file], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: o.databaseUrl, DATA_DIR: o.dataDir, LOG_LEVEL: "warn", REDIS_URL: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const rss = samplePeak(rssOf(child.pid), 50);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d) => (stdout += d));
  child.stderr!.on("data", (d) => (stderr += d));
  const code = await new Promise<number | null>((r) => child.once("exit", r));
  const ms = performance.now() - t0;
  const peakRssMb = rss.stop();
  if (code !== 0) throw new Error(`links:import exited ${code}: ${stderr.slice(-2000)}`);
  const summary = JSON.parse(stdout) as { rows: number; created: number; rejected: number };
  return { rows: summary.rows, ms, rowsPerSecond: summary.rows / (ms / 1000), peakRssMb, created: summary.created, rejected: summary.rejected };
}

/** A running server's import runner: from the job queued to done; peak RSS of the server meanwhile. */
export async function benchImportServer(
  database: Database,
  env: NodeJS.ProcessEnv,
  o: { databaseUrl: string; dataDir: string; rows: number },
): Promise<ImportRun> {
  const email = "server-importer@bench.test";
  await createUserWithWorkspace(database.db, { email, plan: "pro" });
  const file = importFile(o.dataDir, "srv", o.rows);
  const app = await startServer(env, { dataDir: o.dataDir, databaseUrl: o.databaseUrl });
  try {
    const upload = uploadName("cli");
    copyFileSync(file, path.join(await ensureUploadsDir(o.dataDir), upload));
    const config = parseConfig({ DATA_DIR: o.dataDir, DATABASE_URL: o.databaseUrl, LOG_LEVEL: "silent" });
    const idleRssMb = app.rssMb();
    const rss = samplePeak(app.rssMb, 50);
    const t0 = performance.now();
    const job = await queueImport(database.db, config, { email, upload });
    for (;;) {
      const [j] = await database.db.select().from(importJobs).where(eq(importJobs.id, job.id));
      if (j.status === "done" || j.status === "failed") {
        const ms = performance.now() - t0;
        if (j.status === "failed") throw new Error(`import failed: ${j.error}`);
        return {
          rows: j.rowsTotal ?? 0,
          ms,
          rowsPerSecond: (j.rowsTotal ?? 0) / (ms / 1000),
          peakRssMb: rss.stop(),
          idleRssMb,
          created: j.created,
          rejected: j.rejected,
        };
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await app.stop();
  }
}
