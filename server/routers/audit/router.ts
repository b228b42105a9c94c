import { authedProcedure, contract, router } from "../../trpc/init";
import { z } from "zod";
import { auditFilterChoicesOutput, auditListInput, auditListOutput } from "./audit.schema";
import { auditFilterChoices, listAuditEvents } from "./audit.service";

export const auditRouter = router({
  list: authedProcedure
    .meta({
      // Any token of an owner may read it: the role, not a scope, guards the log.
      scope: null,
      openapi: {
        method: "GET",
        path: "/audit",
        tags: ["audit"],
        summary: "Read the audit log",
        description:
          "Who created, changed or deleted what in the caller's workspace (links, linktrees and their items, domains, webhooks, tokens, members, " +
          "invitations and the workspace itself; an import is one event with its counts), newest first, 50 a page unless `limit` says otherwise. " +
          "`changes` names the members a create set or a change moved (an update sending a member's current value does not name it), never their values. Kept 400 days. Owners only: members and viewers get 403 FORBIDDEN. " +
          "`actor`, `action`, `target_type` and `target_id` keep only the events that match each one given; pages keep them (pass them with `cursor`). " +
          "A `cursor` that is not a `next_cursor`, or a filter of the wrong shape, answers 400 naming it.",
        protect: true,
      },
      errors: [403],
    })
    .input(auditListInput)
    .output(contract(auditListOutput))
    .query(({ ctx, input }) => listAuditEvents(ctx.app.db, ctx.actor, input)),

  /** The dashboard's filter choices (no REST path: the page's own). */
  filterChoices: authedProcedure
    .meta({ scope: null })
    .input(z.object({}).strict().optional())
    .output(contract(auditFilterChoicesOutput))
    .query(({ ctx }) => auditFilterChoices(ctx.app.db, ctx.actor)),
});
