import { and, count, eq, inArray, isNull, ne, sql } from "drizzle-orm";
import type { DbOrTx } from "../../../db/client";
import { apiTokens, domains, emailCodes, importJobs, linktreeItems, linktrees, memberships, sessions, users, workspaces } from "../../../db/schema";
import { AppError, isUniqueViolation, notFound } from "../../domain/errors";
import { consumeCodeMail } from "../../lib/rate-limit";
import { normalizeEmail } from "../../lib/users";
import { checkNoLoops } from "../links";
import { afterLinkCommit, deleteWorkspaceLinks, linkTx } from "../links";
import type { AppServices } from "../../core/services";
import type { Actor, RequestInfo } from "../../trpc/context";
import { codeMail, consumeEmailCode, createEmailCode, invalidCode } from "../auth";
import type { AccountDto } from "./account.schema";
import { writeAuditEvents } from "../../trpc/audit";

const emailInUse = () => new AppError("EMAIL_IN_USE", { message: "e-mail address belongs to another account" });

/** The Account in `workspaceId` (the credential's workspace), or in the user's personal workspace. */
export async function getAccount(db: DbOrTx, userId: string, workspaceId?: string): Promise<AccountDto> {
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
    .innerJoin(workspaces, eq(workspaces.id, workspaceId ?? users.workspaceId))
    .where(eq(users.id, userId));
  if (!row) throw new AppError("UNAUTHORIZED"); // the user (or the workspace) was deleted under a live credential
  return {
    user: { id: row.id, email: row.email, name: row.name, avatar_url: row.avatarUrl, created_at: row.createdAt },
    workspace: { id: row.workspaceId, name: row.workspaceName },
  };
}

export async function updateAccount(db: DbOrTx, actor: Actor, name: string | null): Promise<AccountDto> {
  await db.update(users).set({ name }).where(eq(users.id, actor.userId));
  return getAccount(db, actor.userId, actor.workspaceId);
}

export async function setAvatar(app: Pick<AppServices, "config" | "db">, actor: Actor, avatarUrl: string | null): Promise<AccountDto> {
  checkNoLoops(app.config, { avatar_url: avatarUrl });
  await app.db.update(users).set({ avatarUrl }).where(eq(users.id, actor.userId));
  return getAccount(app.db, actor.userId, actor.workspaceId);
}

/** Mails a code to the new address; nothing changes until account.verifyEmail confirms the code. */
export async function startEmailChange(
  app: Pick<AppServices, "db" | "config" | "limits" | "mail">,
  actor: Actor,
  newEmail: string,
  from: Pick<RequestInfo, "ip">,
): Promise<void> {
  const { userId } = actor;
  const email = normalizeEmail(newEmail);
  // Past the address's cap over every caller: the same answer, without a mail (as for sign-in).
  if (!(await consumeCodeMail(app.limits, from.ip, email))) return;
  const code = await createEmailCode(app.db, app.config.sessionSecret, { email, purpose: "email_change", userId });
  await app.mail.send(codeMail(email, code, "email_change"));
}

export async function verifyEmailChange(app: Pick<AppServices, "config" | "db">, actor: Actor, code: string): Promise<AccountDto> {
  const { userId } = actor;
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
  return getAccount(app.db, userId, actor.workspaceId);
}

/** What a purge leaves to drop from the caches once committed. */
export type Purged = { cacheKeys: string[]; domains: number };

/**
 * Empties a workspace that is going away (its deletion, or its last member's account deletion):
 * every link record (hard delete, so slugs are freed; linktrees and their items too), its domains,
 * and its tokens revoked; sessions in it fall back to their personal workspace. Click events stay
 * (they have no foreign key). Call `dropCaches` with what it answers once committed.
 */
export async function purgeWorkspace(tx: DbOrTx, workspaceId: string, into: Purged = { cacheKeys: [], domains: 0 }): Promise<Purged> {
  // First, so an import running on any instance finds its job gone at its next batch (the batch locks
  // the job row before inserting) and stops instead of adding links to a workspace that is going away.
  await tx.delete(importJobs).where(eq(importJobs.workspaceId, workspaceId));
  const trees = tx.select({ id: linktrees.id }).from(linktrees).where(eq(linktrees.workspaceId, workspaceId));
  await tx.delete(linktreeItems).where(inArray(linktreeItems.linktreeId, trees));
  await tx.delete(linktrees).where(eq(linktrees.workspaceId, workspaceId));
  await deleteWorkspaceLinks(linkTx(tx, into.cacheKeys), workspaceId);
  const gone = await tx.delete(domains).where(eq(domains.workspaceId, workspaceId)).returning({ id: domains.id });
  await tx
    .update(apiTokens)
    .set({ revokedAt: Date.now() })
    .where(and(eq(apiTokens.workspaceId, workspaceId), isNull(apiTokens.revokedAt)));
  await tx.update(sessions).set({ workspaceId: null }).where(eq(sessions.workspaceId, workspaceId));
  // Memberships and invitations go with the workspace (ON DELETE CASCADE).
  await tx.delete(workspaces).where(eq(workspaces.id, workspaceId));
  into.domains += gone.length;
  return into;
}

