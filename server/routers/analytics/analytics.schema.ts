import { z } from "zod";
import { text } from "../../lib/input";
import { linkIdSchema } from "../links";
import type { Rule } from "../../domain/redirect-decision";

/**
 * `from`/`to`: optional ms-epoch query strings, inclusive. Query values
 * arrive as strings; anything but an integer is 400 VALIDATION_FAILED, never ignored.
 */
export const msQuery = text()
  .regex(/^-?\d{1,16}$/, "must be an integer (ms since the Unix epoch)")
  .transform(Number)
  .refine(Number.isSafeInteger, "must be an integer (ms since the Unix epoch)");

const rangeQuery = { from: msQuery.optional(), to: msQuery.optional() };

export const linkAnalyticsInput = z.object({ id: linkIdSchema, ...rangeQuery });
export const workspaceAnalyticsInput = z.object({ link_id: linkIdSchema.optional(), ...rangeQuery });

/** Every rule a click can be stored with (the redirect decision's), in the order the redirect table reads them. */
export const RULES = ["ios", "android", "geo", "language", "variant", "url", "expiration_url", "expired_404"] as const satisfies readonly Rule[];

export const clickEventOutput = z.object({
  ts: z.string().describe("Sort key `<timestamp_ms>#<random>`"),
  timestamp: z.number().int(),
  country: z.string().nullable(),
  region: z.string().nullable(),
  region_name: z.string().nullable(),
  timezone: z.string().nullable(),
  lat: z.number().nullable(),
  lng: z.number().nullable(),
  device: z.enum(["mobile", "tablet", "smarttv", "desktop"]),
  platform: z.string().nullable(),
  browser: z.string().nullable(),
  referer: z.string().nullable(),
  rule: z.enum(RULES).describe("The targeting rule that decided the destination"),
});
export const workspaceClickEventOutput = clickEventOutput.extend({ link_id: z.string() });

export type ClickEventDto = z.infer<typeof clickEventOutput>;
export type WorkspaceClickEventDto = z.infer<typeof workspaceClickEventOutput>;

export const linkAnalyticsOutput = z.object({ count: z.number().int(), clicks: z.array(clickEventOutput) });
export const workspaceAnalyticsOutput = z.object({ count: z.number().int(), clicks: z.array(workspaceClickEventOutput) });

export const dailyVisitorsOutput = z.object({
  days: z.array(z.object({ day: z.string().describe("UTC day, YYYY-MM-DD"), clicks: z.number().int(), visitors: z.number().int() })),
});
export const exportClicksOutput = z.object({ clicks: z.array(workspaceClickEventOutput.extend({ visitor: z.string().nullable() })) });
