import { isDeepStrictEqual } from "node:util";
import { initTRPC } from "@trpc/server";
import type { OpenApiMeta } from "trpc-openapi";
import type { z } from "zod";
import { AppError, fromZodError, toPublicError } from "../domain/errors";
import type { Actor, Context } from "./context";
import { consumePlanRequest } from "../lib/rate-limit";
import { isObject, withRuntimeIssues, type FieldIssue } from "../lib/input";
import { SCOPES, type Scope } from "../domain/scopes";

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
};

const t = initTRPC
  .context<Context>()
  .meta<Meta>()
  .create({
    // The typed client (`/trpc`) sees the same public code and fields as REST callers.
    // A 503 (the database away) is answered as one, with its Retry-After, not as tRPC's 500 for
    // every INTERNAL_SERVER_ERROR: clients and load balancers retry a 503 and give up on a 500.
    errorFormatter({ shape, error, ctx }) {
      const pub = toPublicError(error);
      if (pub.status === 503) for (const [name, value] of Object.entries(pub.headers ?? {})) ctx?.res.setHeader(name, value);
      return {
        ...shape,
        message: pub.body.error,
        data: {
          ...shape.data,
          stack: undefined,
          status: pub.status,
          error: pub.body.error,
          fields: pub.body.fields,
          httpStatus: pub.status === 503 ? 503 : shape.data.httpStatus,
        },
      };
    },
  });

export const router = t.router;
export const mergeRouters = t.mergeRouters;
export const middleware = t.middleware;
export const createCallerFactory = t.createCallerFactory;

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

/** Authentication optional, but a presented credential must be valid (POST /links). */
export const optionalAuthProcedure = t.procedure
  .use(async ({ ctx, type, meta, next }) => {
    const auth = await ctx.auth();
    if (auth.invalid) throw new AppError("UNAUTHORIZED");
    if (auth.actor) await countAgainstPlan(ctx, auth.actor, type, meta);
    return next({ ctx: { actor: auth.actor } });
  })
  .use(scopeMiddleware);

/** A token or a session, before any scope is looked at. */
const authenticatedProcedure = t.procedure.use(async ({ ctx, type, meta, next }) => {
  const auth = await ctx.auth();
  if (!auth.actor) throw new AppError("UNAUTHORIZED");
  await countAgainstPlan(ctx, auth.actor, type, meta);
  return next({ ctx: { actor: auth.actor } });
});

/** A token or a session: `ctx.actor` is non-null below this point, and a token holds the procedure's scope. */
export const authedProcedure = authenticatedProcedure.use(scopeMiddleware);

/** Account administration: a real sign-in, never a token (403 SESSION_REQUIRED, whatever its scopes). */
export const sessionOnlyProcedure = authenticatedProcedure.use(({ ctx, next }) => {
  if (ctx.actor.via !== "session") throw new AppError("SESSION_REQUIRED");
  return next({ ctx: { actor: ctx.actor } });
});

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
        return parsed;
      }
    : async (data: unknown) => data;
  return checked;
}

/** A check of the raw input that needs the runtime (configuration, database, the caller). */
export type RuntimeCheck = (ctx: Context, actor: Actor | null, raw: Record<string, unknown>) => FieldIssue[] | Promise<FieldIssue[]>;

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
        .then(() => check(ctx, actor, rawInput))
        .catch(() => []);
      if (extra.length) throw fromZodError(await withRuntimeIssues(schema, rawInput, extra));
    }
    return next();
  });
