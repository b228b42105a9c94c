import { sql } from "drizzle-orm";
import { bigint, index, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";
import { users, workspaces } from "./accounts";

const ms = (name: string) => bigint(name, { mode: "number" });

/** Who belongs to which workspace, and as what. A personal workspace has exactly its user as owner. */
export const memberships = pgTable(
  "memberships",
  {
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    role: text("role", { enum: ["owner", "member", "viewer"] }).notNull(),
    joinedAt: ms("joined_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.userId] }), index("memberships_user_idx").on(t.userId)],
);

/** Invitations by e-mail. Only a SHA-256 of the mailed token is stored; at most one pending invite per address and workspace. */
export const workspaceInvites = pgTable(
  "workspace_invites",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    role: text("role", { enum: ["owner", "member", "viewer"] }).notNull(),
    tokenHash: text("token_hash").notNull(),
    invitedBy: text("invited_by"),
    createdAt: ms("created_at").notNull(),
    expiresAt: ms("expires_at").notNull(),
    acceptedAt: ms("accepted_at"),
    revokedAt: ms("revoked_at"),
  },
  (t) => [
    uniqueIndex("workspace_invites_token_idx").on(t.tokenHash),
    uniqueIndex("workspace_invites_pending_idx")
      .on(t.workspaceId, t.email)
      .where(sql`${t.acceptedAt} IS NULL AND ${t.revokedAt} IS NULL`),
  ],
);
