import { z } from "zod";
import { authedProcedure, publicProcedure, router, runtimeChecks, type Meta, contract } from "../../trpc/init";
import { noLoopChecks } from "../links";
import {
  analyticsInput,
  analyticsOutput,
  createItemInput,
  createLinktreeInput,
  itemIdInput,
  itemOutput,
  linktreeDetailOutput,
  linktreeIdInput,
  linktreeOutput,
  publicPageInput,
  publicPageOutput,
  reorderItemsInput,
  updateItemInput,
  updateLinktreeInput,
} from "./linktrees.schema";
import {
  createItem,
  createLinktree,
  deleteItem,
  deleteLinktree,
  getLinktree,
  linktreeAnalytics,
  listLinktrees,
  publicPage,
  reorderItems,
  updateItem,
  updateLinktree,
} from "./linktrees.service";
import { linktreeChecks } from "./runtime-checks";
import { BUTTON_STYLES, MIN_CONTRAST, SOCIAL_LABELS, SOCIAL_PLATFORMS, THEME_PALETTES } from "./look";

const TAG = "linktrees";
const api = (method: "GET" | "POST" | "PATCH" | "DELETE", path: `/${string}`, summary: string, description: string): Meta => ({
  openapi: { method, path, tags: [TAG], summary, description, protect: true },
});

