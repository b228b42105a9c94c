import type http from "node:http";
import { Redis } from "ioredis";
import { withTimeout } from "../../db/client";
import type { AppServices } from "../core/services";
import type { LimitStore } from "../lib/rate-limit";

/** Longest a readiness check waits for one dependency: a probe must answer even when it hangs. */
const CHECK_MS = 1500;
/** Retry-After of a 503 from /_/ready: about when a probe should look again. */
const RETRY_AFTER_S = "5";

type Check = "ok" | "failed" | "not configured";
export type Readiness = {
  ready: boolean;
  checks: { database: Check; redis: Check; clicks: Check; draining?: true };
  /** Where the rate limits count now (Redis, or memory: none configured or it is unreachable). */
  rateLimits: LimitStore;
};

/**
 * `/_/live` and `/_/ready`, answered the same on every origin (server.ts). Live: the process is up
 * and its event loop turns (200, nothing checked: a supervisor restarts a process that fails it, and
 * a database outage is no reason to). Ready: this instance can do its work now (else 503 with
 * Retry-After and the check that failed): the database answers, Redis answers when configured, the
 * click recorder can make a click durable (its spool writable), and it is not draining. A load
 * balancer sends traffic only to ready instances. Both `/_/ready` and `/_/health` say where the rate limits count.
 */
export function createReadiness(app: AppServices) {
  // A connection of its own: the rate limiter's client hides its state behind an in-memory fallback.
  let redis: Redis | undefined;
  const redisPing = async (): Promise<Check> => {
    if (!app.config.redisUrl) return "not configured";
    if (!redis) {
      redis = new Redis(app.config.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: CHECK_MS });
      redis.on("error", () => {}); // the failed check says it
    }
    try {
      await withTimeout(redis.ping(), CHECK_MS);
      return "ok";
    } catch {
      return "failed";
    }
  };
  const databasePing = async (): Promise<Check> => {
    try {
      await withTimeout(app.database.ping(), CHECK_MS);
      return "ok";
    } catch {
      return "failed";
    }
  };
  async function check(): Promise<Readiness> {
    const [database, redisCheck] = await Promise.all([databasePing(), redisPing()]);
    const clicks: Check = app.clicks && !app.clicks.durable ? "failed" : "ok";
    const checks: Readiness["checks"] = { database, redis: redisCheck, clicks, ...(app.draining ? { draining: true as const } : {}) };
    return { ready: database === "ok" && redisCheck !== "failed" && clicks === "ok" && !app.draining, checks, rateLimits: app.limits.store() };
  }

  return {
    check,
    /** Answers `/_/live` and `/_/ready` (GET or HEAD); false for any other request. */
    handle(req: http.IncomingMessage, res: http.ServerResponse): boolean {
      const path = (req.url ?? "").split("?")[0];
      if ((path !== "/_/live" && path !== "/_/ready") || (req.method !== "GET" && req.method !== "HEAD")) return false;
      const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        const json = Buffer.from(JSON.stringify(body));
        res.writeHead(status, { ...headers, "Content-Type": "application/json", "Content-Length": String(json.length), "Cache-Control": "no-store" });
        res.end(req.method === "HEAD" ? undefined : json);
      };
      if (path === "/_/live") {
        send(200, { status: "live" });
        return true;
      }
      check().then(
        (r) => {
          if (r.ready) return send(200, { status: "ready", checks: r.checks, rate_limits: r.rateLimits });
          const failed = Object.entries(r.checks)
            .filter(([, v]) => v === "failed" || v === true)
            .map(([k]) => k);
          send(503, { status: "unavailable", failed, checks: r.checks, rate_limits: r.rateLimits }, { "Retry-After": RETRY_AFTER_S });
        },
        () => send(503, { status: "unavailable", failed: ["check"] }, { "Retry-After": RETRY_AFTER_S }),
      );
      return true;
    },
    close() {
      redis?.disconnect();
    },
  };
}
