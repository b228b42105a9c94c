import { z } from "zod";
import { authedProcedure, router, sessionOnlyProcedure, type Meta, contract } from "../../trpc/init";
import { accountOutput, changeEmailInput, setAvatarInput, updateAccountInput, verifyEmailInput } from "./account.schema";
import { deleteAccount, getAccount, setAvatar, startEmailChange, updateAccount, verifyEmailChange } from "./account.service";

const TAG = "account";
const internal = (method: "GET" | "POST" | "PATCH" | "DELETE", path: `/${string}`, summary: string, description: string): Meta => ({
  openapi: { method, path, tags: [TAG], summary, description, protect: true },
  internal: true,
});

export const accountRouter = router({
  /** Public API: a token or a session. */
  get: authedProcedure
    .meta({
      scope: null,
      openapi: {
        method: "GET",
        path: "/account",
        tags: [TAG],
        summary: "Get the signed-in account",
        description: "The user, and the workspace the request acts in: the token's, or the session's current one.",
        protect: true,
      },
    })
    .input(z.object({}).optional())
    .output(contract(accountOutput))
    .query(({ ctx }) => getAccount(ctx.app.db, ctx.actor.userId, ctx.actor.workspaceId)),

  update: sessionOnlyProcedure
    .meta(internal("PATCH", "/account", "Rename the account", "Sets the user's display name; empty or null clears it."))
    .input(updateAccountInput)
    .output(contract(accountOutput))
    .mutation(({ ctx, input }) => updateAccount(ctx.app.db, ctx.actor, input.name)),

  changeEmail: sessionOnlyProcedure
    .meta({
      ...internal("POST", "/account/email", "Change the e-mail address", "Mails a 6-digit code to the new address; account.verifyEmail applies it."),
      successStatus: 202,
    })
    .input(changeEmailInput)
    .output(contract(z.void()))
    .mutation(async ({ ctx, input }) => {
      await startEmailChange(ctx.app, ctx.actor, input.email, ctx.req);
    }),

  verifyEmail: sessionOnlyProcedure
    .meta(internal("POST", "/account/email/verify", "Confirm the new e-mail address", "Applies the e-mail change confirmed by the code."))
    .input(verifyEmailInput)
    .output(contract(accountOutput))
    .mutation(({ ctx, input }) => verifyEmailChange(ctx.app, ctx.actor, input.code)),

  delete: sessionOnlyProcedure
    .meta({
      ...internal(
        "DELETE",
        "/account",
        "Delete the account",
        "Removes the user, its personal workspace, tokens, sessions and links (slugs freed); click events stay. The last owner of a shared workspace with other members: 409 LAST_OWNER.",
      ),
      successStatus: 204,
    })
    .input(z.object({}).optional())
    .output(contract(z.void()))
    .mutation(async ({ ctx }) => {
      await deleteAccount(ctx.app, ctx.actor.userId);
      ctx.res.appendHeader("Set-Cookie", ctx.app.lucia.createBlankSessionCookie().serialize());
    }),

  /** No REST: the dashboard's upload action calls it after storing the file. */
  setAvatar: sessionOnlyProcedure
    .input(setAvatarInput)
    .output(contract(accountOutput))
    .mutation(({ ctx, input }) => setAvatar(ctx.app, ctx.actor, input.avatar_url)),
});