export const linktreeRouter = router({
  list: authedProcedure
    .meta({ scope: "linktrees:read" })
    .meta(api("GET", "/linktrees", "List linktrees", "Linktrees of the caller's workspace, newest first."))
    .input(z.object({}))
    .output(contract(z.object({ linktrees: z.array(linktreeOutput) })))
    .query(async ({ ctx }) => ({ linktrees: await listLinktrees(ctx.app, ctx.actor) })),

  create: authedProcedure
    .meta({
      scope: "linktrees:write",
      ...api(
        "POST",
        "/linktrees",
        "Create a linktree",
        "Reserves the slug in the namespace shared with links and creates the page's own link record. The new linktree is unpublished. A taken slug answers 409 SLUG_ALREADY_IN_USE.",
      ),
      successStatus: 201,
      errors: [409],
    })
    .use(runtimeChecks(createLinktreeInput, linktreeChecks))
    .input(createLinktreeInput)
    .output(contract(linktreeOutput))
    .mutation(({ ctx, input }) => createLinktree(ctx.app, ctx.actor, input)),

  get: authedProcedure
    .meta({ scope: "linktrees:read" })
    .meta(api("GET", "/linktrees/{id}", "Get a linktree", "The linktree with its items ordered by position, inactive items included."))
    .input(linktreeIdInput)
    .output(contract(linktreeDetailOutput))
    .query(({ ctx, input }) => getLinktree(ctx.app, ctx.actor, input.id)),

  update: authedProcedure
    .meta({
      scope: "linktrees:write",
      ...api(
        "PATCH",
        "/linktrees/{id}",
        "Update a linktree",
        "At least one member. Renaming the slug moves the reservation (409 SLUG_ALREADY_IN_USE when taken); `published` switches the public page on and off.",
      ),
      errors: [409],
      auditBefore: (app, actor, input) => getLinktree(app, actor, String(input.id)),
    })
    .use(runtimeChecks(updateLinktreeInput, linktreeChecks))
    .input(updateLinktreeInput)
    .output(contract(linktreeOutput))
    .mutation(({ ctx, input }) => updateLinktree(ctx.app, ctx.actor, input)),

  delete: authedProcedure
    .meta({
      scope: "linktrees:write",
      ...api(
        "DELETE",
        "/linktrees/{id}",
        "Delete a linktree",
        "Removes the linktree, its items and the link records of the page and its items (their slugs are freed). Click events are kept.",
      ),
      successStatus: 204,
    })
    .input(linktreeIdInput)
    .output(contract(z.void()))
    .mutation(async ({ ctx, input }) => {
      await deleteLinktree(ctx.app, ctx.actor, input.id);
    }),

  createItem: authedProcedure
    .meta({
      scope: "linktrees:write",
      ...api(
        "POST",
        "/linktrees/{id}/items",
        "Add an item",
        "Creates a short link for the destination and an item pointing at it. `position` inserts there (clamped to the list) and shifts the rest; it defaults to the end.",
      ),
      successStatus: 201,
    })
    .use(runtimeChecks(createItemInput, noLoopChecks))
    .input(createItemInput)
    .output(contract(itemOutput))
    .mutation(({ ctx, input }) => createItem(ctx.app, ctx.actor, input)),

  updateItem: authedProcedure
    .meta({
      scope: "linktrees:write",
      auditBefore: async (app, actor, input) => (await getLinktree(app, actor, String(input.id))).items.find((i) => i.id === input.itemId),
    })
    .meta(
      api(
        "PATCH",
        "/linktrees/{id}/items/{itemId}",
        "Update an item",
        "Any of title, url, position (moves the item; positions stay 0..n-1) and active (inactive items are hidden from the public page). 404 when the linktree or the item is not found.",
      ),
    )
    .use(runtimeChecks(updateItemInput, noLoopChecks))
    .input(updateItemInput)
    .output(contract(itemOutput))
    .mutation(({ ctx, input }) => updateItem(ctx.app, ctx.actor, input)),

  deleteItem: authedProcedure
    .meta({
      scope: "linktrees:write",
      ...api(
        "DELETE",
        "/linktrees/{id}/items/{itemId}",
        "Delete an item",
        "Removes the item and its short link (the slug is freed); the positions after it close the gap. Click events are kept.",
      ),
      successStatus: 204,
    })
    .input(itemIdInput)
    .output(contract(z.void()))
    .mutation(async ({ ctx, input }) => {
      await deleteItem(ctx.app, ctx.actor, input.id, input.itemId);
    }),

  analytics: authedProcedure
    .meta({ scope: "analytics:read" })
    .meta(
      api(
        "GET",
        "/linktrees/{id}/analytics",
        "Linktree analytics",
        "Page views, item clicks and per-item counts (inactive items included) in the range `from`..`to` (ms epoch, inclusive; all time when absent).",
      ),
    )
    .input(analyticsInput)
    .output(contract(analyticsOutput))
    .query(({ ctx, input }) => linktreeAnalytics(ctx.app, ctx.actor, input)),

  /** Dashboard: drag-and-drop order. Not part of the REST API. */
  reorderItems: authedProcedure
    .meta({ scope: "linktrees:write" })
    .input(reorderItemsInput)
    .output(contract(z.array(itemOutput)))
    .mutation(({ ctx, input }) => reorderItems(ctx.app, ctx.actor, input.id, input.itemIds)),

  /** The public page's data (published only, else 404), for the Remix route on the redirect host. */
  publicPage: publicProcedure
    .input(publicPageInput)
    .output(contract(publicPageOutput))
    .query(({ ctx, input }) => publicPage(ctx.app, input.link_id)),

  /** Dashboard: the themes' colours, the button styles and the social platforms, for the editor's pickers and preview. */
  looks: authedProcedure
    .meta({ scope: "linktrees:read" })
    .input(z.object({}).optional())
    .output(
      contract(
        z.object({
          themes: z.record(z.object({ background: z.string(), text: z.string(), button: z.string(), button_text: z.string() })),
          button_styles: z.array(z.string()),
          platforms: z.array(z.object({ platform: z.string(), label: z.string() })),
          min_contrast: z.number(),
        }),
      ),
    )
    .query(() => ({
      themes: THEME_PALETTES,
      button_styles: [...BUTTON_STYLES],
      platforms: SOCIAL_PLATFORMS.map((platform) => ({ platform, label: SOCIAL_LABELS[platform] })),
      min_contrast: MIN_CONTRAST,
    })),
});
