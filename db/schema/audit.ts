import { bigint, index, jsonb, pgTable, text } from "drizzle-orm/pg-core";

const ms = (name: string) => bigint(name, { mode: "number" });

/**
 * What was created, changed or deleted in a workspace, by whom (user or token), kept 400 days.
 * No foreign keys: the log outlives the members, tokens and things it names.
 * `changes` holds member names only, never values, so no password or secret is ever in it.
 */
export const auditEvents = pgTable(
  "audit_events",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull(),
    at: ms("at").notNull(),
    actorUserId: text("actor_user_id"),
    actorEmail: text("actor_email"),
    actorTokenId: text("actor_token_id"),
    action: text("action").notNull(),
    targetType: text("target_type").notNull(),
    targetId: text("target_id"),
    changes: jsonb("changes").$type<string[] | Record<string, unknown>>(),
  },
  (t) => [index("audit_events_workspace_idx").on(t.workspaceId, t.at.desc(), t.id.desc()), index("audit_events_at_idx").on(t.at)],
);
