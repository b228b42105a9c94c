import { z } from "zod";
import { authedProcedure, optionalAuthProcedure, router, runtimeChecks, contract } from "../../trpc/init";
import { createLinkInput, linkIdInput, linkOutput, updateLinkInput } from "./links.schema";
import { createLink, deleteLink, getLink, updateLink } from "./links.service";
import { createLinkChecks, updateLinkChecks } from "./runtime-checks";
import { isSlugAvailable, slugAvailableInput, slugAvailableOutput, suggestInput, suggestLinks, suggestOutput } from "./as-you-type";
import { bulkArchive, bulkExpiry, bulkDelete, bulkTag, listDashboardLinks } from "./list";
import { apiListInput, apiListOutput, bulkArchiveInput, bulkExpiryInput, bulkIdsInput, bulkOutput, bulkTagInput, listInput, listOutput } from "./list.schema";
import { listApiLinks } from "./list-api";
import {
  bulkArchiveMatching,
  bulkArchiveMatchingInput,
  bulkDeleteMatching,
  bulkDeleteMatchingInput,
  bulkExpiryMatching,
  bulkExpiryMatchingInput,
  bulkTagMatching,
  bulkTagMatchingInput,
} from "./bulk-matching";
import { bulkCreateInput, bulkCreateLinks, bulkCreateOutput } from "./bulk";

const TAG = "links";

