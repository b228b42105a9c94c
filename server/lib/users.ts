import { and, count, eq, isNull } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { apiTokens, memberships, users, workspaces } from "../../db/schema";
import { AppError } from "../domain/errors";
import { sha256 } from "./crypto";
import { newPublicId, newTokenValue, newWorkspaceId } from "./ids";

export type UserRow = typeof users.$inferSelect;
export type TokenRow = typeof apiTokens.$inferSelect;

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/** A user and its own workspace, made together (sign-up, the CLI, tests). */
export async function createUserWithWorkspace(
  db: DbOrTx,
  input: { email: string; name?: string | null; plan?: "free" | "pro"; isAdmin?: boolean },
): Promise<UserRow> {
  return db.transaction(async (tx) => {
    const now = Date.now();
    // 8 characters like a team workspace's; personal workspaces made before keep their 12.
    const workspaceId = newWorkspaceId();
    await tx.insert(workspaces).values({ id: workspaceId, name: input.name ? `${input.name}'s workspace` : null, personal: true, createdAt: now });
    const [user] = await tx
      .insert(users)
      .values({
        id: newPublicId(),
        email: normalizeEmail(input.email),
        name: input.name ?? null,
        workspaceId,
        plan: input.plan ?? "free",
        isAdmin: input.isAdmin ?? false,
        createdAt: now,
      })
      .returning();
    await tx.insert(memberships).values({ workspaceId, userId: user.id, role: "owner", joinedAt: now });
    return user;
  });
}

export const LIVE_TOKENS_BY_PLAN = { free: 1, pro: 10 } as const;

/**
 * Creates an API token bound to `workspaceId` (the workspace current when it is made; default the
 * user's personal one), of which the user must be a member. The value is returned once, only its
 * SHA-256 is stored. The plan's live-token limit counts the user's tokens in every workspace and
 * is checked under a lock on the user row, so two parallel creations cannot both take the last slot.
 */
export async function issueToken(
  db: DbOrTx,
  userId: string,
  name: string,
  workspaceId?: string,
  scopes: string[] | null = null,
): Promise<{ token: string; record: TokenRow }> {
  return db.transaction(async (tx) => {
    const [user] = await tx.select({ plan: users.plan, workspaceId: users.workspaceId }).from(users).where(eq(users.id, userId)).for("update");
    if (!user) throw new AppError("NOT_FOUND");
    if (workspaceId !== undefined && workspaceId !== user.workspaceId) {
      const [member] = await tx
        .select({ role: memberships.role })
        .from(memberships)
        .where(and(eq(memberships.workspaceId, workspaceId), eq(memberships.userId, userId)));
      if (!member) throw new AppError("NOT_FOUND");
    }
    const [{ live }] = await tx
      .select({ live: count() })
      .from(apiTokens)
      .where(and(eq(apiTokens.userId, userId), isNull(apiTokens.revokedAt)));
    if (live >= LIVE_TOKENS_BY_PLAN[user.plan]) throw new AppError("TOKEN_LIMIT_REACHED");
    const token = newTokenValue();
    const [record] = await tx
      .insert(apiTokens)
      .values({
        id: newPublicId(),
        userId,
        workspaceId: workspaceId ?? user.workspaceId,
        name,
        prefix: token.slice(0, 8),
        tokenHash: sha256(token),
        scopes,
        createdAt: Date.now(),
      })
      .returning();
    return { token, record };
  });
}
