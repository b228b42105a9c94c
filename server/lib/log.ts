import pino from "pino";

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
