import { z } from "zod";
import { authedProcedure, optionalAuthProcedure, router, runtimeChecks, contract } from "../../trpc/init";
import { idempotent } from "../../trpc/idempotency";
import { createLinkInput, linkIdInput, linkOutput, updateLinkInput } from "./links.schema";
import { createLink, deleteLink, getLink, listLinks, updateLink } from "./links.service";
import { dashboardLinkProcedures } from "./dashboard";
import { listLinkProcedures } from "./list";
import { bulkMatchingProcedures } from "./bulk-matching";
import { bulkCreateProcedure } from "./bulk";
import { createLinkChecks, updateLinkChecks } from "./runtime-checks";

const TAG = "links";

export const linkRouter = router({
  ...dashboardLinkProcedures,
  ...listLinkProcedures,
  ...bulkMatchingProcedures,

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
    })
    .use(idempotent)
    .use(runtimeChecks(createLinkInput, createLinkChecks))
    .input(createLinkInput)
    .output(contract(linkOutput))
    .mutation(({ ctx, input }) => createLink(ctx, ctx.actor, input)),

  bulk: bulkCreateProcedure,

  list: authedProcedure
    .meta({
      scope: "links:read",
      openapi: {
        method: "GET",
        path: "/links",
        tags: [TAG],
        summary: "List links",
        description: "Links of the caller's workspace, newest first. Deleted and linktree-owned links are excluded.",
        protect: true,
      },
    })
    .input(z.object({}))
    .output(contract(z.object({ links: z.array(linkOutput) })))
    .query(async ({ ctx }) => ({ links: await listLinks(ctx.app, ctx.actor) })),

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
          "Omitted members keep their value; null (or [] for tags) clears; a value sets. Linktree-owned links answer 409 LINKTREE_LINK_NOT_EDITABLE.",
        protect: true,
      },
      errors: [409],
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
      successStatus: 204,
      errors: [409],
    })
    .input(linkIdInput)
    .output(contract(z.void()))
    .mutation(async ({ ctx, input }) => {
      await deleteLink(ctx.app, ctx.actor, input.id);
    }),
});
