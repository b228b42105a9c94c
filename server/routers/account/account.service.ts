import { and, eq, inArray, isNull } from "drizzle-orm";
import type { DbOrTx } from "../../../db/client";
import { apiTokens, emailCodes, links, linktreeItems, linktrees, sessions, users, workspaces } from "../../../db/schema";
import { AppError, isUniqueViolation, notFound } from "../../domain/errors";
import { consume } from "../../lib/rate-limit";
import { normalizeEmail } from "../../lib/users";
import { checkNoLoops } from "../links/links.service";
import type { AppServices } from "../../core/services";
import type { Context } from "../../trpc/context";
import { codeMail, consumeEmailCode, createEmailCode, invalidCode } from "../auth/email-codes";
import type { AccountDto } from "./account.schema";

const emailInUse = () => new AppError("EMAIL_IN_USE", { message: "e-mail address belongs to another account" });

export async function getAccount(db: DbOrTx, userId: string): Promise<AccountDto> {
  const [row] = await db
    .select({
      id: users.id,
      email: users.email,
      name: users.name,
      avatarUrl: users.avatarUrl,
      createdAt: users.createdAt,
      workspaceId: workspaces.id,
      workspaceName: workspaces.name,
    })
    .from(users)
    .innerJoin(workspaces, eq(workspaces.id, users.workspaceId))
    .where(eq(users.id, userId));
  if (!row) throw new AppError("UNAUTHORIZED"); // the user was deleted under a live credential
  return {
    user: { id: row.id, email: row.email, name: row.name, avatar_url: row.avatarUrl, created_at: row.createdAt },
    workspace: { id: row.workspaceId, name: row.workspaceName },
  };
}

export async function updateAccount(db: DbOrTx, userId: string, name: string | null): Promise<AccountDto> {
  await db.update(users).set({ name }).where(eq(users.id, userId));
  return getAccount(db, userId);
}

export async function setAvatar(app: AppServices, userId: string, avatarUrl: string | null): Promise<AccountDto> {
  checkNoLoops(app.config, { avatar_url: avatarUrl });
  await app.db.update(users).set({ avatarUrl }).where(eq(users.id, userId));
  return getAccount(app.db, userId);
}

/** Mails a code to the new address; nothing changes until account.verifyEmail (decisions §2). */
export async function startEmailChange(ctx: Context, userId: string, newEmail: string): Promise<void> {
  const { app } = ctx;
  const email = normalizeEmail(newEmail);
  await consume(app.limits, "signInPerAddress", ctx.req.ip);
  await consume(app.limits, "signInPerEmail", email);
  const code = await createEmailCode(app.db, app.config.sessionSecret, { email, purpose: "email_change", userId });
  await app.mail.send(codeMail(email, code, "email_change"));
}

export async function verifyEmailChange(app: AppServices, userId: string, code: string): Promise<AccountDto> {
  const changed = await app.db.transaction(async (tx) => {
    const match = await consumeEmailCode(tx, app.config.sessionSecret, { purpose: "email_change", userId }, code);
    if (!match) return false;
    const [other] = await tx.select({ id: users.id }).from(users).where(eq(users.email, match.email));
    if (other && other.id !== userId) throw emailInUse(); // rolls back: the code stays usable
    try {
      await tx.transaction((sp) => sp.update(users).set({ email: match.email }).where(eq(users.id, userId)));
    } catch (e) {
      if (isUniqueViolation(e, "users_email_idx")) throw emailInUse();
      throw e;
    }
    return true;
  });
  if (!changed) throw invalidCode();
  return getAccount(app.db, userId);
}

/**
 * Removes the user, its workspace, tokens, sessions, e-mail codes and every link of the
 * workspace (hard delete, so slugs are freed; linktrees and their items too) in one
 * transaction. Click events stay (they have no foreign key).
 */
export async function deleteAccount(app: AppServices, userId: string): Promise<void> {
  const slugs = await app.db.transaction(async (tx) => {
    const [user] = await tx.select({ workspaceId: users.workspaceId, email: users.email }).from(users).where(eq(users.id, userId)).for("update");
    if (!user) throw notFound();
    const ws = user.workspaceId;
    const live = await tx
      .select({ slug: links.slug })
      .from(links)
      .where(and(eq(links.workspaceId, ws), isNull(links.deletedAt)));
    const trees = tx.select({ id: linktrees.id }).from(linktrees).where(eq(linktrees.workspaceId, ws));
    await tx.delete(linktreeItems).where(inArray(linktreeItems.linktreeId, trees));
    await tx.delete(linktrees).where(eq(linktrees.workspaceId, ws));
    await tx.delete(links).where(eq(links.workspaceId, ws));
    await tx.delete(apiTokens).where(eq(apiTokens.userId, userId));
    await tx.delete(sessions).where(eq(sessions.userId, userId));
    await tx.delete(emailCodes).where(eq(emailCodes.userId, userId));
    await tx.delete(emailCodes).where(eq(emailCodes.email, user.email));
    await tx.delete(users).where(eq(users.id, userId));
    // Another user sharing the workspace would keep it; today every workspace has one user.
    const [stillUsed] = await tx.select({ id: users.id }).from(users).where(eq(users.workspaceId, ws)).limit(1);
    if (!stillUsed) await tx.delete(workspaces).where(eq(workspaces.id, ws));
    return live.map((l) => l.slug);
  });
  await app.invalidateSlugs(slugs);
}
