import { z } from "zod";
import { text } from "../../lib/input";
import { linkIdSchema } from "../links";
import { RULES } from "./analytics.schema";

/** A filter value that selects clicks where the dimension is unknown (no country, no referrer…). */
export const NONE = "(none)";

/** Hourly series are drawn for at most this many days (744 points). */
export const MAX_HOURLY_DAYS = 31;

const DAY_RE = /^\d{4}-\d{2}-\d{2}$/;
const isDay = (s: string) => {
  if (!DAY_RE.test(s)) return false;
  const [y, m, d] = s.split("-").map(Number);
  const t = new Date(Date.UTC(y, m - 1, d));
  return t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d && y >= 1970 && y < 10000;
};
const day = text().refine(isDay, "must be a day YYYY-MM-DD");

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

const value = text().min(1).max(200);
const orNone = (s: z.ZodString) => z.union([z.literal(NONE), s]);

/** The clicks a dashboard view counts: every filter narrows the series and every breakdown. */
export const dashboardFilters = {
  link_id: linkIdSchema.optional(),
  referrer: orNone(value.toLowerCase()).optional(),
  country: orNone(text().regex(/^[A-Z]{2}$/, "must be an ISO 3166-1 alpha-2 code")).optional(),
  city: orNone(value).optional(),
  device: z.enum(["mobile", "tablet", "smarttv", "desktop"]).optional(),
  browser: orNone(value).optional(),
  platform: orNone(value).optional(),
  rule: z.enum(RULES).optional(),
};
export type DashboardFilterKey = Exclude<keyof typeof dashboardFilters, "link_id">;

export const dashboardInput = z
  .object({
    /** The viewer's IANA time zone: days and hours are theirs. */
    tz: text().refine(isTimeZone, "must be an IANA time zone name, e.g. Europe/Berlin").default("UTC"),
    /** First and last day, inclusive, in `tz`. Without `from`: from the first click (no comparison). Without `to`: today. */
    from: day.optional(),
    to: day.optional(),
    /** Series points; default hourly for up to two days, daily beyond. */
    interval: z.enum(["hour", "day"]).optional(),
    ...dashboardFilters,
  })
  .strict()
  .superRefine((v, ctx) => {
    if (v.from && v.to && v.from > v.to) ctx.addIssue({ code: "custom", path: ["to"], message: "must not be before from" });
  });
export type DashboardInput = z.infer<typeof dashboardInput>;

const row = z.object({
  value: z.string().nullable().describe("The filter value (null: unknown / none)"),
  label: z.string(),
  clicks: z.number().int(),
});
export type BreakdownRow = z.infer<typeof row>;

export const BREAKDOWNS = ["link", "referrer", "country", "city", "device", "browser", "platform", "rule"] as const;
export type BreakdownKey = (typeof BREAKDOWNS)[number];

export const dashboardOutput = z.object({
  tz: z.string(),
  interval: z.enum(["hour", "day"]),
  from_day: z.string(),
  to_day: z.string(),
  from: z.number().int().describe("ms, inclusive"),
  to: z.number().int().describe("ms, inclusive"),
  total: z.number().int(),
  /** Unique visitors summed over UTC days (a visitor key lasts one UTC day, see visitor-keys.ts). */
  visitors: z.number().int(),
  previous: z.object({ from_day: z.string(), to_day: z.string(), from: z.number().int(), to: z.number().int(), total: z.number().int() }).nullable(),
  /** Percent change against the previous period; null without one or when it had no clicks. */
  change: z.number().nullable(),
  series: z.array(z.object({ bucket: z.string(), clicks: z.number().int(), previous: z.number().int().nullable() })),
  breakdowns: z.object(Object.fromEntries(BREAKDOWNS.map((k) => [k, z.array(row)])) as Record<BreakdownKey, z.ZodArray<typeof row>>),
});
export type DashboardDto = z.infer<typeof dashboardOutput>;
