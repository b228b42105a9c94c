import { lt } from "drizzle-orm";
import type { Logger } from "../lib/log";
import type { Db } from "../../db/client";
import { auditEvents } from "../../db/schema";
import { logSafeError } from "./click-pipeline/types";

/** The audit log keeps 400 days; older events are removed once a day. */
export const AUDIT_RETENTION_DAYS = 400;
const DAY_MS = 24 * 3600 * 1000;

/** Removes the events older than the retention; answers how many went. */
export async function pruneAuditEvents(db: Db, now = Date.now()): Promise<number> {
  const gone = await db
    .delete(auditEvents)
    .where(lt(auditEvents.at, now - AUDIT_RETENTION_DAYS * DAY_MS))
    .returning({ id: auditEvents.id });
  return gone.length;
}

/** Prunes now and daily, like the click upkeep; a failure is logged and tried again the next day. */
export function startAuditRetention(app: { db: Db; log: Logger }): { stop(): void } {
  const run = () =>
    pruneAuditEvents(app.db)
      .then((n) => n && app.log.info({ events: n }, "audit events pruned (retention)"))
      .catch((e) => app.log.error(logSafeError(e), "audit retention failed"));
  void run();
  const timer = setInterval(() => void run(), DAY_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
