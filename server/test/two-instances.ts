import { randomBytes } from "node:crypto";
import { openDatabase, type Database } from "../../db/client";
import { createTestDatabase, tempDataDir } from "../../db/test-db";
import { parseConfig } from "../config";
import { createServices, type AppServices } from "../core/services";
import { startServers, type RunningServers } from "../http/server";
import { freePort } from "./harness";

export type Instance = { app: AppServices; api: string; redirect: string; servers: RunningServers };

async function instance(database: Database, dataDir: string, env: Record<string, string>, remix: boolean): Promise<Instance> {
  const [appPort, redirectPort] = [await freePort(), await freePort()];
  const config = parseConfig({
    APP_URL: `http://127.0.0.1:${appPort}`,
    REDIRECT_URL: `http://127.0.0.1:${redirectPort}`,
    DATA_DIR: dataDir,
    REDIS_URL: process.env.REDIS_URL,
    LOG_LEVEL: "silent",
    ...env,
  });
  const app = await createServices(config, database, { rateLimitPrefix: `i${randomBytes(6).toString("hex")}` });
  const servers = await startServers(app, { remix });
  return { app, api: `http://127.0.0.1:${appPort}/api`, redirect: `http://127.0.0.1:${redirectPort}`, servers };
}

/**
 * Two service instances on one database (a second connection pool on PostgreSQL; the same embedded
 * database on PGlite), as behind a load balancer, with one data directory (one outbox, like one
 * mail relay). `close` stops both and disposes of the database.
 */
export async function startTwoInstances(env: Record<string, string> = {}, opts: { remix?: boolean } = {}) {
  const db = await createTestDatabase();
  const second = db.url ? await openDatabase({ databaseUrl: db.url, migrate: false, poolSize: 3 }) : db;
  const dataDir = tempDataDir();
  const started: Instance[] = [];
  const close = async () => {
    for (const i of started) {
      await i.servers.close();
      await i.app.close();
    }
    if (second !== db) await second.close();
    await db.dispose();
  };
  try {
    for (const database of [db, second]) started.push(await instance(database, dataDir, env, opts.remix ?? false));
  } catch (e) {
    await close();
    throw e;
  }
  const [a, b] = started;
  return { a, b, close };
}