// Every procedure of links, REST and dashboard-only alike; each body calls one service function.
export const linkRouter = router({
  create: optionalAuthProcedure
    .meta({
      scope: "links:write",
      openapi: {
        method: "POST",
        path: "/links",
        tags: [TAG],
        summary: "Create a short link",
        description: "Creates a short link. Without authentication the link belongs to the `public` workspace (30 an hour per address).",
        protect: false,
      },
      successStatus: 201,
      errors: [401, 409, 429],
      idempotent: true,
      auditsInItsStatement: true,
    })
    .use(runtimeChecks(createLinkInput, createLinkChecks))
    .input(createLinkInput)
    .output(contract(linkOutput))
    .mutation(({ ctx, input }) => createLink(ctx.app, ctx.actor, input, ctx.req, ctx.auditHandoff)),

  bulk: authedProcedure
    .meta({
      scope: "links:write",
      openapi: {
        method: "POST",
        path: "/links/bulk",
        tags: [TAG],
        summary: "Create up to 100 links",
        description:
          "Each item is a POST /links body, validated and created on its own: a bad item stops no other. " +
          "`created` lists the new links in input order; `errors` gives each failed item's 0-based `index` with the code " +
          "(and `fields`) POST /links would have answered. 0 or more than 100 items: 400. Counts as one request for the rate limit.",
        protect: true,
      },
      idempotent: true,
    })
    .input(bulkCreateInput)
    .output(contract(bulkCreateOutput))
    .mutation(({ ctx, input }) => bulkCreateLinks(ctx.app, ctx.actor, input, ctx.req)),

  list: authedProcedure
    .meta({
      scope: "links:read",
      openapi: {
        method: "GET",
        path: "/links",
        tags: [TAG],
        summary: "List links",
        description:
          "Links of the caller's workspace, newest first. Deleted and linktree-owned links are excluded. " +
          "Every parameter is optional: without `limit` the answer is every matching link as `{links}`; with `limit` it is one page " +
          "and `next_cursor` (null on the last page), to send back as `cursor` with the same filters and sort. " +
          "Pages neither repeat nor skip a link while links are created or deleted. " +
          "An unknown, repeated or bracketed parameter, or a bad value, answers 400 naming it.",
        protect: true,
      },
    })
    .input(apiListInput)
    .output(contract(apiListOutput))
    .query(({ ctx, input }) => listApiLinks(ctx.app, ctx.actor, input)),

  get: authedProcedure
    .meta({
      scope: "links:read",
      openapi: {
        method: "GET",
        path: "/links/{id}",
        tags: [TAG],
        summary: "Get a link",
        description: "One link of the caller's workspace, deleted ones included.",
        protect: true,
      },
    })
    .input(linkIdInput)
    .output(contract(linkOutput))
    .query(({ ctx, input }) => getLink(ctx.app, ctx.actor, input.id)),

  update: authedProcedure
    .meta({
      scope: "links:write",
      openapi: {
        method: "PATCH",
        path: "/links/{id}",
        tags: [TAG],
        summary: "Update a link",
        description:
          "Omitted members keep their value; null (or [] for tags) clears; a value sets. Linktree-owned links answer 409 LINKTREE_LINK_NOT_EDITABLE. " +
          "`archived: true` takes the link out of service (visits answer as for an unknown slug, the slug stays taken); `archived: false` puts it back. " +
          "With variants stored, a new `url` must be one of them.",
        protect: true,
      },
      errors: [409],
      auditBefore: (app, actor, input) => getLink(app, actor, String(input.id)),
    })
    .use(runtimeChecks(updateLinkInput, updateLinkChecks))
    .input(updateLinkInput)
    .output(contract(linkOutput))
    .mutation(({ ctx, input }) => updateLink(ctx.app, ctx.actor, input)),

  delete: authedProcedure
    .meta({
      scope: "links:write",
      openapi: {
        method: "DELETE",
        path: "/links/{id}",
        tags: [TAG],
        summary: "Delete a link",
        description: "Soft delete: frees the slug, keeps the record and its click events. Answers 204 again when already deleted.",
        protect: true,
      },
      auditBefore: (app, actor, input) => getLink(app, actor, String(input.id)),
      successStatus: 204,
      errors: [409],
    })
    .input(linkIdInput)
    .output(contract(z.void()))
    .mutation(async ({ ctx, input }) => {
      await deleteLink(ctx.app, ctx.actor, input.id);
    }),

  // Dashboard-only (no openapi meta): the typed client and Remix loaders use them.

  /** The analytics page's link picker asks this as the person types. */
  suggest: authedProcedure
    .meta({ scope: "links:read" })
    .input(suggestInput)
    .output(contract(suggestOutput))
    .query(({ ctx, input }) => suggestLinks(ctx.app, ctx.actor, input)),

  /** Feedback while typing a custom slug; the unique index still decides on write. */
  slugAvailable: authedProcedure
    .meta({ scope: "links:read" })
    .input(slugAvailableInput)
    .output(contract(slugAvailableOutput))
    .query(async ({ ctx, input }) => ({
      slug: input.slug,
      available: await isSlugAvailable(ctx.app, input.slug, input.domain ? { workspaceId: ctx.actor.workspaceId, name: input.domain } : undefined),
    })),

  dashboardList: authedProcedure
    .meta({ scope: "links:read" })
    .input(listInput)
    .output(contract(listOutput))
    .query(({ ctx, input }) => listDashboardLinks(ctx.app, ctx.actor, input)),
  bulkTag: authedProcedure
    .meta({ scope: "links:write" })
    .input(bulkTagInput)
    .output(contract(bulkOutput))
    .mutation(({ ctx, input }) => bulkTag(ctx.app, ctx.actor, input)),
  bulkExpiry: authedProcedure
    .meta({ scope: "links:write" })
    .input(bulkExpiryInput)
    .output(contract(bulkOutput))
    .mutation(({ ctx, input }) => bulkExpiry(ctx.app, ctx.actor, input)),
  bulkDelete: authedProcedure
    .meta({ scope: "links:write" })
    .input(bulkIdsInput)
    .output(contract(bulkOutput))
    .mutation(({ ctx, input }) => bulkDelete(ctx.app, ctx.actor, input)),
  bulkArchive: authedProcedure
    .meta({ scope: "links:write" })
    .input(bulkArchiveInput)
    .output(contract(bulkOutput))
    .mutation(({ ctx, input }) => bulkArchive(ctx.app, ctx.actor, input)),
  bulkTagMatching: authedProcedure
    .meta({ scope: "links:write" })
    .input(bulkTagMatchingInput)
    .output(contract(bulkOutput))
    .mutation(({ ctx, input }) => bulkTagMatching(ctx.app, ctx.actor, input)),
  bulkExpiryMatching: authedProcedure
    .meta({ scope: "links:write" })
    .input(bulkExpiryMatchingInput)
    .output(contract(bulkOutput))
    .mutation(({ ctx, input }) => bulkExpiryMatching(ctx.app, ctx.actor, input)),
  bulkDeleteMatching: authedProcedure
    .meta({ scope: "links:write" })
    .input(bulkDeleteMatchingInput)
    .output(contract(bulkOutput))
    .mutation(({ ctx, input }) => bulkDeleteMatching(ctx.app, ctx.actor, input)),
  bulkArchiveMatching: authedProcedure
    .meta({ scope: "links:write" })
    .input(bulkArchiveMatchingInput)
    .output(contract(bulkOutput))
    .mutation(({ ctx, input }) => bulkArchiveMatching(ctx.app, ctx.actor, input)),
});
