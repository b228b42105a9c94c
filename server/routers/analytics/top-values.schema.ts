import { z } from "zod";
import { linkIdSchema } from "../links";
import { msQuery } from "./analytics.schema";
import { filterShape, orderedRange } from "./breakdown.schema";
import { DAY_VALUE_DIMS } from "../../core/click-pipeline/summary";

/** What the analytics page ranks, one card each. */
/** The attributes ranked: those the click storage keeps per-day counts of. */
export const TOP_DIMENSIONS = DAY_VALUE_DIMS;
export type TopDimension = (typeof TOP_DIMENSIONS)[number];
export const TOP_LIMIT_MAX = 100;

export const topValuesInput = z
  .object({
    from: msQuery.describe("Start of the range, ms since the Unix epoch, inclusive. Absent: from the first click.").optional(),
    to: msQuery.describe("End of the range, ms since the Unix epoch, inclusive. Absent: up to now.").optional(),
    link_id: linkIdSchema.describe("Only this link's clicks.").optional(),
    limit: z.number().int().min(1).max(TOP_LIMIT_MAX).default(10),
    ...filterShape,
  })
  .strict()
  .superRefine(orderedRange);
export type TopValuesInput = z.output<typeof topValuesInput>;

const count = z.number().int().min(0);
const row = z.object({
  key: z.string().nullable(),
  clicks: count,
  /** A link's slug (`link` rows). */
  slug: z.string().optional(),
  /** The country most of a city's clicks came from (`city` rows). */
  country: z.string().nullable().optional(),
});
export const topValuesOutput = z.object({
  clicks: count,
  top: z.object(Object.fromEntries(TOP_DIMENSIONS.map((d) => [d, z.array(row)])) as Record<TopDimension, z.ZodArray<typeof row>>),
});
export type TopValuesDto = z.infer<typeof topValuesOutput>;
