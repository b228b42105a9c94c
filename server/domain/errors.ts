import { ZodError, type ZodIssue } from "zod";

export type Fields = Record<string, string[]>;

/** Public error codes and their HTTP status: the one table (docs/decisions/014-errors-list-every-failing-field.md). */
export const ERROR_STATUS = {
  VALIDATION_FAILED: 400,
  INVALID_TAG: 400,
  INVALID_LINK_ID: 400,
  EXPIRES_AT_IN_THE_PAST: 400,
  EXPIRATION_URL_WITHOUT_EXPIRY: 400,
  TOO_MANY_RULES: 400,
  NOT_A_SHORT_LINK: 400,
  INVALID_CODE: 400,
  UNAUTHORIZED: 401,
  SESSION_REQUIRED: 403,
  FORBIDDEN: 403,
  INVITE_EMAIL_MISMATCH: 403,
  INSUFFICIENT_SCOPE: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  LINK_ID_ALREADY_IN_USE: 409,
  LINKTREE_LINK_NOT_EDITABLE: 409,
  SLUG_ALREADY_IN_USE: 409,
  LAST_OWNER: 409,
  PERSONAL_WORKSPACE: 409,
  ALREADY_MEMBER: 409,
  TOKEN_LIMIT_REACHED: 409,
  EMAIL_IN_USE: 409,
  DOMAIN_TAKEN: 409,
  DOMAIN_IN_USE: 409,
  DOMAIN_LIMIT: 409,
  WEBHOOK_LIMIT: 409,
  IDEMPOTENCY_KEY_IN_USE: 409,
  IDEMPOTENCY_KEY_REUSED: 422,
  PAYLOAD_TOO_LARGE: 413,
  INSUFFICIENT_STORAGE: 507,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
  SLUGS_EXHAUSTED: 503,
} as const;
export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * The domain error: a public code, its status, and the failing fields. It knows no transport: each
 * door (REST, /trpc, the dashboard, the CLI) turns it into its own answer with toPublicError, and
 * tRPC carries it as the cause of its own error. Anything else that escapes is a 500 INTERNAL_ERROR.
 */
export class AppError extends Error {
  override readonly name = "AppError";
  readonly publicCode: ErrorCode;
  readonly status: number;
  readonly fields?: Fields;
  readonly headers?: Record<string, string>;
  constructor(code: ErrorCode, opts: { fields?: Fields; headers?: Record<string, string>; message?: string } = {}) {
    const status = ERROR_STATUS[code];
    super(opts.message ?? code);
    this.publicCode = code;
    this.status = status;
    this.fields = opts.fields ?? (status === 400 ? {} : undefined);
    this.headers = opts.headers;
  }
}

export const notFound = () => new AppError("NOT_FOUND");
export const validation = (fields: Fields, code: ErrorCode = "VALIDATION_FAILED") => new AppError(code, { fields });

/** Field names whose failures carry a specific code (the rest are VALIDATION_FAILED). */
const FIELD_CODES: Record<string, ErrorCode> = {
  slug: "INVALID_LINK_ID",
  id: "INVALID_LINK_ID",
  link_id: "INVALID_LINK_ID",
  tags: "INVALID_TAG",
};

/** A zod issue can name its own code: `ctx.addIssue({ code: "custom", params: { code: "TOO_MANY_RULES" } })`. */
export function issueCode(issue: ZodIssue): ErrorCode | undefined {
  const own = issue.code === "custom" ? (issue.params?.code as ErrorCode | undefined) : undefined;
  if (own) return own;
  const field = issue.path[0];
  return typeof field === "string" ? FIELD_CODES[field] : undefined;
}

export function fromZodError(err: ZodError): AppError {
  const fields: Fields = {};
  let code: ErrorCode | undefined;
  const add = (name: string, message: string) => {
    // Own members only: a body key named `constructor` or `__proto__` must not reach Object.prototype.
    if (!Object.hasOwn(fields, name)) Object.defineProperty(fields, name, { value: [], enumerable: true, writable: true, configurable: true });
    fields[name].push(message);
  };
  for (const issue of err.issues) {
    if (issue.code === "unrecognized_keys") {
      const parent = issue.path.length ? issue.path.join(".") + "." : "";
      for (const key of issue.keys) add(issue.path.length ? String(issue.path[0]) : key, `unknown field ${parent}${key}`);
      continue;
    }
    const name = issue.path.length ? String(issue.path[0]) : "body";
    const where = issue.path.length > 1 ? `${issue.path.slice(1).join(".")}: ` : "";
    add(name, where + issue.message);
    code ??= issueCode(issue);
  }
  return new AppError(code ?? "VALIDATION_FAILED", { fields });
}

