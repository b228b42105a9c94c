import { and, eq, lt } from "drizzle-orm";
import { stringify } from "safe-stable-stringify";
import { idempotencyKeys } from "../../db/schema";
import { AppError, ERROR_STATUS, toPublicError, type ErrorCode, type PublicError } from "../domain/errors";
import { sha256 } from "../lib/crypto";
import { newId } from "../lib/ids";
import type { Db, Tx } from "../../db/client";
import type { Actor, Context } from "./context";

export const IDEMPOTENCY_HEADER = "Idempotency-Key";
/** A key answers the same for a day; after that it is free again. */
export const KEY_TTL_MS = 24 * 3600 * 1000;
/**
 * A running request holds its key this long. Creation takes seconds at most (a bulk call of 100 links);
 * a running row past its lease belongs to an instance that stopped, and another request may take it over.
 */
export const LEASE_MS = 5 * 60 * 1000;

const KEY_RE = /^[\x20-\x7e]{1,255}$/;

type Row = typeof idempotencyKeys.$inferSelect;

/** The answer stored for replay: a success's output, or a 4xx's public error. */
type Stored = { ok: true; data: unknown } | { ok: false; body: PublicError["body"] };

/** The Idempotency-Key header of the request, or undefined; a malformed one is a 400 naming the header. */
export function idempotencyKeyOf(ctx: Pick<Context, "req">): string | undefined {
  const raw = ctx.req.headers[IDEMPOTENCY_HEADER.toLowerCase()];
  if (raw === undefined) return undefined;
  const key = Array.isArray(raw) ? raw.join(", ") : raw;
  if (!KEY_RE.test(key)) throw new AppError("VALIDATION_FAILED", { fields: { [IDEMPOTENCY_HEADER]: ["must be 1-255 printable ASCII characters"] } });
  return key;
}

/** Who the key belongs to: the workspace, or the client address without a credential. */
const ownerOf = (ctx: Context, actor: Actor | null | undefined) => (actor ? `w:${actor.workspaceId}` : `a:${ctx.req.ip}`);

/** The same procedure with the same input, whatever the order of its members. */
export const fingerprint = (path: string, rawInput: unknown) => sha256(`${path}\n${stringify(rawInput ?? null)}`);

/**
 * Takes the key for this request: inserts a running row in its own statement, so every instance sees it
 * at once. When a row is there already, answers it, unless it expired or was abandoned: then it is taken
 * over, by one request only (the update names the row as it was read).
 */
async function claim(ctx: Context, owner: string, key: string, print: string): Promise<{ id: string } | { existing: Row }> {
  const db = ctx.app.db;
  for (let attempt = 0; attempt < 5; attempt++) {
    const now = Date.now();
    const id = newId();
    const [inserted] = await db
      .insert(idempotencyKeys)
      .values({ id, scope: owner, key, fingerprint: print, state: "running", createdAt: now, leaseUntil: now + LEASE_MS })
      .onConflictDoNothing()
      .returning({ id: idempotencyKeys.id });
    if (inserted) return inserted;
    const [row] = await db
      .select()
      .from(idempotencyKeys)
      .where(and(eq(idempotencyKeys.scope, owner), eq(idempotencyKeys.key, key)));
    if (!row) continue; // removed meanwhile (a 5xx freed it): try the insert again
    const expired = row.createdAt <= now - KEY_TTL_MS;
    const abandoned = row.state === "running" && row.leaseUntil <= now;
    if (!expired && !abandoned) return { existing: row };
    const [taken] = await db
      .update(idempotencyKeys)
      .set({ id, fingerprint: print, state: "running", status: null, body: null, createdAt: now, leaseUntil: now + LEASE_MS })
      .where(and(eq(idempotencyKeys.id, row.id), eq(idempotencyKeys.leaseUntil, row.leaseUntil), eq(idempotencyKeys.createdAt, row.createdAt)))
      .returning({ id: idempotencyKeys.id });
    if (taken) return taken;
  }
  throw new AppError("IDEMPOTENCY_KEY_IN_USE");
}

/** Expired keys are removed now and then, by whichever instance is asked for a key. */
let lastSweep = 0;
async function sweep(ctx: Context) {
  const now = Date.now();
  if (now - lastSweep < 60_000) return;
  lastSweep = now;
  await ctx.app.db.delete(idempotencyKeys).where(lt(idempotencyKeys.createdAt, now - KEY_TTL_MS));
}

