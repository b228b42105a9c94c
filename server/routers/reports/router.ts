import { z } from "zod";
import { adminProcedure, publicProcedure, router, runtimeChecks, contract } from "../../trpc/init";
import { createReportInput, createReportOutput, listReportsInput, reportIdInput, reportOutput } from "./reports.schema";
import { createReport, deleteReportedLink, dismissReport, listReports, reportUrlChecks } from "./reports.service";

const TAG = "reports";

export const reportRouter = router({
  /** Public API: no authentication looked at, a token header is ignored. */
  create: publicProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/reports",
        tags: [TAG],
        summary: "Report an abusive short link",
        description:
          "Accepts a short link on the redirect domain (with or without scheme, trailing slash, query or fragment) or a bare slug. A person reviews every report; a report never changes the link. 10 an hour per address and 20 an hour per slug.",
        protect: false,
      },
    })
    .use(runtimeChecks(createReportInput, reportUrlChecks))
    .input(createReportInput)
    .output(contract(createReportOutput))
    .mutation(({ ctx, input }) => createReport(ctx.app, input, ctx.req)),

  list: adminProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/admin/reports",
        tags: [TAG],
        summary: "List abuse reports",
        description: "For reviewers (admins); newest first, optionally by status.",
        protect: true,
      },
      internal: true,
    })
    .input(listReportsInput.optional())
    .output(contract(z.object({ reports: z.array(reportOutput) })))
    .query(async ({ ctx, input }) => ({ reports: await listReports(ctx.app.db, input?.status) })),

  dismiss: adminProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/admin/reports/{id}/dismiss",
        tags: [TAG],
        summary: "Dismiss a report",
        description: "Marks the report reviewed without touching the link.",
        protect: true,
      },
      internal: true,
    })
    .input(reportIdInput)
    .output(contract(reportOutput))
    .mutation(({ ctx, input }) => dismissReport(ctx.app, ctx.actor.userId, input.id)),

  deleteLink: adminProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/admin/reports/{id}/delete-link",
        tags: [TAG],
        summary: "Delete the reported link",
        description: "Soft-deletes the link like DELETE /links/{id} and marks its open reports link_deleted.",
        protect: true,
      },
      internal: true,
    })
    .input(reportIdInput)
    .output(contract(reportOutput))
    .mutation(({ ctx, input }) => deleteReportedLink(ctx.app, ctx.actor.userId, input.id)),
});
