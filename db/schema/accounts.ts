import { bigint, boolean, index, integer, pgTable, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";

const ms = (name: string) => bigint(name, { mode: "number" });

export const workspaces = pgTable("workspaces", {
  id: text("id").primaryKey(),
  name: text("name"),
  /** The workspace made at a user's first sign-in (users.workspace_id points at it); never shared, never deleted alone. */
  personal: boolean("personal").notNull().default(false),
  createdAt: ms("created_at").notNull(),
});

export const users = pgTable(
  "users",
  {
    id: text("id").primaryKey(),
    email: text("email").notNull(),
    name: text("name"),
    avatarUrl: text("avatar_url"),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id),
    plan: text("plan", { enum: ["free", "pro"] })
      .notNull()
      .default("free"),
    isAdmin: boolean("is_admin").notNull().default(false),
    createdAt: ms("created_at").notNull(),
    /** No longer written (every sign-in starts in the personal workspace); left for a later release to drop, as migrations never remove in the release that stops using. */
    lastWorkspaceId: text("last_workspace_id").references(() => workspaces.id, { onDelete: "set null" }),
  },
  (t) => [uniqueIndex("users_email_idx").on(t.email)],
);

/** Login sessions (lucia). `expires_at` is a timestamptz because lucia's adapter requires it. */
export const sessions = pgTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    expiresAt: timestamp("expires_at", { withTimezone: true, mode: "date" }).notNull(),
    createdAt: ms("created_at").notNull(),
    /** The session's current workspace; null means the user's personal one (also once that workspace is deleted). */
    workspaceId: text("workspace_id").references(() => workspaces.id, { onDelete: "set null" }),
    device: text("device"),
    browser: text("browser"),
    platform: text("platform"),
    country: text("country"),
    regionName: text("region_name"),
    city: text("city"),
  },
  (t) => [index("sessions_user_idx").on(t.userId)],
);

/** E-mail codes: sign-in and e-mail change. Only a hash of the code is stored. */
export const emailCodes = pgTable(
  "email_codes",
  {
    id: text("id").primaryKey(),
    email: text("email").notNull(),
    purpose: text("purpose", { enum: ["sign_in", "email_change"] }).notNull(),
    userId: text("user_id").references(() => users.id, { onDelete: "cascade" }),
    codeHash: text("code_hash").notNull(),
    /**
     * Sign-in codes: SHA-256 of the pending-sign-in cookie of the browser that asked for the code.
     * Its tries count in `attempts`; tries from anywhere else (a script that keeps no cookie) count
     * in `looseAttempts`, so a stranger's guesses cannot end the code for the browser that asked.
     */
    pendingHash: text("pending_hash"),
    attempts: integer("attempts").notNull().default(0),
    looseAttempts: integer("loose_attempts").notNull().default(0),
    expiresAt: ms("expires_at").notNull(),
    usedAt: ms("used_at"),
    createdAt: ms("created_at").notNull(),
  },
  (t) => [index("email_codes_email_idx").on(t.email, t.purpose)],
);

export const apiTokens = pgTable(
  "api_tokens",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    prefix: text("prefix").notNull(),
    tokenHash: text("token_hash").notNull(),
    /** The workspace that was current when the token was made; the token acts only there. */
    workspaceId: text("workspace_id").notNull(),
    createdAt: ms("created_at").notNull(),
    lastUsedAt: ms("last_used_at"),
    revokedAt: ms("revoked_at"),
    /** What the token may do; null: every scope (tokens made without a list, and those made before scopes existed). */
    scopes: text("scopes").array(),
  },
  (t) => [uniqueIndex("api_tokens_hash_idx").on(t.tokenHash), index("api_tokens_user_idx").on(t.userId), index("api_tokens_workspace_idx").on(t.workspaceId)],
);
