import { addIssueToContext, DIRTY, z, type IssueData, type ParseInput, type ParseReturnType, type SyncParseReturnType } from "zod";

/** Characters as people count them: code points, so an emoji is one, as every documented length limit counts. */
export function charCount(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

const LENGTH_CHECKS = new Set(["min", "max", "length"]);

/**
 * A zod string that refuses NUL (PostgreSQL cannot store it in text: it would be a 500) and lone
 * surrogates (UTF-8 cannot hold them: they would be stored replaced), and whose
 * min/max/length count code points. The checks stay in `_def.checks`, so the OpenAPI document keeps
 * minLength/maxLength (JSON Schema counts code points too). Chained checks keep the class.
 */
class ZodText extends z.ZodString {
  #rest?: z.ZodString;

  _parse(input: ParseInput): ParseReturnType<string> {
    // Every other check (trim, regex, email…) as zod does them, in their order; lengths after.
    this.#rest ??= new z.ZodString({ ...this._def, checks: this._def.checks.filter((c) => !LENGTH_CHECKS.has(c.kind)) });
    const result = this.#rest._parse(input) as SyncParseReturnType<string>;
    if (result.status === "aborted") return result;
    const value = result.value;
    const issues: IssueData[] = [];
    // A plain text's own refusals name no code of their field (a query filter's, not a body member's).
    const params = (this._def as TextDef).plain ? { params: { code: "VALIDATION_FAILED" } } : {};
    if (value.includes("\0")) issues.push({ code: "custom", message: "must not contain the NUL character (U+0000)", ...params });
    // JSON's `\ud800` escape gives a string with half a surrogate pair, which UTF-8 cannot hold: it
    // would be stored as U+FFFD, silently another text than the one sent.
    if (!(value as string & { isWellFormed(): boolean }).isWellFormed())
      issues.push({ code: "custom", message: "must not contain a lone surrogate (\\ud800-\\udfff without its pair)", ...params });
    const n = charCount(value);
    for (const c of this._def.checks) {
      const message = "message" in c ? c.message : undefined;
      if ((c.kind === "max" || c.kind === "length") && n > c.value)
        issues.push({ code: "too_big", maximum: c.value, type: "string", inclusive: true, exact: c.kind === "length", message });
      if ((c.kind === "min" || c.kind === "length") && n < c.value)
        issues.push({ code: "too_small", minimum: c.value, type: "string", inclusive: true, exact: c.kind === "length", message });
    }
    if (!issues.length) return result;
    const ctx = this._getOrReturnCtx(input);
    for (const issue of issues) addIssueToContext(ctx, issue);
    return DIRTY(value);
  }

  _addCheck(check: z.ZodStringCheck): z.ZodString {
    return new ZodText({ ...this._def, checks: [...this._def.checks, check] });
  }
  trim(): z.ZodString {
    return this._addCheck({ kind: "trim" });
  }
  toLowerCase(): z.ZodString {
    return this._addCheck({ kind: "toLowerCase" });
  }
  toUpperCase(): z.ZodString {
    return this._addCheck({ kind: "toUpperCase" });
  }
}

/** The one string schema for input: use it instead of `z.string()` for every text a caller sends. */
export const text = (): z.ZodString => new ZodText(z.string()._def);
/**
 * A text whose refusals are always VALIDATION_FAILED, whatever its name: a query filter called
 * `slug` is not the body member whose failures are INVALID_LINK_ID.
 */
export const plainText = (): z.ZodString => new ZodText({ ...z.string()._def, plain: true } as TextDef);
type TextDef = z.ZodStringDef & { plain?: true };

/**
 * An e-mail address as people write one: a dot-atom local part, `@`, and a host name of two or more
 * labels. Any last label is taken (`a@b.c` included), where zod's own check wants two letters.
 */
const EMAIL_RE =
  /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
export const emailAddress = (): z.ZodString => text().trim().max(200, "at most 200 characters").regex(EMAIL_RE, "must be an e-mail address");

/** True for schemas made by `text()` (a test walks every procedure's input with it). */
export const isText = (s: unknown): boolean => s instanceof ZodText;

/** Reports a cross-field failure: `field` "" is the body itself; `code` is its specific error code. */
export type Fail = (field: string, message: string, code?: string) => void;
/** A rule over the raw body (members not yet parsed: check their types before use). */
export type BodyRule = (body: Record<string, unknown>, fail: Fail) => void;

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * A strict object input whose `fields` list every failure (docs/decisions/014-errors-list-every-failing-field.md). zod skips refinements once a
 * member fails, so the cross-field `rules` run here, always, on the raw body. Issues are ordered by the
 * shape's keys: path parameters first, then the body's members in their documented order
 * (write shapes in that order), unknown members last; so `error` is the code of the first failing field
 * in that order, whatever order the caller sent.
 */
export function body<T extends z.ZodRawShape>(shape: T, ...rules: BodyRule[]) {
  const object = z.object(shape).strict();
  const order = Object.keys(shape);
  const rank = rankIn(order);
  const checked = z.preprocess((raw, ctx) => {
    const parsed = object.safeParse(raw);
    const issues: z.ZodIssue[] = parsed.success ? [] : [...parsed.error.issues];
    if (isObject(raw)) {
      const fail: Fail = (field, message, code) => issues.push({ code: "custom", path: field ? [field] : [], message, ...(code ? { params: { code } } : {}) });
      for (const rule of rules) rule(raw, fail);
    }
    // Fatal: the inner object would only repeat these; it parses the body only when all is well.
    for (const issue of issues.sort((a, b) => rank(a) - rank(b))) ctx.addIssue({ ...issue, fatal: true } as IssueData);
    return raw;
  }, object);
  fieldOrders.set(checked, order);
  // The body's type, not preprocess's `unknown`, for the typed client; trpc-openapi documents `object`.
  return checked as unknown as z.ZodEffects<typeof object, z.output<typeof object>, z.input<typeof object>>;
}

/** Issues ranked by the shape's keys: the body itself first, unknown members last. */
const rankIn = (order: string[]) => (issue: z.ZodIssue) => {
  if (issue.code === "unrecognized_keys") return order.length;
  if (!issue.path.length) return -1;
  const i = order.indexOf(String(issue.path[0]));
  return i < 0 ? order.length : i;
};

/** The member order of each `body()` schema, for issues found outside it (`withRuntimeIssues`). */
const fieldOrders = new WeakMap<object, string[]>();

/** A failure found by a check that needs the runtime (configuration, database), not the body alone. */
export type FieldIssue = { field: string; message: string; code?: string };

/**
 * The schema's own issues for `raw` plus `extra`, in the order `body()` gives its issues, so `fields`
 * lists every failing field and the first coded one decides `error`, whether a field
 * failed the schema or a check that needed the configuration or the database.
 */
export async function withRuntimeIssues(schema: z.ZodTypeAny, raw: unknown, extra: FieldIssue[]): Promise<z.ZodError> {
  const parsed = await schema.safeParseAsync(raw);
  const own = parsed.success ? [] : parsed.error.issues;
  const added = extra.map((e): z.ZodIssue => ({
    code: "custom",
    path: e.field ? [e.field] : [],
    message: e.message,
    ...(e.code ? { params: { code: e.code } } : {}),
  }));
  const rank = rankIn(fieldOrders.get(schema) ?? []);
  // Stable: within one field, the schema's messages come first.
  return new z.ZodError([...own, ...added].sort((a, b) => rank(a) - rank(b)));
}

/** PATCH: at least one member besides the path parameters (`minProperties: 1` in the document). */
export const atLeastOne =
  (...pathParams: string[]): BodyRule =>
  (b, fail) => {
    if (!Object.keys(b).some((k) => !pathParams.includes(k) && b[k] !== undefined)) fail("", "at least one property is required");
  };
