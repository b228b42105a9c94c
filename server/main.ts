import path from "node:path";
import { ConfigError, parseConfig } from "./config";
import { openDatabase } from "../db/client";
import { createServices } from "./core/services";
import { startServers } from "./http/server";
import { reserveAdminEndpoint } from "./admin/endpoint";
import { startImportRunner } from "./routers/imports/runner";
import { startHealthChecks } from "./routers/health/scheduler";
import { startWebhookWorker } from "./core/webhook-worker";
import { guardProcess } from "./lib/process-guard";

async function main() {
  const started = Date.now();
  let config;
  try {
    config = parseConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message);
      process.exit(1);
    }
    throw e;
  }
  // Before PGlite holds the data directory: the command line then asks this process instead.
  if (!config.databaseUrl) reserveAdminEndpoint(config);
  const database = await openDatabase({ databaseUrl: config.databaseUrl, pgliteDir: path.join(config.dataDir, "pglite") });
  const app = await createServices(config, database);
  const running = await startServers(app);
  // CSV imports: queued jobs, and those of a stopped instance, resume here.
  const imports = startImportRunner(app);
  // Scheduled destination health checks (none with LINK_HEALTH_CHECKS=off); their state is in the database.
  const healthChecks = startHealthChecks(app);
  // Webhook deliveries: due ones (a stopped instance's too, once their lease runs out) are sent from here.
  const webhookWorker = startWebhookWorker(app);
  app.log.info({ ms: Date.now() - started, database: database.driver }, "started");

  let stopping = false;
  const stop = async (signal: string, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, "draining");
    // The step the drain is in: a timed-out drain names it, so the log says what held the stop up.
    let step = "drain delay";
    const force = setTimeout(() => {
      app.log.error({ step, clicksBuffered: app.clicks?.buffered }, "drain timed out");
      process.exit(1);
    }, 15_000);
    try {
      // A load balancer's health check sees 503 and takes this instance out while it still answers.
      app.draining = true;
      // While draining, every answer closes its connection: a keep-alive client (a load balancer's
      // pool) reconnects to another instance instead of holding this one open past its close.
      // Added only now, so serving costs nothing extra until then.
      for (const s of running.servers) s.prependListener("request", (_req, res) => void (!res.headersSent && res.setHeader("Connection", "close")));
      if (config.drainDelayMs) await new Promise((r) => setTimeout(r, config.drainDelayMs));
      force.refresh(); // the 15 s for closing start now
      force.unref();
      step = "in-flight requests";
      await running.close(); // stop accepting, finish in-flight requests
      step = "import batch";
      await imports.stop(); // finish the import batch in progress, give the job back
      step = "health checks";
      await healthChecks.stop(); // checks still running keep their lease and are taken again later
      step = "webhook deliveries";
      await webhookWorker.stop(); // the attempts in flight end (10 s at most) and are recorded
      step = "buffered clicks";
      await app.close(); // flush buffered clicks, then rate limits, mail, read routing
      step = "database";
      await database.close();
      app.log.info("stopped");
      process.exit(exitCode);
    } catch (e) {
      app.log.error({ err: e }, "drain failed");
      process.exit(1);
    }
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
  // A database driver's error outside any query is logged and survived; any other uncaught error
  // drains and exits non-zero (server/lib/process-guard.ts says why).
  guardProcess(app.log, () => void stop("uncaught error", 1));
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
