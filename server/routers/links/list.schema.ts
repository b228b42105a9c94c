import { z } from "zod";
import { plainText, text } from "../../lib/input";
import { expiresAtSchema, linkIdSchema, linkOutput, MAX_TAGS, SLUG_RE, strictNumber, TAG_RE } from "./links.schema";

// The dashboard's links list: no openapi meta, so REST `GET /links` keeps its shape.

export const LIST_PAGE_SIZE = 50;
/** Days of the sparkline, oldest first, the last one being today (UTC). */
export const SPARK_DAYS = 14;
/** Links one bulk action may touch: a page and then some. */
export const MAX_BULK = 100;

export const LIST_SORTS = ["newest", "clicks"] as const;
export const LIST_STATUSES = ["active", "expired", "password", "targeting", "share_card", "archived"] as const;
export type ListSort = (typeof LIST_SORTS)[number];
export type ListStatus = (typeof LIST_STATUSES)[number];

const tagSchema = text().regex(TAG_RE, "must be 1-24 characters of 0-9, a-z and -");

export const listInput = z
  .object({
    sort: z.enum(LIST_SORTS).default("newest"),
    /** Part of a slug, destination URL, title or share-card title. */
    q: text().max(200).optional(),
    /** A tag no link has yet is no error: the page is empty. */
    tag: tagSchema.optional(),
    /** A branded domain's name, or the default redirect domain's. */
    domain: text().max(253).optional(),
    status: z.enum(LIST_STATUSES).optional(),
    page: strictNumber(z.number().int().min(1).max(100_000)).default(1),
  })
  .strict();
export type ListInput = z.output<typeof listInput>;

export const linkClicks = z.object({
  total: z.number().int(),
  last_7_days: z.number().int(),
  /** Clicks per UTC day, `SPARK_DAYS` of them, oldest first; the last is today. */
  daily: z.array(z.number().int()),
});

export const listedLink = linkOutput.extend({ clicks: linkClicks });
export type ListedLink = z.output<typeof listedLink>;

export const listOutput = z.object({
  links: z.array(listedLink),
  page: z.number().int(),
  per_page: z.number().int(),
  /** Links matching the filters, over all pages. */
  total: z.number().int(),
  pages: z.number().int(),
  /** For the filter controls: every tag of the workspace, and every domain its links can be on. */
  tags: z.array(z.string()),
  domains: z.array(z.string()),
});
export type ListOutput = z.output<typeof listOutput>;

const ids = z
  .array(linkIdSchema)
  .min(1, "select at least one link")
  .max(MAX_BULK, `at most ${MAX_BULK} links at once`)
  .transform((a) => [...new Set(a)]);

export const bulkTagInput = z
  .object({
    ids,
    add: z.array(tagSchema).max(MAX_TAGS).default([]),
    remove: z.array(tagSchema).max(MAX_TAGS).default([]),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (!v.add.length && !v.remove.length) ctx.addIssue({ code: "custom", path: ["add"], message: "give a tag to add or remove" });
  });

// The REST list (`GET /links`): optional paging, sort and filters. Query values arrive as strings.

export const API_LIST_MAX = 1000;
export const API_SORTS = ["created", "clicks"] as const;
export const API_STATUSES = ["live", "expired", "archived"] as const;
export type ApiSort = (typeof API_SORTS)[number];

/** Always VALIDATION_FAILED, also for members (such as `slug`) whose name carries another code in bodies. */
const plainIssue = { code: "VALIDATION_FAILED" };
const limitQuery = text()
  .regex(/^\d{1,4}$/, `must be an integer from 1 to ${API_LIST_MAX}`)
  .transform(Number)
  .refine((n) => n >= 1 && n <= API_LIST_MAX, `must be an integer from 1 to ${API_LIST_MAX}`);

export const apiListInput = z
  .object({
    limit: limitQuery
      .describe(`1-${API_LIST_MAX}: answer one page of at most this many links, with \`next_cursor\`. Without it: every matching link.`)
      .optional(),
    cursor: text().max(2000).describe("The `next_cursor` of the previous page, with the same filters and sort (and `limit`).").optional(),
    sort: z.enum(API_SORTS).describe("`created` (default): newest first. `clicks`: most clicks of all time first, ties newest first.").optional(),
    q: text().max(200).describe("Case-insensitive part of the slug, destination URL, title or share-card title; `%` and `_` are literal.").optional(),
    tag: tagSchema.describe("Only links carrying this tag.").optional(),
    domain: text().max(253).describe("A verified domain's name, or `default` for the default redirect domain.").optional(),
    slug: plainText()
      .superRefine((s, ctx) => {
        if (!SLUG_RE.test(s)) ctx.addIssue({ code: "custom", message: "must be 1-50 characters of 0-9, a-z and -", params: plainIssue });
      })
      .describe("Exact slug (1-50 characters of `0-9`, `a-z` and `-`), on `domain` (the default redirect domain when absent): at most one link.")
      .optional(),
    status: z
      .enum(API_STATUSES)
      .describe("`live` (default): not deleted, not archived. `expired`: live and past `expires_at`. `archived`: archived links.")
      .optional(),
    health: z
      .enum(["ok", "broken", "unknown"])
      .describe("Destination health of the last check: `broken`, `ok`, or `unknown` (never checked, or not decided yet).")
      .optional(),
  })
  .strict();
export type ApiListInput = z.output<typeof apiListInput>;

export const apiListOutput = z.object({
  links: z.array(linkOutput),
  /** Only with `limit`: the cursor of the next page, null on the last one. */
  next_cursor: z.string().nullable().optional().describe("Only with `limit`: pass it as `cursor` for the next page; null on the last page."),
});
export type ApiListDto = z.output<typeof apiListOutput>;

export const bulkExpiryInput = z.object({ ids, expires_at: expiresAtSchema.nullable() }).strict();
export const bulkIdsInput = z.object({ ids }).strict();
/** `archived: true` takes the links out of service, `false` puts them back. */
export const bulkArchiveInput = z.object({ ids, archived: strictNumber(z.boolean()) }).strict();
export const bulkOutput = z.object({ updated: z.number().int() });
