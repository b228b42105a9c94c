import { Writable } from "node:stream";
import pino from "pino";
import { DrizzleQueryError } from "drizzle-orm/errors";
import { describe, expect, it } from "vitest";
import { createProcessGuard, isDriverError } from "./process-guard";
import { safeError } from "./log";

const memoryLog = () => {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: "trace" }, new Writable({ write: (c, _e, cb) => (lines.push(JSON.parse(String(c))), cb()) }));
  return { log, lines };
};

/** The error postgres.js threw from a deferred write on a closed connection, as its stack showed it. */
const driverTypeError = () => {
  const e = new TypeError("Cannot read properties of null (reading 'write')");
  e.stack = `${e.name}: ${e.message}\n    at Immediate.nextWrite (file:///srv/app/node_modules/postgres/src/connection.js:255:22)\n    at process.processImmediate (node:internal/timers:483:21)`;
  return e;
};

describe("process guard", () => {
  it("a database driver error outside any query is logged on one line and survived", () => {
    const { log, lines } = memoryLog();
    let stopped = 0;
    const guard = createProcessGuard(log, () => stopped++);
    const closed = Object.assign(new Error("write CONNECTION_CLOSED 127.0.0.1:5432"), { code: "CONNECTION_CLOSED" });
    const fatalPg = Object.assign(new Error("terminating connection due to administrator command"), { name: "PostgresError", code: "57P01" });
    expect(guard.handle(driverTypeError(), "uncaughtException")).toBe("survived");
    expect(guard.handle(closed, "unhandledRejection")).toBe("survived");
    expect(guard.handle(fatalPg, "unhandledRejection")).toBe("survived");
    expect(stopped).toBe(0);
    expect(guard.survived).toBe(3);
    expect(lines.map((l) => l.msg)).toEqual(["database driver error", "database driver error", "database driver error"]);
    expect(lines[1]).toMatchObject({ origin: "unhandledRejection", errorCode: "CONNECTION_CLOSED" });
  });

  it("any other uncaught error is a programming error: logged, and the process is stopped", () => {
    const { log, lines } = memoryLog();
    let stopped = 0;
    const guard = createProcessGuard(log, () => stopped++);
    expect(guard.handle(new RangeError("Invalid array length"), "uncaughtException")).toBe("fatal");
    expect(stopped).toBe(1);
    expect(lines[0]).toMatchObject({ level: 60, msg: "uncaught error: stopping", type: "RangeError" });
    expect(isDriverError("a string")).toBe(false);
  });
});

describe("safeError", () => {
  it("a failed query's parameters and PostgreSQL's detail never reach a log line", () => {
    const cause = Object.assign(new Error('duplicate key value violates unique constraint "users_email"'), {
      code: "23505",
      detail: "Key (email)=(person@example.com) already exists.",
    });
    const e = new DrizzleQueryError('insert into "users" ("email") values ($1)', ["person@example.com"], cause);
    const text = JSON.stringify(safeError(e));
    expect(text).not.toContain("person@example.com");
    expect(text).toContain("Failed query: insert into");
    expect(safeError(e).cause).toMatchObject({ errorCode: "23505" });
  });
});
