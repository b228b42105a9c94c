import { isDeepStrictEqual } from "node:util";
import { initTRPC, TRPCError } from "@trpc/server";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { TRPC_ERROR_CODES_BY_KEY, type TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";
import type { OpenApiMeta } from "trpc-openapi";
import type { z } from "zod";
import { AppError, fromZodError, toPublicError } from "../domain/errors";
import type { AppServices } from "../core/services";
import type { Actor, Context } from "./context";
import { consumePlanRequest } from "../lib/rate-limit";
import { isObject, withRuntimeIssues, type FieldIssue } from "../lib/input";
import { SCOPES, type Scope } from "../domain/scopes";
import { auditRuleOf, auditWriter, type AuditEvent, type AuditRule } from "./audit";
import { inAuditedTransaction, rollBack } from "./audited-transaction";
import { keyDone, releaseKey, settleKey, takeKey, type IdempotencyClaim } from "./idempotency";
import { sql } from "drizzle-orm";
import type { Db, Tx } from "../../db/client";

export type Meta = OpenApiMeta & {
  /** HTTP status of a successful REST answer (201 on create, 204 on delete). Default 200. */
  successStatus?: 200 | 201 | 202 | 204;
  /**
   * Served under API_URL like the public paths, but left out of /openapi.json: sign-in and
   * account administration are not part of the public API (not in /openapi.json).
   */
  internal?: boolean;
  /** Error statuses the operation can answer beyond those derived from its shape (see openapi.ts). */
  errors?: number[];
  /**
   * Not counted against a session's write limit: ways out (sign out, end a session, revoke a token)
   * must work even once the hour's writes are spent. Tokens count every request regardless.
   */
  uncountedForSessions?: true;
  /**
   * The scope an API token needs to call the procedure; null: none, any token may (GET /account). Every
   * procedure a token can reach declares it, null included (scopes.test.ts walks the router). Sessions
   * are not scoped.
   */
  scope?: Scope | null;
  /**
   * Refused to a workspace's viewers although the procedure declares no write scope (creating a token:
   * a token would carry the viewer's reach past the dashboard). Writes of a `…:write` scope always are.
   */
  refusesViewers?: true;
  /** What the audit log records, in the procedure's transaction, when it succeeds (see audit.ts); false: nothing. */
  audit?: AuditRule | false;
  /**
   * The target as its read answers it, before the change (read in the change's transaction): the
   * audit event then names only the members whose value the change moved (see audit.ts changedOnly).
   */
  auditBefore?: (app: AppServices, actor: Actor, input: Record<string, unknown>) => Promise<unknown>;
  /** Takes an `Idempotency-Key` header (see idempotency.ts): a repeated call answers the first answer again. */
  idempotent?: true;
  /**
   * The procedure writes its audit events itself, in the one statement that makes its change (a
   * link created in one round trip), when the call has no Idempotency-Key: the audit middleware
   * then opens no transaction and hands it an `AuditHandoff` instead.
   */
  auditsInItsStatement?: true;
};

/**
 * What a procedure with `auditsInItsStatement` gets: no transaction around it, and the events of its
 * rule for an answer (none for an anonymous caller), to be written by the statement that makes the
 * change (audit.ts `auditEventsInsert`), as done by `actor`.
 */
export type AuditHandoff = { actor: Actor | null; events(output: unknown): Promise<AuditEvent[]> };

/** The tRPC code /trpc clients see for a public status (415 and 503 have none of their own). */
const TRPC_CODE_FOR_STATUS: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: "BAD_REQUEST",
  401: "UNAUTHORIZED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  405: "METHOD_NOT_SUPPORTED",
  409: "CONFLICT",
  413: "PAYLOAD_TOO_LARGE",
  415: "BAD_REQUEST",
  422: "UNPROCESSABLE_CONTENT",
  429: "TOO_MANY_REQUESTS",
};

