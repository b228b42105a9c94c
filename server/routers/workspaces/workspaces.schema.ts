import { z } from "zod";
import { body, text } from "../../lib/input";
import { emailSchema } from "../account";

export const NAME_MAX = 100;
export const ROLES = ["owner", "member", "viewer"] as const;
export type Role = (typeof ROLES)[number];

const name = text().trim().min(1, `must be 1-${NAME_MAX} characters`).max(NAME_MAX, `must be 1-${NAME_MAX} characters`);
/** Exactly `owner`, `member` or `viewer`; anything else is 400 VALIDATION_FAILED naming `role`. */
const role = z.enum(ROLES, { errorMap: () => ({ message: "must be owner, member or viewer" }) });
/** Workspace, member and invitation ids are opaque: any text is accepted and an unknown one is 404. */
const anyId = text();

export const workspaceIdInput = z.object({ id: anyId });
/** POST without a body of its own: a member sent anyway is unknown (400 naming it). */
export const switchInput = body({ id: anyId });
export const LOCATE_TYPES = ["link", "linktree", "domain"] as const;
export type LocateType = (typeof LOCATE_TYPES)[number];
export const locateInput = z.object({
  type: z.enum(LOCATE_TYPES, { errorMap: () => ({ message: `must be one of ${LOCATE_TYPES.join(", ")}` }) }),
  id: anyId,
});
export const locateOutput = z.object({ workspace_id: z.string(), name: z.string().nullable(), personal: z.boolean() });
export const createWorkspaceInput = body({ name });
export const updateWorkspaceInput = body({ id: anyId, name });
export const createInviteInput = body({ id: anyId, email: emailSchema, role });
export const inviteIdInput = z.object({ id: anyId, inviteId: anyId });
/** A malformed token is simply unknown (404), like a wrong one. */
export const acceptInviteInput = body({ token: text().min(1, "required").max(200, "at most 200 characters") });
export const previewInviteInput = z.object({ token: text().max(200, "at most 200 characters") });
export const updateMemberInput = body({ id: anyId, userId: anyId, role });
export const memberIdInput = z.object({ id: anyId, userId: anyId });

export const workspaceOutput = z.object({
  id: z.string(),
  name: z.string().nullable(),
  role: z.enum(ROLES),
  personal: z.boolean(),
  current: z.boolean(),
  members: z.number().int(),
});
export type WorkspaceDto = z.infer<typeof workspaceOutput>;

export const memberOutput = z.object({
  user_id: z.string(),
  email: z.string(),
  name: z.string().nullable(),
  role: z.enum(ROLES),
  joined_at: z.number().int(),
});
export type MemberDto = z.infer<typeof memberOutput>;

export const inviteOutput = z.object({
  id: z.string(),
  email: z.string(),
  role: z.enum(ROLES),
  created_at: z.number().int(),
  expires_at: z.number().int(),
});
export type InviteDto = z.infer<typeof inviteOutput>;

/** What the invitation landing page shows before (and after) sign-in. */
export const invitePreviewOutput = z.object({
  workspace: z.object({ id: z.string(), name: z.string().nullable() }),
  email: z.string(),
  role: z.enum(ROLES),
  invited_by: z.string().nullable(),
  expires_at: z.number().int(),
});
export type InvitePreviewDto = z.infer<typeof invitePreviewOutput>;
