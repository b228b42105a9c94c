import { and, eq, gt, isNull } from "drizzle-orm";
import type { DbOrTx } from "../../../db/client";
import { users, workspaceInvites } from "../../../db/schema";
import type { Config } from "../../config";

/**
 * Whether `email` (normalised) may sign in. With SIGNUPS=off only existing users and addresses with a
 * pending invitation may; the callers answer the others exactly as the allowed ones (no oracle).
 */
export async function maySignIn(db: DbOrTx, config: Pick<Config, "signups">, email: string, now = Date.now()): Promise<boolean> {
  if (config.signups !== false) return true;
  const [user] = await db.select({ id: users.id }).from(users).where(eq(users.email, email)).limit(1);
  if (user) return true;
  const [invite] = await db
    .select({ id: workspaceInvites.id })
    .from(workspaceInvites)
    .where(and(eq(workspaceInvites.email, email), isNull(workspaceInvites.acceptedAt), isNull(workspaceInvites.revokedAt), gt(workspaceInvites.expiresAt, now)))
    .limit(1);
  return Boolean(invite);
}