const t = initTRPC
  .context<Context>()
  .meta<Meta>()
  .create({
    // The typed client (`/trpc`) sees the same public code and fields as REST callers.
    // A 503 (the database away) is answered as one, with its Retry-After, not as tRPC's 500 for
    // every INTERNAL_SERVER_ERROR: clients and load balancers retry a 503 and give up on a 500.
    // The answer carries the error's headers, as on REST (Retry-After of a 429 or a 503).
    errorFormatter({ shape, error, ctx }) {
      const pub = toPublicError(error);
      for (const [name, value] of Object.entries(pub.headers ?? {})) ctx?.res.setHeader(name, value);
      const code = TRPC_CODE_FOR_STATUS[pub.status] ?? "INTERNAL_SERVER_ERROR";
      return {
        ...shape,
        code: TRPC_ERROR_CODES_BY_KEY[code],
        message: pub.body.error,
        data: {
          ...shape.data,
          code,
          stack: undefined,
          status: pub.status,
          error: pub.body.error,
          fields: pub.body.fields,
          httpStatus: pub.status === 503 ? 503 : getHTTPStatusCodeFromError(new TRPCError({ code })),
        },
      };
    },
  });

export const router = t.router;
export const mergeRouters = t.mergeRouters;
export const middleware = t.middleware;
/**
 * A server-side caller (the dashboard's, the CLI's, tests') rejects with the domain error itself, as
 * the service threw it, not with tRPC's wrapper around it.
 */
export const createCallerFactory: typeof t.createCallerFactory = (router) => {
  const factory = t.createCallerFactory(router);
  return ((ctx: Context) => rethrowingDomainErrors(factory(ctx))) as typeof factory;
};

function rethrowingDomainErrors<T extends object>(node: T): T {
  return mapCallerErrors(node, (e) => (e instanceof TRPCError && e.cause instanceof AppError ? e.cause : e));
}

/** A caller whose every procedure call rejects with `map(error)` instead of the error itself. */
export function mapCallerErrors<T extends object>(node: T, map: (e: unknown) => unknown): T {
  return new Proxy(node, {
    get: (target, key) => {
      const v: unknown = Reflect.get(target, key);
      return v !== null && (typeof v === "object" || typeof v === "function") ? mapCallerErrors(v, map) : v;
    },
    apply: (target, self, args) =>
      Promise.resolve()
        .then(() => Reflect.apply(target as (...a: unknown[]) => unknown, self, args))
        .catch((e: unknown) => {
          throw map(e);
        }),
  });
}

/** No authentication looked at (reports: "a token is not accepted or useful"). */
export const publicProcedure = t.procedure;

/**
 * Counts the call against the caller's plan (lib/rate-limit planLimit): every token request, and a
 * session's writes. A write is a mutation, which is every POST, PATCH and DELETE of the REST API, every
 * tRPC mutation and every dashboard action's call; one bulk call is one.
 */
const countAgainstPlan = (ctx: Context, actor: Actor, type: string, meta: Meta | undefined) =>
  consumePlanRequest(ctx.app, ctx.res, actor, type === "mutation" && !meta?.uncountedForSessions);

/**
 * The one place token scopes are checked, after the credential is resolved and before the input is
 * read, so a call outside the token's scopes changes nothing. A token limited to some scopes may not
 * call a procedure that declares none (fail closed); a token with every scope may, as before scopes.
 */
export const scopeMiddleware = t.middleware(({ ctx, meta, next }) => {
  const actor = (ctx as { actor?: Actor | null }).actor;
  if (actor?.via === "token" && actor.scopes) {
    const need = meta?.scope;
    const allowed = need === null || (need === undefined ? SCOPES.every((s) => actor.scopes!.includes(s)) : actor.scopes.includes(need));
    if (!allowed) throw new AppError("INSUFFICIENT_SCOPE");
  }
  return next();
});

/**
 * The one place a viewer's writes are refused, for sessions and tokens alike, before the input is read
 * (so nothing changes): every mutation of a `…:write` scope, and those that say so. A viewer still
 * manages their own account, sessions and memberships (leaving, switching), which declare no scope.
 */
export const viewerMiddleware = t.middleware(({ ctx, meta, type, next }) => {
  const actor = (ctx as { actor?: Actor | null }).actor;
  if (actor?.role === "viewer" && type === "mutation" && (meta?.refusesViewers || isWriteScope(meta?.scope))) throw new AppError("FORBIDDEN");
  return next();
});

const isWriteScope = (scope: Scope | null | undefined) => typeof scope === "string" && scope.endsWith(":write");

/**
 * The audit log's one writer. A mutation of a signed-in caller whose rule (audit.ts) logs it runs in
 * one transaction with its events: the procedure sees an app whose database is that transaction, and
 * the events its rule makes of the raw input's member names and the answer are written before the
 * commit. So no change lands without its event and no event without its change: an event that cannot
 * be written fails the call and takes the change back with it.
 *
 * A refusal (4xx) still commits, unless a failed statement already spoiled the transaction: the
 * services undo their own partial work, and what is left is the request's bookkeeping, such as the
 * stored answer a repeated Idempotency-Key is given again. Any other failure rolls everything back.
 */
