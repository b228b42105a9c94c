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
import { linkBreakdown, workspaceBreakdown } from "./breakdown";
import { breakdownOutput, linkBreakdownInput, workspaceBreakdownInput } from "./breakdown.schema";
import { topValues } from "./top-values";
import { topValuesInput, topValuesOutput } from "./top-values.schema";

const TAG = "analytics";
const BREAKDOWN_DOC =
  "`by` picks what a row counts: `day` or `hour` (local buckets in `tz`, every bucket of the range with zeros; `key` is the bucket's start in ms) " +
  "or a click attribute (`link`, `country`, `region`, `city`, `device`, `os`, `browser`, `referrer_domain`, `rule`, `variant`, `trigger`; " +
  "rows by clicks, most first, keys ascending on ties, at most `limit`; `key` null for clicks without a value). `from`/`to` are inclusive " +
  "ms-epoch bounds (absent: from the first click, up to now). Filters: one value per attribute under its own name, as the rows give it " +
  "(`country=DE&device=mobile`), `(none)` for clicks without one. `visitors` counts distinct daily visitor keys per UTC day, summed over the days; " +
  "`total` covers every selected click, not only the rows shown.";
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

  breakdown: authedProcedure
    .meta({
      scope: "analytics:read",
      errors: [404], // link_id of no link of the workspace
      openapi: {
        method: "GET",
        path: "/analytics/breakdown",
        tags: [TAG],
        summary: "Clicks of the workspace grouped by one dimension",
        description: `Clicks and unique visitors of the workspace's short links (deleted links included, linktree-owned links excluded), or of the one link named by \`link_id\` (any link of the workspace: the answer of GET /links/{id}/analytics/breakdown), grouped by \`by\`. ${BREAKDOWN_DOC}`,
        protect: true,
      },
    })
    .input(workspaceBreakdownInput)
    .output(contract(breakdownOutput))
    .query(({ ctx, input }) => ctx.read((db) => workspaceBreakdown({ ...ctx.app, db }, ctx.actor, input))),

  linkBreakdown: authedProcedure
    .meta({
      scope: "analytics:read",
      openapi: {
        method: "GET",
        path: "/links/{id}/analytics/breakdown",
        tags: [TAG],
        summary: "Clicks of a link grouped by one dimension",
        description: `Clicks and unique visitors of one link of the caller's workspace (deleted links included), grouped by \`by\`. ${BREAKDOWN_DOC}`,
        protect: true,
      },
    })
    .input(linkBreakdownInput)
    .output(contract(breakdownOutput))
    .query(({ ctx, input }) => ctx.read((db) => linkBreakdown({ ...ctx.app, db }, ctx.actor, input))),

  // Dashboard only (no REST path): unique visitors are not part of the public API's answers.
  daily: authedProcedure
    .meta({ scope: "analytics:read" })
    .input(workspaceAnalyticsInput)
    .output(contract(dailyVisitorsOutput))
    .query(async ({ ctx, input }) => ({ days: await dailyVisitors(ctx.app, ctx.actor, input.link_id, { from: input.from, to: input.to }) })),

  // Dashboard only: the analytics page's cards (clicks of each attribute's top values), in one call.
  top: authedProcedure
    .meta({ scope: "analytics:read", errors: [404] })
    .input(topValuesInput)
    .output(contract(topValuesOutput))
    .query(({ ctx, input }) => ctx.read((db) => topValues({ ...ctx.app, db }, ctx.actor, input))),

  export: authedProcedure
    .meta({ scope: "analytics:read" })
    .input(workspaceAnalyticsInput)
    .output(contract(exportClicksOutput))
    .query(async ({ ctx, input }) => ({ clicks: await exportClicks(ctx.app, ctx.actor, input.link_id, { from: input.from, to: input.to }) })),
});