/** After a committed purge: its short links stop on every instance, its domains stop being served and its tokens stop working. */
export async function dropCaches(app: Pick<AppServices, "invalidateCredentials" | "invalidateDomains" | "invalidateSlugs">, purged: Purged): Promise<void> {
  await app.invalidateCredentials();
  await afterLinkCommit(app, purged.cacheKeys);
  if (purged.domains) await app.invalidateDomains();
}

/**
 * The logs of the teams a deleted account leaves: its leaving, and each of its tokens bound to the
 * team (deleted with the account), written while the account is still there to name.
 */
async function logLeaving(tx: DbOrTx, userId: string, teams: string[]): Promise<void> {
  if (!teams.length) return;
  const tokens = await tx
    .select({ id: apiTokens.id, workspaceId: apiTokens.workspaceId })
    .from(apiTokens)
    .where(and(eq(apiTokens.userId, userId), inArray(apiTokens.workspaceId, teams), isNull(apiTokens.revokedAt)));
  const event = (workspaceId: string, action: string, targetType: string, targetId: string) => ({ workspaceId, action, targetType, targetId, changes: [] });
  await writeAuditEvents(tx, { userId }, [
    ...teams.map((w) => event(w, "member.left", "member", userId)),
    ...tokens.map((t) => event(t.workspaceId!, "token.deleted", "token", t.id)),
  ]);
}

/**
 * Removes the user, its personal workspace, tokens, sessions, e-mail codes and every link of the
 * workspace in one transaction (see purgeWorkspace). Shared workspaces: the user's membership goes;
 * one the user is the only member of is deleted like the personal one; one where the user is the
 * last owner and others remain answers 409 LAST_OWNER and nothing changes.
 */
export async function deleteAccount(
  app: Pick<AppServices, "db" | "invalidateCredentials" | "invalidateDomains" | "invalidateSlugs">,
  userId: string,
): Promise<void> {
  const purged = await app.db.transaction(async (tx) => {
    const [user] = await tx.select({ workspaceId: users.workspaceId, email: users.email }).from(users).where(eq(users.id, userId)).for("update");
    if (!user) throw notFound();
    // Locks the shared workspaces' rows (as every membership change does), in id order.
    const shared = await tx
      .select({ id: workspaces.id, role: memberships.role })
      .from(memberships)
      .innerJoin(workspaces, eq(workspaces.id, memberships.workspaceId))
      .where(and(eq(memberships.userId, userId), ne(workspaces.id, user.workspaceId)))
      .orderBy(workspaces.id)
      .for("update", { of: workspaces });
    const emptied: string[] = [];
    for (const ws of shared) {
      const [others] = await tx
        .select({ all: count(), owners: sql<number>`count(*) filter (where ${memberships.role} = 'owner')`.mapWith(Number) })
        .from(memberships)
        .where(and(eq(memberships.workspaceId, ws.id), ne(memberships.userId, userId)));
      if (others.all === 0) emptied.push(ws.id);
      else if (ws.role === "owner" && others.owners === 0) throw new AppError("LAST_OWNER");
    }
    const purged: Purged = { cacheKeys: [], domains: 0 };
    for (const id of emptied) await purgeWorkspace(tx, id, purged);
    await logLeaving(
      tx,
      userId,
      shared.map((w) => w.id).filter((id) => !emptied.includes(id)),
    );
    await tx.delete(apiTokens).where(eq(apiTokens.userId, userId));
    await tx.delete(sessions).where(eq(sessions.userId, userId));
    await tx.delete(emailCodes).where(eq(emailCodes.userId, userId));
    await tx.delete(emailCodes).where(eq(emailCodes.email, user.email));
    await tx.delete(users).where(eq(users.id, userId)); // and its memberships
    // After the user: users.workspace_id refers to the personal workspace.
    return purgeWorkspace(tx, user.workspaceId, purged);
  });
  await dropCaches(app, purged);
}
