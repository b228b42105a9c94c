import { z } from "zod";
import { router, sessionOnlyProcedure, contract } from "../../trpc/init";
import { sessionIdInput, sessionOutput } from "./sessions.schema";
import { listSessions, revokeSession } from "./sessions.service";

const TAG = "sessions";

export const sessionRouter = router({
  list: sessionOnlyProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/account/sessions",
        tags: [TAG],
        summary: "List login sessions",
        description: "Live sessions of the user, newest first; `current` marks the caller's.",
        protect: true,
      },
      internal: true,
    })
    .input(z.object({}).optional())
    .output(contract(z.object({ sessions: z.array(sessionOutput) })))
    .query(async ({ ctx }) => ({ sessions: await listSessions(ctx.app, ctx.actor) })),

  revoke: sessionOnlyProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: "/account/sessions/{id}",
        tags: [TAG],
        summary: "End a login session",
        description: "`id` is the last six characters of the session token, as listed.",
        protect: true,
      },
      internal: true,
      successStatus: 204,
      uncountedForSessions: true,
    })
    .input(sessionIdInput)
    .output(contract(z.void()))
    .mutation(async ({ ctx, input }) => {
      await revokeSession(ctx.app, ctx.actor, input.id, ctx);
    }),
});