export const auditMiddleware = t.middleware(async ({ ctx, path, type, meta, rawInput, next }) => {
  const actor = (ctx as { actor?: Actor | null }).actor;
  const rule = type === "mutation" && actor ? auditRuleOf(path, meta) : undefined;
  const claim = (ctx as { idempotencyClaim?: IdempotencyClaim }).idempotencyClaim;
  const none = { auditHandoff: undefined as AuditHandoff | undefined };
  const startedAt = Date.now();
  if (meta?.auditsInItsStatement && type === "mutation" && !claim) {
    const input = isObject(rawInput) ? rawInput : {};
    const auditHandoff: AuditHandoff = {
      actor: actor ?? null,
      events: async (output) => (rule && actor ? rule({ actor, input, output, db: ctx.app.db, startedAt }) : []),
    };
    return next({ ctx: { auditHandoff } });
  }
  if (!rule || !actor) return next({ ctx: none });
  const input = isObject(rawInput) ? rawInput : {};
  return inAuditedTransaction(ctx.app, async ({ app, tx }) => {
    const before = meta?.auditBefore ? await targetBefore(app, meta.auditBefore, actor, input) : undefined;
    const result = await next({ ctx: { ...none, app, read: <T>(fn: (db: Db) => Promise<T>) => fn(app.db) } });
    if (!result.ok) {
      if (toPublicError(result.error).status >= 500 || !(await stillOpen(tx))) return rollBack(result);
      if (claim) await settleKey(tx, claim, result);
      return result;
    }
    const events = await rule({ actor, input, output: result.data, db: tx, startedAt, before });
    await auditWriter.write(tx, actor, events);
    // The answer a repeated Idempotency-Key is given again lands with the change it reports.
    if (claim) await settleKey(tx, claim, result);
    return result;
  });
});

/**
 * The target before the change, in a savepoint of the change's transaction: the input is not checked
 * yet, so a read that fails (no such target, a malformed id) leaves the transaction as it was and
 * gives no snapshot (then every member sent counts as changed, and the procedure answers the error).
 */
async function targetBefore(app: AppServices, read: NonNullable<Meta["auditBefore"]>, actor: Actor, input: Record<string, unknown>): Promise<unknown> {
  try {
    return await app.db.transaction(() => read(app, actor, input));
  } catch {
    return undefined;
  }
}

/**
 * Idempotent creation (procedures whose meta says `idempotent`): the key is taken before the audited
 * transaction opens, so a second call with it sees the first running at once (409) rather than
 * waiting for its commit; a repeated call is answered here, before anything runs or is logged. The
 * answer is stored in the call's transaction when it has one (above), else, or when that rolled back,
 * here once the call is over.
 */
const idempotencyMiddleware = t.middleware(async ({ ctx, meta, path, rawInput, next }) => {
  if (!meta?.idempotent) return next();
  const actor = (ctx as { actor?: Actor | null }).actor;
  const taken = await takeKey(ctx, actor, path, rawInput, meta.successStatus ?? 200);
  if (!taken) return next();
  if ("replay" in taken) return { ok: true as const, data: taken.replay, ctx, marker: "middlewareMarker" as never };
  try {
    let result: Awaited<ReturnType<typeof next>>;
    try {
      result = await next({ ctx: { idempotencyClaim: taken.claim } });
    } catch (e) {
      await releaseKey(ctx.app.db, taken.claim);
      throw e;
    }
    await settleKey(ctx.app.db, taken.claim, result);
    return result;
  } finally {
    keyDone(taken.claim);
  }
});

/**
 * False when a statement failed outside a savepoint (a race lost on a unique index, answered 409): the
 * database then refuses the commit, and there is nothing left to keep.
 */
const stillOpen = (tx: Tx) =>
  tx.execute(sql`select 1`).then(
    () => true,
    () => false,
  );

/**
 * Authentication optional, but a presented credential must be valid (POST /links). With
 * ANONYMOUS_LINKS=off a credential is required (401 UNAUTHORIZED).
 */
