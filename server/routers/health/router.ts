import { authedProcedure, contract, router } from "../../trpc/init";
import { brokenAmongInput, brokenAmongOutput, healthLinkIdInput, healthOutput } from "./health.schema";
import { brokenAmong, checkLinkNow, getLinkHealth } from "./health.service";

const TAG = "health";
const ANSWER_DOC =
  "`status` is `broken` after two failed checks in a row of any destination (network error, timeout, more than 5 redirects, 404, 410 or 5xx; " +
  "401, 403 and 429 are not failures), `ok` once every destination succeeds, `unknown` until then; one failure leaves it as it was.";

// Destination health of a link: its last check, a check on request, and the dashboard's badges.
export const healthRouter = router({
  get: authedProcedure
    .meta({
      scope: "links:read",
      openapi: {
        method: "GET",
        path: "/links/{id}/health",
        tags: [TAG],
        summary: "Destination health of a link",
        description:
          "The last check of the link's destinations (`url`, every targeting URL and every variant). Live links are checked about once a day. " +
          `${ANSWER_DOC} Never checked: \`unknown\` with nulls and no destinations.`,
        protect: true,
      },
    })
    .input(healthLinkIdInput)
    .output(contract(healthOutput))
    .query(({ ctx, input }) => getLinkHealth(ctx.app, ctx.actor, input.id)),

  check: authedProcedure
    .meta({
      scope: "links:write",
      openapi: {
        method: "POST",
        path: "/links/{id}/health/check",
        tags: [TAG],
        summary: "Check a link's destinations now",
        description:
          `Checks every destination now (HEAD, then GET when HEAD is refused; up to 5 redirects; 10 s timeout each) and answers the result. ${ANSWER_DOC} ` +
          "At most 10 a minute per workspace, then 429 with Retry-After. A deleted link answers 404.",
        protect: true,
      },
      errors: [429],
    })
    .input(healthLinkIdInput)
    .output(contract(healthOutput))
    .mutation(({ ctx, input }) => checkLinkNow(ctx.app, ctx.actor, input.id)),

  // Dashboard only (no REST path): which links of a page of the list carry the "Broken" badge.
  brokenAmong: authedProcedure
    .meta({ scope: "links:read" })
    .input(brokenAmongInput)
    .output(contract(brokenAmongOutput))
    .query(async ({ ctx, input }) => ({ broken: await brokenAmong(ctx.app, ctx.actor, input.ids) })),
});
