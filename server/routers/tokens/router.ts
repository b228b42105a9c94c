import { z } from "zod";
import { isObject } from "../../lib/input";
import { router, sessionOnlyProcedure, contract } from "../../trpc/init";
import { memberNames, tokenEvents } from "../../trpc/audit";
import { apiTokenOutput, createTokenInput, createTokenOutput, tokenIdInput } from "./tokens.schema";
import { SCOPES } from "../../domain/scopes";
import { createToken, listTokens, listTokensWithWorkspace, revokeToken } from "./tokens.service";

const TAG = "tokens";

export const tokenRouter = router({
  list: sessionOnlyProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/account/tokens",
        tags: [TAG],
        summary: "List API tokens",
        description: "Newest first, revoked ones included.",
        protect: true,
      },
      internal: true,
    })
    .input(z.object({}).optional())
    .output(contract(z.object({ tokens: z.array(apiTokenOutput) })))
    .query(async ({ ctx }) => ({ tokens: await listTokens(ctx.app.db, ctx.actor.userId) })),

  create: sessionOnlyProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/account/tokens",
        tags: [TAG],
        summary: "Create an API token",
        description:
          "The token is shown once and acts in the workspace the session is in now. `scopes` limits what it may do (absent: everything); " +
          "a call outside them answers 403 INSUFFICIENT_SCOPE. Free plan: one live token over all workspaces (409 TOKEN_LIMIT_REACHED). " +
          "A viewer of the workspace cannot create one (403 FORBIDDEN).",
        protect: true,
      },
      internal: true,
      successStatus: 201,
      refusesViewers: true,
      audit: ({ actor, input, output }) => [
        {
          workspaceId: actor.workspaceId,
          action: "token.created",
          targetType: "token",
          targetId: (output as { record: { id: string } }).record.id,
          changes: memberNames(input),
        },
      ],
    })
    .input(createTokenInput)
    .output(contract(createTokenOutput))
    .mutation(({ ctx, input }) => createToken(ctx.app.db, ctx.actor.userId, input.name, ctx.actor.workspaceId, input.scopes)),

  /** No REST: the dashboard's list, with the workspace each token acts in, and the scopes a new token can have. */
  listWithWorkspace: sessionOnlyProcedure
    .input(z.object({}).optional())
    .output(
      contract(
        z.object({
          tokens: z.array(apiTokenOutput.extend({ workspace: z.object({ id: z.string(), name: z.string().nullable(), personal: z.boolean() }).nullable() })),
          scopes: z.array(z.enum(SCOPES)),
        }),
      ),
    )
    .query(async ({ ctx }) => ({ tokens: await listTokensWithWorkspace(ctx.app.db, ctx.actor.userId), scopes: [...SCOPES] })),

  revoke: sessionOnlyProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: "/account/tokens/{id}",
        tags: [TAG],
        summary: "Revoke an API token",
        description: "Sets revoked_at; the token answers 401 from the next request on.",
        protect: true,
      },
      internal: true,
      successStatus: 204,
      uncountedForSessions: true,
      // Logged in the workspace the token acted in, which may not be the session's current one; a
      // token revoked before is revoked again with no event.
      auditBefore: async (app, actor, input) => (await listTokens(app.db, actor.userId)).find((t) => t.id === input.id),
      audit: async ({ input, db, before }) => (isObject(before) && before.revoked_at !== null ? [] : tokenEvents(db, String(input.id), "token.deleted", [])),
    })
    .input(tokenIdInput)
    .output(contract(z.void()))
    .mutation(async ({ ctx, input }) => {
      await revokeToken(ctx.app, ctx.actor.userId, input.id);
    }),
});