export const optionalAuthProcedure = t.procedure
  .use(async ({ ctx, type, meta, next }) => {
    const auth = await ctx.auth();
    if (auth.invalid) throw new AppError("UNAUTHORIZED");
    if (!auth.actor && ctx.app.config.anonymousLinks === false) throw new AppError("UNAUTHORIZED");
    if (auth.actor) await countAgainstPlan(ctx, auth.actor, type, meta);
    return next({ ctx: { actor: auth.actor } });
  })
  .use(scopeMiddleware)
  .use(viewerMiddleware)
  .use(idempotencyMiddleware)
  .use(auditMiddleware);

/** A token or a session, before any scope is looked at. */
const authenticatedProcedure = t.procedure.use(async ({ ctx, type, meta, next }) => {
  const auth = await ctx.auth();
  if (!auth.actor) throw new AppError("UNAUTHORIZED");
  await countAgainstPlan(ctx, auth.actor, type, meta);
  return next({ ctx: { actor: auth.actor } });
});

/** A token or a session: `ctx.actor` is non-null below this point, and a token holds the procedure's scope. */
export const authedProcedure = authenticatedProcedure.use(scopeMiddleware).use(viewerMiddleware).use(idempotencyMiddleware).use(auditMiddleware);

/** Account administration: a real sign-in, never a token (403 SESSION_REQUIRED, whatever its scopes). */
export const sessionOnlyProcedure = authenticatedProcedure
  .use(({ ctx, next }) => {
    if (ctx.actor.via !== "session") throw new AppError("SESSION_REQUIRED");
    return next({ ctx: { actor: ctx.actor } });
  })
  .use(viewerMiddleware)
  .use(auditMiddleware);

/** Reviewers of abuse reports. */
export const adminProcedure = sessionOnlyProcedure.use(({ ctx, next }) => {
  if (!ctx.actor.isAdmin) throw new AppError("FORBIDDEN");
  return next();
});

/** Under test (vitest, and the servers the tests start) answers are checked against their contract. */
const CHECK_OUTPUTS = Boolean(process.env.VITEST) || process.env.NODE_ENV === "test";

const asJson = (v: unknown): unknown => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

/**
 * Every procedure's output schema: `.output(contract(schema))`. The schema documents the answer
 * (/openapi.json, the typed client's types). Under test each answer is parsed with it and must already
 * be exactly what the parse returns, no member stripped and nothing transformed, so not parsing outside
 * tests changes no answer. Outside tests the parse is skipped: for GET /links (100 links, four URL
 * checks each) it was 45% of the request's CPU (docs/performance.md).
 */
export const contract = <T extends z.ZodTypeAny>(schema: T): T => outputContract(schema, CHECK_OUTPUTS);

/** `contract` with the choice made by the caller (its test). */
export function outputContract<T extends z.ZodTypeAny>(schema: T, check: boolean): T {
  const checked: T = Object.create(schema);
  checked.parseAsync = check
    ? async (data: unknown) => {
        const parsed = await schema.parseAsync(data);
        if (!isDeepStrictEqual(asJson(parsed), asJson(data)))
          throw new Error(
            `the answer is not exactly its output schema's: ${JSON.stringify(data)?.slice(0, 500)} parses as ${JSON.stringify(parsed)?.slice(0, 500)}`,
          );
        // The answer itself, as outside tests: the parse lists members in the schema's order, which
        // would hide from the tests an answer whose members come out in another.
        return data;
      }
    : async (data: unknown) => data;
  return checked;
}

/** A check of the raw input that needs the runtime (configuration, database, the caller). */
export type RuntimeCheck = (
  app: Pick<AppServices, "db" | "config" | "domainCache">,
  actor: Actor | null,
  raw: Record<string, unknown>,
) => FieldIssue[] | Promise<FieldIssue[]>;

/**
 * Runs `check` before `schema` parses the input, and answers its failures together with the
 * schema's (`fields` lists every failing field, `error` is the first coded one's),
 * instead of only once the schema passes. Use right before `.input(schema)`. The services keep
 * their own checks (other callers reach them too); a check that throws leaves the answer to them.
 */
export const runtimeChecks = (schema: z.ZodTypeAny, check: RuntimeCheck) =>
  t.middleware(async ({ ctx, rawInput, next }) => {
    if (isObject(rawInput)) {
      const actor = (ctx as { actor?: Actor | null }).actor ?? null;
      const extra = await Promise.resolve()
        .then(() => check(ctx.app, actor, rawInput))
        .catch(() => []);
      if (extra.length) throw fromZodError(await withRuntimeIssues(schema, rawInput, extra));
    }
    return next();
  });