/** A stored answer as the procedure's result: the same output, or the same error (status and body). */
function replay(ctx: Context, row: Row) {
  ctx.res.setHeader("Idempotent-Replayed", "true");
  const stored = row.body as Stored;
  if (stored.ok) return stored.data;
  const code = stored.body.error as ErrorCode;
  throw new AppError(code in ERROR_STATUS ? code : "VALIDATION_FAILED", { fields: stored.body.fields });
}

/** A key this request holds while it runs; `settleKey` stores its answer or frees it, `keyDone` ends it here. */
export type IdempotencyClaim = { id: string; successStatus: number; here: string };

/**
 * The keys this process is running, with their input's fingerprint. The embedded database runs one
 * statement at a time, so a second request's claim would wait for the first one's transaction and
 * then find its answer (a replay, not the 409 of a key still running); checked first, it answers at
 * once. Requests on other instances see each other through the running row.
 */
const runningHere = new Map<string, string>();

/** The request holding the claim is over (answered, stored or freed). */
export function keyDone(claim: IdempotencyClaim): void {
  runningHere.delete(claim.here);
}

/**
 * Idempotent creation. With an `Idempotency-Key` header, the same key and the same input from the same
 * workspace (or address, without a credential) within a day answer the first answer again, status and
 * body, and create nothing; another input: 422 IDEMPOTENCY_KEY_REUSED; while the first still runs: 409
 * IDEMPOTENCY_KEY_IN_USE. Taken before the call's transaction opens, in a statement of its own, so a
 * second request sees a running first one at once, on any instance. Answers undefined without the
 * header, the stored output to answer again (a stored error is thrown as it was answered), or the claim.
 */
export async function takeKey(
  ctx: Context,
  actor: Actor | null | undefined,
  path: string,
  rawInput: unknown,
  successStatus: number,
): Promise<undefined | { replay: unknown } | { claim: IdempotencyClaim }> {
  const key = idempotencyKeyOf(ctx);
  if (key === undefined) return undefined;
  const print = fingerprint(path, rawInput);
  const owner = ownerOf(ctx, actor);
  const here = `${owner}\n${key}`;
  const runningPrint = runningHere.get(here);
  if (runningPrint !== undefined) throw new AppError(runningPrint === print ? "IDEMPOTENCY_KEY_IN_USE" : "IDEMPOTENCY_KEY_REUSED");
  runningHere.set(here, print);
  let claimed: Awaited<ReturnType<typeof claim>>;
  try {
    await sweep(ctx).catch(() => {});
    claimed = await claim(ctx, owner, key, print);
  } catch (e) {
    runningHere.delete(here);
    throw e;
  }
  if (!("existing" in claimed)) return { claim: { id: claimed.id, successStatus, here } };
  runningHere.delete(here);
  const row = claimed.existing;
  if (row.fingerprint !== print) throw new AppError("IDEMPOTENCY_KEY_REUSED");
  if (row.state === "running") throw new AppError("IDEMPOTENCY_KEY_IN_USE");
  return { replay: replay(ctx, row) };
}

/**
 * Every completed answer is kept for replay, errors included, except a 429 or a 5xx: those free the key
 * for a retry. Called in the call's transaction, so the answer is stored with the change it reports, and
 * once more outside it, where a key still running (no transaction, or one that rolled back) is settled.
 */
export async function settleKey(db: Db | Tx, claim: IdempotencyClaim, result: { ok: true; data: unknown } | { ok: false; error: unknown }): Promise<void> {
  const mine = and(eq(idempotencyKeys.id, claim.id), eq(idempotencyKeys.state, "running"));
  const pub = result.ok ? undefined : toPublicError(result.error);
  if (pub && (pub.status >= 500 || pub.status === 429)) return void (await db.delete(idempotencyKeys).where(mine));
  const stored: Stored = result.ok ? { ok: true, data: result.data } : { ok: false, body: pub!.body };
  await db
    .update(idempotencyKeys)
    .set({ state: "done", status: pub?.status ?? claim.successStatus, body: stored })
    .where(mine);
}

/** Frees the key of a call that threw. */
export async function releaseKey(db: Db, claim: IdempotencyClaim): Promise<void> {
  await db.delete(idempotencyKeys).where(and(eq(idempotencyKeys.id, claim.id), eq(idempotencyKeys.state, "running")));
}
