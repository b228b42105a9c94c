import { z } from "zod";
import { text } from "../../lib/input";
import { linkIdSchema } from "../links";
import { msQuery, RULES } from "./analytics.schema";

/** A filter value that selects clicks where the dimension is unknown (no country, no referrer…). */
export const NONE = "(none)";

// IANA names only (Area/Location, UTC, Etc/GMT+5…); no raw offsets: PostgreSQL reads "+05:00" with
// the POSIX sign, the opposite of ISO 8601. ICU then says whether the name exists.
const ZONE_RE = /^[A-Za-z][A-Za-z0-9_+-]{0,40}(?:\/[A-Za-z0-9_+-]{1,40}){0,2}$/;
export function isTimeZone(tz: string): boolean {
  if (!ZONE_RE.test(tz)) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** What a breakdown can group by. `day` and `hour` are time buckets; the others are click attributes. */
export const BREAKDOWN_BY = [
  "day",
  "hour",
  "link",
  "country",
  "region",
  "city",
  "device",
  "os",
  "browser",
  "referrer_domain",
  "rule",
  "variant",
  "trigger",
] as const;
export type BreakdownBy = (typeof BREAKDOWN_BY)[number];
/** Attributes that can also filter; `link` filters as `link_id`. */
export const FILTER_DIMENSIONS = ["country", "region", "city", "device", "os", "browser", "referrer_domain", "rule", "variant", "trigger"] as const;
export type FilterDimension = (typeof FILTER_DIMENSIONS)[number];

export const BREAKDOWN_LIMIT_MAX = 1000;
export const BREAKDOWN_LIMIT_DEFAULT = 100;
/** Hour buckets per answer: a year and a half of hours, so an open range cannot ask for millions of rows. */
export const MAX_HOUR_BUCKETS = 13_000;
/** Day buckets per answer: a hundred years. */
export const MAX_DAY_BUCKETS = 36_600;

const orNone = (s: z.ZodTypeAny) => z.union([z.literal(NONE), s]);
const value = text().min(1, "must not be empty").max(200, "must be at most 200 characters");

const limitQuery = text()
  .regex(/^\d{1,4}$/, `must be an integer from 1 to ${BREAKDOWN_LIMIT_MAX}`)
  .transform(Number)
  .refine((n) => n >= 1 && n <= BREAKDOWN_LIMIT_MAX, `must be an integer from 1 to ${BREAKDOWN_LIMIT_MAX}`);

/** One filter value per dimension, written as the rows give it; `(none)` selects clicks without a value. */
export const filterShape = {
  country: orNone(text().regex(/^[A-Z]{2}$/, "must be an ISO 3166-1 alpha-2 code in upper case, or (none)"))
    .describe("Only clicks from this country (upper-case ISO 3166-1 alpha-2 code), or `(none)`.")
    .optional(),
  region: orNone(value).describe("Only clicks from this region code, or `(none)`.").optional(),
  city: orNone(value).describe("Only clicks from this city, or `(none)`.").optional(),
  device: orNone(z.enum(["mobile", "tablet", "smarttv", "desktop"]))
    .describe("Only clicks from this kind of device.")
    .optional(),
  os: orNone(value).describe("Only clicks from this operating system (the click's `platform`), or `(none)`.").optional(),
  browser: orNone(value).describe("Only clicks from this browser (name and major version), or `(none)`.").optional(),
  referrer_domain: orNone(value.toLowerCase())
    .describe("Only clicks referred from this host (lower case), or `(none)` for clicks without a referrer.")
    .optional(),
  rule: orNone(z.enum(RULES)).describe("Only clicks whose destination this rule decided.").optional(),
  variant: orNone(
    text()
      .regex(/^\d{1,2}$/, "must be a variant index (an integer from 0), or (none)")
      .transform(Number),
  )
    .describe("Only clicks sent to this A/B variant (index from 0), or `(none)` for clicks no variant decided.")
    .optional(),
  trigger: orNone(z.enum(["link", "qr"]))
    .describe("Only clicks through the link itself (`link`) or its QR code (`qr`).")
    .optional(),
};

const commonShape = {
  by: z
    .enum(BREAKDOWN_BY)
    .describe(
      `What each row counts: a time bucket (\`day\`, \`hour\`) or a click attribute. A range of more than ${MAX_DAY_BUCKETS.toLocaleString("en")} days (\`day\`) or ${MAX_HOUR_BUCKETS.toLocaleString("en")} hours (\`hour\`) answers 400 naming \`from\`: narrow \`from\` and \`to\`.`,
    ),
  from: msQuery.describe("Start of the range, ms since the Unix epoch, inclusive. Absent: from the first click.").optional(),
  to: msQuery.describe("End of the range, ms since the Unix epoch, inclusive. Absent: up to now.").optional(),
  tz: text()
    .refine(isTimeZone, "must be an IANA time zone name, e.g. Europe/Berlin")
    .describe("IANA time zone of the `day` and `hour` buckets (a day with a DST change has 23 or 25 hours). Default `UTC`.")
    .optional(),
  limit: limitQuery
    .describe(`Rows at most, 1-${BREAKDOWN_LIMIT_MAX} (default ${BREAKDOWN_LIMIT_DEFAULT}); \`day\` and \`hour\` answer every bucket.`)
    .optional(),
  ...filterShape,
};

export const workspaceBreakdownInput = z
  .object({ ...commonShape, link_id: linkIdSchema.describe("Only this link's clicks.").optional() })
  .strict()
  .superRefine(orderedRange);
export const linkBreakdownInput = z
  .object({ id: linkIdSchema, ...commonShape })
  .strict()
  .superRefine(orderedRange);

export function orderedRange(v: { from?: number; to?: number }, ctx: z.RefinementCtx) {
  if (v.from !== undefined && v.to !== undefined && v.from > v.to) ctx.addIssue({ code: "custom", path: ["to"], message: "must not be before from" });
}

export type WorkspaceBreakdownInput = z.output<typeof workspaceBreakdownInput>;
export type LinkBreakdownInput = z.output<typeof linkBreakdownInput>;
/** The selection of a breakdown, whichever door it came through. */
export type BreakdownQuery = Omit<WorkspaceBreakdownInput, "link_id">;

const count = z.number().int().min(0);
export const breakdownOutput = z.object({
  by: z.enum(BREAKDOWN_BY),
  from: z.number().int().nullable().describe("The range's start as asked (null: from the first click)"),
  to: z.number().int().nullable().describe("The range's end as asked (null: up to now)"),
  tz: z.string(),
  total: z.object({ clicks: count, visitors: count }).describe("Every click the range and filters select, not only the rows shown"),
  rows: z.array(
    z.object({
      key: z
        .union([z.string(), z.number().int()])
        .nullable()
        .describe("The value (null: clicks without one); for `day` and `hour` the bucket's start in ms, for `variant` the index"),
      clicks: count,
      visitors: count.describe("Distinct daily visitor keys, summed over UTC days"),
    }),
  ),
});
export type BreakdownDto = z.infer<typeof breakdownOutput>;
