import { z } from "zod";
import { authedProcedure, optionalAuthProcedure, router, runtimeChecks, contract, type Meta } from "../../trpc/init";
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

/** A bulk action's REST face: a links:write POST on up to 100 links given by id (an id of no link of the workspace fails the whole call). */
const onChosen = (path: `/links/bulk/${string}`, summary: string, description: string): Meta => ({
  scope: "links:write",
  openapi: { method: "POST", path, tags: [TAG], summary, description, protect: true },
  errors: [404],
});
/** A bulk action on every link a filter matches: a links:write POST. */
const onMatching = (path: `/links/matching/${string}`, summary: string, description: string): Meta => ({
  scope: "links:write",
  openapi: { method: "POST", path, tags: [TAG], summary, description, protect: true },
});

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

  // The dashboard's list, its as-you-type helpers (no REST path: the page's own), and its bulk
  // actions, on chosen links or on every link a filter matches (REST paths too).

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
    .meta(
      onChosen(
        "/links/bulk/tags",
        "Add or remove tags on chosen links",
        "Adds the tags of `add` to, and removes those of `remove` from, up to 100 links given by id, in one transaction: all or none (a link that would pass 10 tags fails the call). `updated`: how many links changed. Each changed link is `link.updated` in the audit log and to webhooks.",
      ),
    )
    .input(bulkTagInput)
    .output(contract(bulkOutput))
    .mutation(({ ctx, input }) => bulkTag(ctx.app, ctx.actor, input)),
  bulkExpiry: authedProcedure
    .meta(
      onChosen(
        "/links/bulk/expiry",
        "Set or clear the expiry of chosen links",
        "Sets `expires_at` (ms, in the future) on up to 100 links given by id, or clears it with null (which also clears `expiration_url`), in one transaction. `updated`: how many links changed.",
      ),
    )
    .input(bulkExpiryInput)
    .output(contract(bulkOutput))
    .mutation(({ ctx, input }) => bulkExpiry(ctx.app, ctx.actor, input)),
  bulkDelete: authedProcedure
    .meta(
      onChosen(
        "/links/bulk/delete",
        "Delete chosen links",
        "Deletes up to 100 links given by id, as DELETE /links/{id} does each (slugs freed, click events kept), in one transaction. `updated`: how many links were deleted.",
      ),
    )
    .input(bulkIdsInput)
    .output(contract(bulkOutput))
    .mutation(({ ctx, input }) => bulkDelete(ctx.app, ctx.actor, input)),
  bulkArchive: authedProcedure
    .meta(
      onChosen(
        "/links/bulk/archive",
        "Archive or restore chosen links",
        "`archived: true` takes up to 100 links given by id out of service (their short URLs answer 404, they leave the default listing); `false` puts them back. One transaction. `updated`: how many links changed.",
      ),
    )
    .input(bulkArchiveInput)
    .output(contract(bulkOutput))
    .mutation(({ ctx, input }) => bulkArchive(ctx.app, ctx.actor, input)),
  bulkTagMatching: authedProcedure
    .meta(
      onMatching(
        "/links/matching/tags",
        "Add or remove a tag on every link a filter matches",
        "One tag to `add` or to `remove` on every live link matching `filters` (`q`, `tag`, `domain`, `status` as the dashboard's list reads them), at most 10,000. `expected` must be the number of links that match (as a listing just showed): when it differs, nothing changes and the answer is 400 naming `expected`. All or none.",
      ),
    )
    .input(bulkTagMatchingInput)
    .output(contract(bulkOutput))
    .mutation(({ ctx, input }) => bulkTagMatching(ctx.app, ctx.actor, input)),
  bulkExpiryMatching: authedProcedure
    .meta(
      onMatching(
        "/links/matching/expiry",
        "Set or clear the expiry of every link a filter matches",
        "Sets `expires_at` on, or clears it (null) from, every link matching `filters`, at most 10,000; `expected` must be the number that match, else 400 naming `expected` and nothing changes. All or none.",
      ),
    )
    .input(bulkExpiryMatchingInput)
    .output(contract(bulkOutput))
    .mutation(({ ctx, input }) => bulkExpiryMatching(ctx.app, ctx.actor, input)),
  bulkDeleteMatching: authedProcedure
    .meta(
      onMatching(
        "/links/matching/delete",
        "Delete every link a filter matches",
        "Deletes every link matching `filters`, at most 10,000; `expected` must be the number that match, else 400 naming `expected` and nothing changes. All or none.",
      ),
    )
    .input(bulkDeleteMatchingInput)
    .output(contract(bulkOutput))
    .mutation(({ ctx, input }) => bulkDeleteMatching(ctx.app, ctx.actor, input)),
  bulkArchiveMatching: authedProcedure
    .meta(
      onMatching(
        "/links/matching/archive",
        "Archive or restore every link a filter matches",
        "Archives (`archived: true`) or restores every link matching `filters`, at most 10,000; `expected` must be the number that match, else 400 naming `expected` and nothing changes. All or none.",
      ),
    )
    .input(bulkArchiveMatchingInput)
    .output(contract(bulkOutput))
    .mutation(({ ctx, input }) => bulkArchiveMatching(ctx.app, ctx.actor, input)),
});
