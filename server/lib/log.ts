import pino from "pino";
import { isDatabaseUnavailable } from "../domain/errors";

export type Logger = pino.Logger;

/** Structured JSON logs. Secrets are redacted by path, and never logged on purpose anywhere. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: undefined,
    redact: {
      paths: ["req.headers.authorization", "req.headers.cookie", "password", "code", "token", "*.password", "*.code", "*.token"],
      censor: "[redacted]",
    },
  });
}

/** What an error may show in a log line. */
export type SafeError = { type: string; errorCode?: string; message: string; stack?: string; cause?: SafeError };

/**
 * An error as a log line may carry it: its kind, code, message and stack frames, and its cause's.
 * A failed query's message holds its parameters (an e-mail address, a name), and PostgreSQL's
 * `detail` the values of a violated key: the parameters are cut from the message (the stack's first
 * line repeats it, so only its frames are kept) and no other member is copied.
 */
export function safeError(e: unknown, depth = 0): SafeError {
  if (!(e instanceof Error)) return { type: typeof e, message: "(not an Error)" };
  const err = e as Error & { code?: unknown };
  const out: SafeError = { type: err.name, message: err.message.split(/\nparams: /)[0] };
  if (typeof err.code === "string" || typeof err.code === "number") out.errorCode = String(err.code);
  const frames = err.stack?.split("\n").filter((l) => l.startsWith("    at "));
  if (frames?.length) out.stack = frames.join("\n");
  if (err.cause !== undefined && depth < 3) out.cause = safeError(err.cause, depth + 1);
  return out;
}

/** The code of the connection failure behind `e` (ECONNREFUSED, 57P01, CONNECTION_CLOSED), if it says. */
function failureCode(e: unknown): string | undefined {
  for (let cur = e as { code?: unknown; cause?: unknown } | undefined, i = 0; cur && i < 5; cur = cur.cause as typeof cur, i++)
    if (typeof cur.code === "string" && !/^(INTERNAL_SERVER_ERROR)$/.test(cur.code)) return cur.code;
  return undefined;
}

/** The part of the services a failure's log needs: its logger, and the database to watch come back. */
export type FailureLogTarget = { log: Logger; database: { ping(): Promise<void> } };

type OutageState = { since: number; failed: number; timer?: NodeJS.Timeout };
const outages = new WeakMap<object, OutageState>();
/** How often an outage's database is asked whether it is back. */
export const OUTAGE_PROBE_MS = 1000;

/**
 * Logs a request's failure. A database that cannot be reached makes every request fail alike: that
 * is one line when it goes away ("database unavailable", with the failure's code) and one when it is
 * back ("database available", with how long and how many requests failed meanwhile), found by a ping
 * every second, instead of a line per request. Anything else is one line with `safeError`.
 */
export function logFailure(app: FailureLogTarget, e: unknown, msg: string, extra: Record<string, unknown> = {}) {
  if (isDatabaseUnavailable(e)) return databaseUnavailable(app, failureCode(e));
  app.log.error({ ...extra, err: safeError(e) }, msg);
}

/** Records a failure that only says the database is away (a 503 answer whose error is gone). */
export function databaseUnavailable(app: FailureLogTarget, errorCode?: string) {
  const key = app.database;
  const state = outages.get(key);
  if (state) return void state.failed++;
  const started: OutageState = { since: Date.now(), failed: 1 };
  outages.set(key, started);
  app.log.error({ errorCode }, "database unavailable");
  const probe = () => {
    app.database.ping().then(
      () => {
        outages.delete(key);
        app.log.info({ ms: Date.now() - started.since, failedRequests: started.failed }, "database available");
      },
      () => void (started.timer = setTimeout(probe, OUTAGE_PROBE_MS).unref()),
    );
  };
  started.timer = setTimeout(probe, OUTAGE_PROBE_MS).unref();
}
