import { z } from "zod";
import { publicProcedure, router, sessionOnlyProcedure, type Meta, contract } from "../../trpc/init";
import { changedOnly, memberNames, movedNothing, type AuditRule } from "../../trpc/audit";
import { accountOutput } from "../account";
import { isObject } from "../../lib/input";
import { normalizeEmail } from "../../lib/users";
import {
  acceptInviteInput,
  createInviteInput,
  createWorkspaceInput,
  inviteIdInput,
  inviteOutput,
  invitePreviewOutput,
  locateInput,
  locateOutput,
  memberIdInput,
  memberOutput,
  previewInviteInput,
  switchInput,
  updateMemberInput,
  updateWorkspaceInput,
  workspaceIdInput,
  workspaceOutput,
} from "./workspaces.schema";
import {
  acceptInvite,
  createInvite,
  createWorkspace,
  deleteWorkspace,
  listMembers,
  listWorkspaces,
  liveTokenIds,
  locateObject,
  previewInvite,
  removeMember,
  renameWorkspace,
  revokeInvite,
  setMemberRole,
  switchWorkspace,
} from "./workspaces.service";

const TAG = "workspaces";
/**
 * Team administration is account administration (docs/teams-and-domains.md): a session only (a token gets 403
 * SESSION_REQUIRED, no credential 401), under API_URL, not in /openapi.json.
 */
const internal = (method: "GET" | "POST" | "PATCH" | "DELETE", path: `/${string}`, summary: string, description: string): Meta => ({
  openapi: { method, path, tags: [TAG], summary, description, protect: true },
  internal: true,
});

/** An audit event in the workspace `ws` of the call; its target is named by `target`. */
const event =
  (action: string, targetType: string, target: (input: Record<string, unknown>, output: unknown) => unknown, ws?: (output: unknown) => unknown): AuditRule =>
  ({ input, output, before }) => {
    const changes = changedOnly(memberNames(input, ["id", "userId", "inviteId", "token"]), before, output);
    if (action.endsWith(".updated") && movedNothing(before, changes)) return [];
    const workspaceId = String((ws ? ws(output) : input.id) ?? "");
    return [{ workspaceId, action, targetType, targetId: (target(input, output) as string | undefined) ?? null, changes }];
  };
const out = (o: unknown) => o as { id: string; workspace: { id: string } };
const invited = event("member.invited", "invite", (_, o) => out(o).id);

