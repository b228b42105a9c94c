import { redirect } from "@remix-run/node";
import { plainFields } from "./plain-words";
import { messageFor, type FormError } from "./messages";

type PublicFailure = { status: number; body: { error: string; fields?: Record<string, string[]> }; headers?: Record<string, string> };

/**
 * The public `{status, body}` of an error. The load context's caller rejects with the service's
 * public fields (`code`, `status`, `fields`, `headers`) and has logged its own failures; anything
 * else thrown here is the dashboard's own fault, a 500.
 */
function publicError(e: unknown): PublicFailure {
  for (let cur = e, i = 0; cur && typeof cur === "object" && i < 5; cur = (cur as { cause?: unknown }).cause, i++) {
    const c = cur as { code?: unknown; status?: unknown; fields?: Record<string, string[]>; headers?: Record<string, string> };
    if (typeof c.code === "string" && /^[A-Z_]+$/.test(c.code) && typeof c.status === "number") {
      return { status: c.status, body: c.status === 400 ? { error: c.code, fields: c.fields ?? {} } : { error: c.code }, headers: c.headers };
    }
  }
  console.error(
    JSON.stringify({
      level: 50,
      time: Date.now(),
      err: { type: (e as Error)?.name ?? typeof e, message: String((e as Error)?.message ?? "") },
      msg: "dashboard call failed",
    }),
  );
  return { status: 500, body: { error: "INTERNAL_ERROR" } };
}

/** A Response thrown by a guard (a redirect, the outage page), also when a procedure call wrapped it. */
function thrownResponse(e: unknown): Response | undefined {
  for (let cur = e, i = 0; cur && typeof cur === "object" && i < 5; cur = (cur as { cause?: unknown }).cause, i++) if (cur instanceof Response) return cur;
  return undefined;
}

/** Maps anything a procedure throws to `{error, message, fields}` for the form that caused it. */
export function formError(e: unknown): FormError {
  const response = thrownResponse(e);
  if (response) throw response; // redirects thrown by guards pass through
  const pub = publicError(e);
  const wait = pub.body.error === "RATE_LIMITED" ? Number(pub.headers?.["Retry-After"]) : NaN;
  const message = wait > 0 ? `Too many attempts. Try again ${afterWait(wait)}.` : messageFor(pub.body.error);
  return { error: pub.body.error, message, fields: plainFields(pub.body.fields ?? {}) };
}

/** How long a limit still holds, in words: "in 40 seconds", "in 36 minutes", "in about 2 hours". */
function afterWait(seconds: number): string {
  if (seconds < 60) return `in ${Math.ceil(seconds)} second${Math.ceil(seconds) === 1 ? "" : "s"}`;
  const minutes = Math.ceil(seconds / 60);
  if (minutes < 90) return `in ${minutes} minute${minutes === 1 ? "" : "s"}`;
  return `in about ${Math.round(minutes / 60)} hours`;
}

/** A failed field check of the dashboard itself, in the same shape. */
export const fieldError = (fields: Record<string, string[]>, error = "VALIDATION_FAILED"): FormError => ({ error, message: messageFor(error), fields });

/**
 * A form whose box ("Yes, delete …") was not ticked: its error, else null. The box is `required` in
 * the page, and checked here too, so a form sent without it (scripts, old browsers) changes nothing.
 */
export const unconfirmed = (form: FormData): FormError | null => (form.get("confirm") === "yes" ? null : fieldError({ confirm: ["tick the box to confirm"] }));

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
    throw new Response(messageFor(pub.body.error), { status: pub.status, headers: pub.status === 503 ? { "Retry-After": "5" } : undefined });
  }
}

/**
 * What the server said of a file form's file (the import's upload, the avatar), which it stores
 * before the page's action runs: `upload_error` holds `{error, fields}` and `upload_status` its
 * HTTP status. Undefined when the file was taken.
 */
export function uploadError(form: FormData): { error: FormError; status: number } | undefined {
  const raw = form.get("upload_error");
  if (typeof raw !== "string" || !raw) return undefined;
  let parsed: { error?: unknown; fields?: unknown } = {};
  try {
    parsed = JSON.parse(raw) as typeof parsed;
  } catch {
    // Not the server's: treated as an unreadable file.
  }
  const code = typeof parsed.error === "string" ? parsed.error : "VALIDATION_FAILED";
  const fields = Object.fromEntries(
    Object.entries(parsed.fields && typeof parsed.fields === "object" ? parsed.fields : {}).filter(
      (f): f is [string, string[]] => Array.isArray(f[1]) && f[1].every((m) => typeof m === "string"),
    ),
  );
  const status = Number(form.get("upload_status"));
  return { error: fieldError(plainFields(fields), code), status: Number.isInteger(status) && status >= 200 && status < 600 ? status : 200 };
}
