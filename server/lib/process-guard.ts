import type { Logger } from "./log";

/** Error codes postgres.js gives its own connection failures (not PostgreSQL's SQLSTATEs). */
const DRIVER_CODES = /^(CONNECTION_(CLOSED|ENDED|DESTROYED)|CONNECT_TIMEOUT|COPY_IN_PROGRESS|ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT)$/;
/** A stack frame inside the database driver (the bundle keeps packages outside it, so the path shows). */
const DRIVER_FRAME = /[\\/]node_modules[\\/]postgres[\\/]/;

/**
 * An error the database driver raised outside any query (a deferred write, a stream event, a promise
 * nobody awaited): PostgreSQL's own errors, postgres.js's connection errors, anything thrown from
 * its code. The driver recovers from these by reconnecting; the process has no reason to end.
 */
export function isDriverError(e: unknown): boolean {
  const err = e as { name?: unknown; code?: unknown; stack?: unknown } | null;
  if (!err || typeof err !== "object") return false;
  if (err.name === "PostgresError") return true;
  if (typeof err.code === "string" && DRIVER_CODES.test(err.code)) return true;
  return typeof err.stack === "string" && DRIVER_FRAME.test(err.stack);
}

export type GuardOutcome = "survived" | "fatal";

/**
 * Decides what an uncaught exception or unhandled rejection does to the process. A driver error is
 * logged as one JSON line (its kind and code, never its query or parameters) and the process keeps
 * serving: a failover or a terminated backend is the database's event, and ending every instance
 * that shares the database turns it into a full outage. Anything else is a programming error whose
 * damage is unknown (half-updated state, a leaked lock): it is logged and `fatal` runs, which drains
 * and exits non-zero so the supervisor starts a clean process; clicks are in the write-ahead spool.
 */
export function createProcessGuard(log: Logger, fatal: (e: unknown) => void) {
  let survived = 0;
  return {
    get survived() {
      return survived;
    },
    handle(e: unknown, origin: "uncaughtException" | "unhandledRejection"): GuardOutcome {
      const err = e as { name?: unknown; code?: unknown; message?: unknown } | null;
      if (isDriverError(e)) {
        survived++;
        log.error(
          { origin, type: String(err?.name ?? typeof e), errorCode: typeof err?.code === "string" ? err.code : undefined, survived },
          "database driver error",
        );
        return "survived";
      }
      const stack =
        e instanceof Error
          ? e.stack
              ?.split("\n")
              .filter((l) => l.startsWith("    at "))
              .join("\n")
          : undefined;
      log.fatal(
        { origin, type: String(err?.name ?? typeof e), errorCode: typeof err?.code === "string" ? err.code : undefined, stack },
        "uncaught error: stopping",
      );
      fatal(e);
      return "fatal";
    },
  };
}

/** Installs the guard on the process (main.ts). */
export function guardProcess(log: Logger, fatal: (e: unknown) => void) {
  const guard = createProcessGuard(log, fatal);
  process.on("uncaughtException", (e) => void guard.handle(e, "uncaughtException"));
  process.on("unhandledRejection", (e) => void guard.handle(e, "unhandledRejection"));
  return guard;
}