export type PublicError = { status: number; body: { error: string; fields?: Fields }; headers?: Record<string, string> };

/** tRPC's own failures (its error's `code`) that have a public code; the rest are 500s. */
const TRANSPORT_CODES: Record<string, ErrorCode> = {
  PARSE_ERROR: "VALIDATION_FAILED",
  BAD_REQUEST: "VALIDATION_FAILED",
  UNAUTHORIZED: "UNAUTHORIZED",
  FORBIDDEN: "FORBIDDEN",
  NOT_FOUND: "NOT_FOUND",
  METHOD_NOT_SUPPORTED: "METHOD_NOT_ALLOWED",
  PAYLOAD_TOO_LARGE: "PAYLOAD_TOO_LARGE",
  TOO_MANY_REQUESTS: "RATE_LIMITED",
};
const isTransportError = (e: unknown): e is Error & { code: string; cause?: unknown } =>
  e instanceof Error && e.name === "TRPCError" && typeof (e as { code?: unknown }).code === "string";

/** Maps anything thrown to the public answer. Never leaks a message, stack or SQL. */
export function toPublicError(err: unknown): PublicError {
  let e: unknown = err;
  // tRPC wraps what a procedure throws in its own error; the interesting one is the cause.
  for (let i = 0; i < 5 && isTransportError(e) && e.cause; i++) e = e.cause;
  if (e instanceof ZodError) e = fromZodError(e);
  if (e instanceof AppError) {
    const body: PublicError["body"] = { error: e.publicCode };
    if (e.status === 400) body.fields = e.fields ?? {};
    return { status: e.status, body, headers: e.headers };
  }
  if (isTransportError(e)) {
    const code = TRANSPORT_CODES[e.code];
    if (code) {
      const status = ERROR_STATUS[code];
      return { status, body: status === 400 ? { error: code, fields: { body: [e.message] } } : { error: code } };
    }
  }
  // A write naming a row deleted meanwhile (its workspace, mostly): what it belonged to is gone.
  if (isForeignKeyViolation(e)) return { status: 404, body: { error: "NOT_FOUND" } };
  if (isDatabaseUnavailable(e)) {
    return { status: 503, body: { error: "SERVICE_UNAVAILABLE" }, headers: { "Retry-After": "5" } };
  }
  return { status: 500, body: { error: "INTERNAL_ERROR" } };
}

/**
 * Connection-level failures (PostgreSQL down, unreachable or refusing connections), as opposed to
 * query errors. A FATAL error ends the session before or instead of the query: ALLOW_CONNECTIONS
 * false (55000), a dropped database (3D000), too many clients (53300), failed authentication.
 */
export function isDatabaseUnavailable(e: unknown): boolean {
  const err = e as { code?: unknown; severity?: unknown } | null;
  const code = typeof err?.code === "string" ? err.code : "";
  return (
    /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|EPIPE|CONNECT_TIMEOUT|CONNECTION_(CLOSED|ENDED|DESTROYED))$/.test(code) ||
    code.startsWith("08") || // connection_exception
    code === "53300" || // too_many_connections
    code === "57P01" || // admin_shutdown
    code === "57P02" || // crash_shutdown
    code === "57P03" || // cannot_connect_now
    err?.severity === "FATAL" ||
    err?.severity === "PANIC" ||
    (e instanceof Error && e.cause !== undefined && isDatabaseUnavailable(e.cause))
  );
}

/** The PostgreSQL error of SQLSTATE `code` in `e` or its causes (drivers and drizzle wrap them). */
function databaseError(e: unknown, code: string): { constraint?: string; constraint_name?: string } | undefined {
  for (let cur: unknown = e, i = 0; cur && i < 5; cur = (cur as { cause?: unknown }).cause, i++) {
    if ((cur as { code?: string }).code === code) return cur as { constraint?: string; constraint_name?: string };
  }
  return undefined;
}

/** PostgreSQL unique violation, optionally on a given constraint/index. */
export function isUniqueViolation(e: unknown, constraint?: string): boolean {
  const c = databaseError(e, "23505");
  return !!c && (!constraint || (c.constraint ?? c.constraint_name) === constraint);
}

/** PostgreSQL not-null violation: a value the statement computed came out null. */
export const isNotNullViolation = (e: unknown): boolean => databaseError(e, "23502") !== undefined;

/** PostgreSQL foreign key violation: the referenced row does not exist (or no longer). */
export const isForeignKeyViolation = (e: unknown): boolean => databaseError(e, "23503") !== undefined;
