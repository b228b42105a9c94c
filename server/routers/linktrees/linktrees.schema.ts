import { z } from "zod";
import { atLeastOne, body, text } from "../../lib/input";
import { httpUrl } from "../../lib/urls";
import { slugSchema, strictNumber } from "../links";
import { msQuery } from "../analytics";

export const TITLE_MAX = 100;
export const BIO_MAX = 300;
export const ITEM_TITLE_MAX = 100;

const title = text().min(1, `must be 1-${TITLE_MAX} characters`).max(TITLE_MAX, `must be 1-${TITLE_MAX} characters`);
const bio = text().max(BIO_MAX, `at most ${BIO_MAX} characters`);
const itemTitle = text().min(1, `must be 1-${ITEM_TITLE_MAX} characters`).max(ITEM_TITLE_MAX, `must be 1-${ITEM_TITLE_MAX} characters`);
// Any integer: out-of-range positions are clamped to the list, never refused.
const position = strictNumber(z.number().int("must be an integer").min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER));
const active = strictNumber(z.boolean());
const published = strictNumber(z.boolean());

/** Linktree and item ids are opaque: any text is accepted and an unknown one is 404. */
const anyId = text();

// Shapes in the documented field order, which decides the first failing field (lib/input `body`).
export const createLinktreeInput = body({
  slug: slugSchema,
  title,
  bio: bio.nullable().optional(),
  avatar_url: httpUrl.nullable().optional(),
});
export type CreateLinktreeInput = z.output<typeof createLinktreeInput>;

export const updateLinktreeInput = body(
  {
    id: anyId,
    slug: slugSchema.optional(),
    title: title.optional(),
    bio: bio.nullable().optional(),
    avatar_url: httpUrl.nullable().optional(),
    published: published.optional(),
  },
  atLeastOne("id"),
);
export type UpdateLinktreeInput = z.output<typeof updateLinktreeInput>;

export const linktreeIdInput = z.object({ id: anyId });

export const createItemInput = body({
  id: anyId,
  title: itemTitle,
  url: httpUrl,
  position: position.optional(),
});
export type CreateItemInput = z.output<typeof createItemInput>;

export const updateItemInput = body(
  {
    id: anyId,
    itemId: anyId,
    title: itemTitle.optional(),
    url: httpUrl.optional(),
    position: position.optional(),
    active: active.optional(),
  },
  atLeastOne("id", "itemId"),
);
export type UpdateItemInput = z.output<typeof updateItemInput>;

export const itemIdInput = z.object({ id: anyId, itemId: anyId });

export const reorderItemsInput = z
  .object({
    id: anyId,
    itemIds: z.array(text()).max(10_000),
  })
  .strict();

// Query bounds: the same rule as the other analytics endpoints; unrelated query parameters are ignored.
export const analyticsInput = z.object({ id: anyId, from: msQuery.optional(), to: msQuery.optional() });
export type AnalyticsInput = z.output<typeof analyticsInput>;

export const publicPageInput = z.object({ slug: text().max(200) });

export const linktreeOutput = z.object({
  id: z.string(),
  slug: z.string(),
  title: z.string(),
  bio: z.string().nullable(),
  avatar_url: z.string().url().nullable(),
  published: z.boolean(),
  created_at: z.number().int(),
  updated_at: z.number().int(),
});
export type LinktreeDto = z.infer<typeof linktreeOutput>;

export const itemOutput = z.object({
  id: z.string(),
  title: z.string(),
  url: z.string().url(),
  short_url: z.string().url(),
  position: z.number().int(),
  active: z.boolean(),
  created_at: z.number().int(),
  updated_at: z.number().int(),
});
export type ItemDto = z.infer<typeof itemOutput>;

export const linktreeDetailOutput = linktreeOutput.extend({ items: z.array(itemOutput) });
export type LinktreeDetailDto = z.infer<typeof linktreeDetailOutput>;

export const analyticsOutput = z.object({
  id: z.string(),
  slug: z.string(),
  title: z.string(),
  published: z.boolean(),
  views: z.number().int(),
  clicks: z.number().int(),
  items: z.array(
    z.object({
      id: z.string(),
      title: z.string(),
      short_url: z.string().url().nullable(),
      active: z.boolean(),
      count: z.number().int(),
    }),
  ),
});
export type LinktreeAnalyticsDto = z.infer<typeof analyticsOutput>;

/** What the public page shows: published data only, active items in order. */
export const publicPageOutput = z.object({
  slug: z.string(),
  title: z.string(),
  bio: z.string().nullable(),
  avatar_url: z.string().nullable(),
  url: z.string(),
  items: z.array(z.object({ id: z.string(), title: z.string(), short_url: z.string() })),
});
export type PublicPageDto = z.infer<typeof publicPageOutput>;
