import { z } from "zod";
import { and, asc, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../../../db/client";
import { links } from "../../../db/schema";
import { AppError, validation } from "../../domain/errors";
import type { AppServices } from "../../core/services";
import type { Actor } from "../../trpc/context";
import { expiresAtSchema, MAX_TAGS, strictNumber, TAG_RE } from "./links.schema";
import { expirySet } from "./links.service";
import { updateLinks } from "./link-store";
import { filterConditions } from "./list";
import { bulkWrite, expiryChanges } from "./bulk-write";
import { listInput } from "./list.schema";
import { text } from "../../lib/input";

/**
 * "Select all N matching" on the links list: the bulk actions of list.ts, for every link the
 * list's filters match rather than for ids. One transaction locks the matching links (in id
 * order, as the id-based actions do, so the two cannot deadlock), checks that they are exactly
 * as many as the person confirmed, and writes them with set-based statements.
 */

/** Links one filter-based action may touch; narrower filters, or several actions, for more. */
export const MAX_MATCHING = 10_000;
/** The list's own filters (sort and page do not change which links match). */
export const matchingFilters = listInput.pick({ q: true, tag: true, domain: true, status: true }).strict();
export type MatchingFilters = z.output<typeof matchingFilters>;

const expected = strictNumber(
  z
    .number()
    .int()
    .min(1, "select at least one link")
    .max(MAX_MATCHING, `at most ${MAX_MATCHING.toLocaleString("en-US")} links at once; narrow the filters`),
);

const tagSchema = text().regex(TAG_RE, "must be 1-24 characters of 0-9, a-z and -");

export const bulkTagMatchingInput = z
  .object({ filters: matchingFilters, expected, add: tagSchema.optional(), remove: tagSchema.optional() })
  .strict()
  .superRefine((v, ctx) => {
    if ((v.add === undefined) === (v.remove === undefined)) ctx.addIssue({ code: "custom", path: ["add"], message: "give one tag to add or to remove" });
  });
export const bulkExpiryMatchingInput = z.object({ filters: matchingFilters, expected, expires_at: expiresAtSchema.nullable() }).strict();
export const bulkDeleteMatchingInput = z.object({ filters: matchingFilters, expected }).strict();
export const bulkArchiveMatchingInput = z.object({ filters: matchingFilters, expected, archived: strictNumber(z.boolean()) }).strict();

/**
 * Locks the workspace's links the filters match, in id order. The count must be the one the
 * person saw and confirmed: links created or changed meanwhile would otherwise be swept up unseen.
 */
async function lockMatching(tx: DbOrTx, app: Pick<AppServices, "config">, actor: Actor, filters: MatchingFilters, expectedCount: number, now: number) {
  const where = await filterConditions(tx as Db, app, actor.workspaceId, { ...filters, sort: "newest", page: 1 }, now);
  const rows = where
    ? await tx
        .select()
        .from(links)
        .where(and(...where))
        .orderBy(asc(links.id))
        .limit(MAX_MATCHING + 1)
        .for("update")
    : [];
  if (rows.length !== expectedCount) {
    throw validation({
      expected:
        rows.length > MAX_MATCHING
          ? [`more than ${MAX_MATCHING.toLocaleString("en-US")} links match; narrow the filters`]
          : [`${rows.length} ${rows.length === 1 ? "link matches" : "links match"} these filters now, not ${expectedCount}; review again`],
    });
  }
  return rows;
}

/** Adds or removes one tag on every matching link, all or none: a link that would pass `MAX_TAGS` fails the whole action. */
export async function bulkTagMatching(
  app: Pick<AppServices, "config" | "db" | "invalidateSlugs">,
  actor: Actor,
  input: z.output<typeof bulkTagMatchingInput>,
  now = Date.now(),
) {
  return bulkWrite(app, { actor, action: "link.updated", changes: ["tags"] }, async (lt) => {
    const rows = await lockMatching(lt.db, app, actor, input.filters, input.expected, now);
    const tag = (input.add ?? input.remove)!;
    const changed = rows.filter((r) => (r.tags ?? []).includes(tag) === (input.remove !== undefined));
    if (input.add !== undefined) {
      const over = changed.filter((r) => (r.tags ?? []).length >= MAX_TAGS);
      if (over.length) {
        const some = over.slice(0, 10).map((r) => r.slug);
        throw validation({ add: [`at most ${MAX_TAGS} tags per link; ${over.length} would have more (${some.join(", ")}${over.length > 10 ? ", …" : ""})`] });
      }
    }
    // Tags are stored sorted and without duplicates; removing one keeps that order.
    const tags =
      input.add !== undefined
        ? sql`(select array_agg(t order by t) from unnest(array_append(${links.tags}, ${tag}::text)) t)`
        : sql`array_remove(${links.tags}, ${tag}::text)`;
    await updateLinks(lt, changed, { tags: tags as unknown as string[] }, now);
    return changed;
  });
}

/** Sets (or clears) the expiry of every matching link; clearing it clears its fallback URL too, as a single edit does. */
export async function bulkExpiryMatching(
  app: Pick<AppServices, "config" | "db" | "invalidateSlugs">,
  actor: Actor,
  input: z.output<typeof bulkExpiryMatchingInput>,
  now = Date.now(),
) {
  return bulkWrite(app, { actor, action: "link.updated", changes: expiryChanges(input.expires_at) }, async (lt) => {
    const rows = await lockMatching(lt.db, app, actor, input.filters, input.expected, now);
    await updateLinks(lt, rows, expirySet(input.expires_at), now);
    return rows;
  });
}

/** Soft-deletes every matching link, as DELETE /links/{id} does one: the record stays, the slug is freed. */
export async function bulkDeleteMatching(
  app: Pick<AppServices, "config" | "db" | "invalidateSlugs">,
  actor: Actor,
  input: z.output<typeof bulkDeleteMatchingInput>,
  now = Date.now(),
) {
  return bulkWrite(app, { actor, action: "link.deleted", changes: [] }, async (lt) => {
    const rows = await lockMatching(lt.db, app, actor, input.filters, input.expected, now);
    // The filters select only the workspace's own live links of kind `link`; a linktree's never matches.
    if (rows.some((r) => r.kind !== "link")) throw new AppError("LINKTREE_LINK_NOT_EDITABLE");
    await updateLinks(lt, rows, { deletedAt: now }, now);
    return rows;
  });
}

/**
 * Archives (or puts back) every matching link. Only links whose state changes are written and
 * counted; one already archived keeps its first archive time.
 */
export async function bulkArchiveMatching(
  app: Pick<AppServices, "config" | "db" | "invalidateSlugs">,
  actor: Actor,
  input: z.output<typeof bulkArchiveMatchingInput>,
  now = Date.now(),
) {
  return bulkWrite(app, { actor, action: "link.updated", changes: ["archived"] }, async (lt) => {
    const rows = await lockMatching(lt.db, app, actor, input.filters, input.expected, now);
    const changed = rows.filter((r) => (r.archivedAt !== null) !== input.archived);
    await updateLinks(lt, changed, { archivedAt: input.archived ? now : null }, now);
    return changed;
  });
}

// Dashboard-only (no openapi meta), as the id-based bulk actions.
