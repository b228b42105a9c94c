import { redirect } from "@remix-run/node";
import { toPublicError } from "../../server/domain/errors";
import { safeError } from "../../server/lib/log";
import { plainFields } from "../../server/lib/plain-words";
import { messageFor, type FormError } from "./messages";

/**
 * The public `{status, body}` of an error. The Remix build bundles its own copy of
 * server/domain/errors.ts, while the load context's caller throws the server's AppError class, so
 * `instanceof AppError` fails across the two: recognise it by shape first.
 */
function publicError(e: unknown): { status: number; body: { error: string; fields?: Record<string, string[]> }; headers?: Record<string, string> } {
  let cur: unknown = e;
  for (let i = 0; i < 5 && cur && typeof cur === "object"; i++) {
    const c = cur as { publicCode?: unknown; status?: unknown; fields?: Record<string, string[]>; cause?: unknown };
    if (typeof c.publicCode === "string" && typeof c.status === "number") {
      return { status: c.status, body: c.status === 400 ? { error: c.publicCode, fields: c.fields ?? {} } : { error: c.publicCode } };
    }
    cur = c.cause;
  }
  return toPublicError(e);
}

/** A Response thrown by a guard (a redirect, the outage page), also when a procedure call wrapped it. */
function thrownResponse(e: unknown): Response | undefined {
  for (let cur = e, i = 0; cur && typeof cur === "object" && i < 5; cur = (cur as { cause?: unknown }).cause, i++) if (cur instanceof Response) return cur;
  return undefined;
}

/**
 * A 5xx other than the database being away, as one JSON line like the server's (stderr), with no
 * query parameters. The outage's own line comes from handleError (entry.server.tsx).
 */
function logUnexpected(e: unknown, status: number) {
  if (status !== 503) console.error(JSON.stringify({ level: 50, time: Date.now(), err: safeError(e), msg: "dashboard call failed" }));
}

/** Maps anything a procedure throws to `{error, message, fields}` for the form that caused it. */
export function formError(e: unknown): FormError {
  const response = thrownResponse(e);
  if (response) throw response; // redirects thrown by guards pass through
  const pub = publicError(e);
  if (pub.status >= 500) logUnexpected(e, pub.status);
  return { error: pub.body.error, message: messageFor(pub.body.error), fields: plainFields(pub.body.fields ?? {}) };
}

/** A failed field check of the dashboard itself, in the same shape. */
export const fieldError = (fields: Record<string, string[]>, error = "VALIDATION_FAILED"): FormError => ({ error, message: messageFor(error), fields });

/** Runs a procedure for an action: `{ok: true, value}` or `{ok: false, error}`; a lost session goes to sign-in. */
export async function attempt<T>(request: Request, fn: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: FormError }> {
  try {
    return { ok: true, value: await fn() };
  } catch (e) {
    const err = formError(e);
    if (err.error === "UNAUTHORIZED") throw toSignIn(request);
    return { ok: false, error: err };
  }
}

export function toSignIn(request: Request) {
  const url = new URL(request.url);
  const back = url.pathname + url.search;
  return redirect(`/login?redirectTo=${encodeURIComponent(back)}`);
}

/** Loader helper: a 404 from a procedure becomes the route's 404 page. */
export async function load<T>(request: Request, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    const response = thrownResponse(e);
    if (response) throw response;
    const pub = publicError(e);
    if (pub.body.error === "UNAUTHORIZED") throw toSignIn(request);
    if (pub.status >= 500) logUnexpected(e, pub.status);
    throw new Response(messageFor(pub.body.error), { status: pub.status, headers: pub.status === 503 ? { "Retry-After": "5" } : undefined });
  }
}