export const workspaceRouter = router({
  list: sessionOnlyProcedure
    .meta(internal("GET", "/workspaces", "List workspaces", "The caller's workspaces with role and member count, personal first, then by name."))
    .input(z.object({}).optional())
    .output(contract(z.object({ workspaces: z.array(workspaceOutput) })))
    .query(async ({ ctx }) => ({ workspaces: await listWorkspaces(ctx.app.db, ctx.actor) })),

  create: sessionOnlyProcedure
    .meta({
      ...internal("POST", "/workspaces", "Create a workspace", "A shared workspace with the caller as its owner."),
      successStatus: 201,
      audit: event(
        "workspace.created",
        "workspace",
        (_, o) => out(o).id,
        (o) => out(o).id,
      ),
    })
    .input(createWorkspaceInput)
    .output(contract(workspaceOutput))
    .mutation(({ ctx, input }) => createWorkspace(ctx.app, ctx.actor, input.name)),

  switch: sessionOnlyProcedure
    .meta(internal("POST", "/workspaces/{id}/switch", "Switch workspace", "This session acts in the workspace from now on; answers the Account."))
    .input(switchInput)
    .output(contract(accountOutput))
    .mutation(({ ctx, input }) => switchWorkspace(ctx.app.db, ctx.actor, input.id)),

  locate: sessionOnlyProcedure
    .meta(
      internal(
        "GET",
        "/workspaces/locate",
        "Locate an object",
        "Which of the caller's workspaces holds a link, linktree or domain (404 when none does), so a page opened from another workspace can switch there.",
      ),
    )
    .input(locateInput)
    .output(contract(locateOutput))
    .query(({ ctx, input }) => locateObject(ctx.app.db, ctx.actor, input.type, input.id)),

  update: sessionOnlyProcedure
    .meta({
      ...internal("PATCH", "/workspaces/{id}", "Rename a workspace", "Owners only."),
      audit: event("workspace.updated", "workspace", (i) => i.id),
      auditBefore: async (app, actor, input) => (await listWorkspaces(app.db, actor)).find((w) => w.id === input.id),
    })
    .input(updateWorkspaceInput)
    .output(contract(workspaceOutput))
    .mutation(({ ctx, input }) => renameWorkspace(ctx.app.db, ctx.actor, input.id, input.name)),

  delete: sessionOnlyProcedure
    .meta({
      ...internal(
        "DELETE",
        "/workspaces/{id}",
        "Delete a workspace",
        "Owners only. Its links and linktrees are deleted (slugs freed), its tokens revoked, its domains removed; click events stay. A personal workspace: 409 PERSONAL_WORKSPACE.",
      ),
      successStatus: 204,
      audit: event("workspace.deleted", "workspace", (i) => i.id),
    })
    .input(workspaceIdInput)
    .output(contract(z.void()))
    .mutation(async ({ ctx, input }) => {
      await deleteWorkspace(ctx.app, ctx.actor, input.id);
    }),

  members: sessionOnlyProcedure
    .meta(internal("GET", "/workspaces/{id}/members", "List members", "Members and pending invitations; any member may look."))
    .input(workspaceIdInput)
    .output(contract(z.object({ members: z.array(memberOutput), invites: z.array(inviteOutput) })))
    .query(({ ctx, input }) => listMembers(ctx.app.db, ctx.actor, input.id)),

  invite: sessionOnlyProcedure
    .meta({
      ...internal(
        "POST",
        "/workspaces/{id}/invites",
        "Invite by e-mail",
        "Owners only. Mails a link valid for 7 days; replaces a pending invitation for the same address. A member already: 409 ALREADY_MEMBER. " +
          "`role` is `owner`, `member` or `viewer` (reads everything, changes nothing).",
      ),
      successStatus: 201,
      // A pending invitation of the same address, which the new one replaces (its link stops working).
      auditBefore: async (app, actor, input) =>
        (await listMembers(app.db, actor, String(input.id))).invites.find((i) => i.email === normalizeEmail(String(input.email ?? ""))),
      audit: async (call) => [
        ...(isObject(call.before)
          ? [{ workspaceId: String(call.input.id), action: "invite.revoked", targetType: "invite", targetId: String(call.before.id), changes: [] }]
          : []),
        ...(await invited({ ...call, before: undefined })),
      ],
    })
    .input(createInviteInput)
    .output(contract(inviteOutput))
    .mutation(({ ctx, input }) => createInvite(ctx.app, ctx.actor, input)),

  revokeInvite: sessionOnlyProcedure
    .meta({
      ...internal("DELETE", "/workspaces/{id}/invites/{inviteId}", "Revoke an invitation", "Owners only; the mailed link stops working."),
      successStatus: 204,
      audit: event("invite.revoked", "invite", (i) => i.inviteId),
    })
    .input(inviteIdInput)
    .output(contract(z.void()))
    .mutation(async ({ ctx, input }) => {
      await revokeInvite(ctx.app.db, ctx.actor, input.id, input.inviteId);
    }),

  acceptInvite: sessionOnlyProcedure
    .meta({
      ...internal(
        "POST",
        "/invites/accept",
        "Accept an invitation",
        "Joins the workspace with the invitation's role. Signed in as another address: 403 INVITE_EMAIL_MISMATCH; unknown, used, revoked or expired: 404.",
      ),
      audit: ({ actor, output }) => [
        { workspaceId: out(output).workspace.id, action: "member.joined", targetType: "member", targetId: actor.userId, changes: ["role"] },
      ],
    })
    .input(acceptInviteInput)
    .output(contract(z.object({ workspace: workspaceOutput })))
    .mutation(({ ctx, input }) => acceptInvite(ctx.app.db, ctx.actor, input.token)),

  updateMember: sessionOnlyProcedure
    .meta({
      ...internal(
        "PATCH",
        "/workspaces/{id}/members/{userId}",
        "Change a member's role",
        "Owners only. `role`: `owner`, `member` or `viewer`. Leaving no owner: 409 LAST_OWNER.",
      ),
      audit: event("member.updated", "member", (i) => i.userId),
      auditBefore: async (app, actor, input) => (await listMembers(app.db, actor, String(input.id))).members.find((m) => m.user_id === input.userId),
    })
    .input(updateMemberInput)
    .output(contract(memberOutput))
    .mutation(({ ctx, input }) => setMemberRole(ctx.app, ctx.actor, input)),

  removeMember: sessionOnlyProcedure
    .meta({
      ...internal(
        "DELETE",
        "/workspaces/{id}/members/{userId}",
        "Remove a member, or leave",
        "Owners, or the member themself. Leaving no owner: 409 LAST_OWNER. The member's tokens bound to the workspace stop working at once.",
      ),
      successStatus: 204,
      // The member's tokens bound to the workspace are revoked with the membership: each is an event too.
      auditBefore: (app, _actor, input) => liveTokenIds(app.db, String(input.id), String(input.userId)),
      audit: ({ actor, input, before }) => [
        {
          workspaceId: String(input.id),
          action: input.userId === actor.userId ? "member.left" : "member.removed",
          targetType: "member",
          targetId: String(input.userId),
          changes: [],
        },
        ...(Array.isArray(before) ? (before as string[]) : []).map((id) => ({
          workspaceId: String(input.id),
          action: "token.deleted",
          targetType: "token",
          targetId: id,
          changes: [],
        })),
      ],
    })
    .input(memberIdInput)
    .output(contract(z.void()))
    .mutation(async ({ ctx, input }) => {
      await removeMember(ctx.app, ctx.actor, input.id, input.userId);
    }),

  /** No REST: the invitation landing page, before sign-in. The mailed token is the credential. */
  previewInvite: publicProcedure
    .input(previewInviteInput)
    .output(contract(invitePreviewOutput))
    .query(({ ctx, input }) => previewInvite(ctx.app.db, input.token)),
});
