import { authedProcedure, router, contract } from "../../trpc/init";
import {
  dailyVisitorsOutput,
  exportClicksOutput,
  linkAnalyticsInput,
  linkAnalyticsOutput,
  workspaceAnalyticsInput,
  workspaceAnalyticsOutput,
} from "./analytics.schema";
import { dailyVisitors, exportClicks, linkAnalytics, workspaceAnalytics } from "./analytics.service";
import { dashboard } from "./overview";
import { dashboardInput, dashboardOutput } from "./overview.schema";

const TAG = "analytics";
const RANGE_DOC =
  "`from` and `to` are optional ms-epoch timestamps, both inclusive. Clicks are newest first, at most 500 per link; `count` is exact and not capped.";

export const analyticsRouter = router({
  link: authedProcedure
    .meta({
      scope: "analytics:read",
      openapi: {
        method: "GET",
        path: "/links/{id}/analytics",
        tags: [TAG],
        summary: "Clicks of a link",
        description: `Click events of one link of the caller's workspace, deleted links included. ${RANGE_DOC}`,
        protect: true,
      },
    })
    .input(linkAnalyticsInput)
    .output(contract(linkAnalyticsOutput))
    // Analytics reads may go to the read replica (DATABASE_READ_URL): the services read `app.db`.
    .query(({ ctx, input }) => ctx.read((db) => linkAnalytics({ ...ctx.app, db }, ctx.actor, input.id, { from: input.from, to: input.to }))),

  workspace: authedProcedure
    .meta({
      scope: "analytics:read",
      openapi: {
        method: "GET",
        path: "/analytics",
        tags: [TAG],
        summary: "Clicks of the workspace",
        description: `Click events of every short link of the workspace (deleted links included, linktree-owned links excluded), or of the one link named by \`link_id\`; each carries \`link_id\`. ${RANGE_DOC}`,
        protect: true,
      },
    })
    .input(workspaceAnalyticsInput)
    .output(contract(workspaceAnalyticsOutput))
    .query(({ ctx, input }) => ctx.read((db) => workspaceAnalytics({ ...ctx.app, db }, ctx.actor, input.link_id, { from: input.from, to: input.to }))),

  // Dashboard only (no REST path): unique visitors are not part of the public API's answers.
  daily: authedProcedure
    .meta({ scope: "analytics:read" })
    .input(workspaceAnalyticsInput)
    .output(contract(dailyVisitorsOutput))
    .query(async ({ ctx, input }) => ({ days: await dailyVisitors(ctx.app, ctx.actor, input.link_id, { from: input.from, to: input.to }) })),

  export: authedProcedure
    .meta({ scope: "analytics:read" })
    .input(workspaceAnalyticsInput)
    .output(contract(exportClicksOutput))
    .query(async ({ ctx, input }) => ({ clicks: await exportClicks(ctx.app, ctx.actor, input.link_id, { from: input.from, to: input.to }) })),

  // Dashboard only (no REST path): series in the viewer's time zone, comparison, cross-filtered breakdowns.
  dashboard: authedProcedure
    .meta({ scope: "analytics:read" })
    .input(dashboardInput)
    .output(contract(dashboardOutput))
    .query(({ ctx, input }) => dashboard(ctx.app, ctx.actor, input)),
});
