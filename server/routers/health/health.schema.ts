import { z } from "zod";
import { linkIdSchema } from "../links";

export const HEALTH_STATUSES = ["ok", "broken", "unknown"] as const;
export type HealthStatus = (typeof HEALTH_STATUSES)[number];

export const healthLinkIdInput = z.object({ id: linkIdSchema }).strict();

export const destinationHealthOutput = z.object({
  url: z.string(),
  status: z.enum(["ok", "failed", "unknown"]).describe("`failed`: the last check failed; `unknown`: not checked (a private or local address)."),
  http_status: z.number().int().nullable().describe("Status of the final answer, after redirects; null when none came."),
});

export const healthOutput = z.object({
  status: z
    .enum(HEALTH_STATUSES)
    .describe("`broken` after two failed checks in a row of a destination; `ok` once every destination succeeds; `unknown` before that."),
  checked_at: z.number().int().nullable().describe("When the last check ended (ms); null when never checked."),
  http_status: z.number().int().nullable().describe("The failing destination's status, or the main URL's when all succeeded; null when none came."),
  error: z.string().nullable().describe("What failed (`HTTP 404`, `timeout`, `host not found`, …); null when nothing did."),
  destinations: z.array(destinationHealthOutput).describe("Each destination of the last check: `url`, every targeting URL and every variant, once each."),
});
export type HealthDto = z.output<typeof healthOutput>;

/** The dashboard's list: which of these links are broken. */
export const brokenAmongInput = z.object({ ids: z.array(linkIdSchema).max(1000) }).strict();
export const brokenAmongOutput = z.object({ broken: z.array(z.string()) });
