import { consume } from "../../lib/rate-limit";
import { and, asc, eq, gt, isNull, sql } from "drizzle-orm";
import type { DbOrTx } from "../../../db/client";
import { apiTokens, domains, links, linktrees, memberships, sessions, users, workspaceInvites, workspaces } from "../../../db/schema";
import { base } from "../../config";
import type { AppServices } from "../../core/services";
import { AppError, isUniqueViolation, notFound } from "../../domain/errors";
import type { Actor } from "../../domain/types";
import { sha256 } from "../../lib/crypto";
import { BASE36, BASE62, newWorkspaceId, randomString } from "../../lib/ids";
import { inviteMail } from "../../lib/mail";
import { normalizeEmail } from "../../lib/users";
import { dropCaches, getAccount, purgeWorkspace } from "../account";
import type { AccountDto } from "../account";
import type { InviteDto, InvitePreviewDto, LocateType, MemberDto, Role, WorkspaceDto } from "./workspaces.schema";
import { lockWorkspace } from "./workspace-lock";

/** Invitations are valid for 7 days. */
export const INVITE_TTL_MS = 7 * 24 * 3600 * 1000;
const INVITE_TOKEN_RE = /^[0-9A-Za-z]{32}$/;

/** Invitation ids: 8 characters of [0-9a-z], as every id the API shows. */
const newInviteId = () => randomString(8, BASE36);
export const newInviteToken = () => randomString(32, BASE62);

const memberCount = sql<number>`(select count(*) from ${memberships} m where m.workspace_id = ${workspaces.id})`.mapWith(Number);

type Membership = { id: string; name: string | null; personal: boolean; role: Role };

/**
 * The caller's membership of a workspace: 404 NOT_FOUND when the caller is not a member (the
 * workspace and everything in it), 403 FORBIDDEN when `owner` is needed and the caller is a member.
 * `lock` holds the workspace row (workspace-lock.ts): `serial` for membership changes, which run one
 * at a time per workspace (two owners demoting each other cannot leave it without one) while links
 * and the rest are still created; `delete` for its deletion, which waits for those creates too.
 */
async function membershipOf(tx: DbOrTx, userId: string, workspaceId: string, need: Role | "any", lock?: "serial" | "delete"): Promise<Membership> {
  // Locked first, read after: in READ COMMITTED the next statement sees what the lock waited for.
  if (lock) await lockWorkspace(tx, workspaceId, lock);
  const [row] = await tx
    .select({ id: workspaces.id, name: workspaces.name, personal: workspaces.personal, role: memberships.role })
    .from(workspaces)
    .innerJoin(memberships, and(eq(memberships.workspaceId, workspaces.id), eq(memberships.userId, userId)))
    .where(eq(workspaces.id, workspaceId));
  if (!row) throw notFound();
  if (need === "owner" && row.role !== "owner") throw new AppError("FORBIDDEN");
  return row;
}

const ownerCount = async (tx: DbOrTx, workspaceId: string) =>
  (
    await tx
      .select({ n: sql<number>`count(*)`.mapWith(Number) })
      .from(memberships)
      .where(and(eq(memberships.workspaceId, workspaceId), eq(memberships.role, "owner")))
  )[0].n;

const toWorkspaceDto = (w: Membership & { members: number }, actor: Actor): WorkspaceDto => ({
  id: w.id,
  name: w.name,
  role: w.role,
  personal: w.personal,
  current: w.id === actor.workspaceId,
  members: w.members,
});

/** Personal first, then by name (case-insensitive), then id. */
export async function listWorkspaces(db: DbOrTx, actor: Actor): Promise<WorkspaceDto[]> {
  const rows = await db
    .select({ id: workspaces.id, name: workspaces.name, personal: workspaces.personal, role: memberships.role, members: memberCount })
    .from(memberships)
    .innerJoin(workspaces, eq(workspaces.id, memberships.workspaceId))
    .where(eq(memberships.userId, actor.userId));
  const byName = (a: (typeof rows)[number], b: (typeof rows)[number]) =>
    Number(b.personal) - Number(a.personal) || (a.name ?? "").localeCompare(b.name ?? "", "en", { sensitivity: "base" }) || (a.id < b.id ? -1 : 1);
  return rows.sort(byName).map((w) => toWorkspaceDto(w, actor));
}

async function getWorkspace(db: DbOrTx, actor: Actor, id: string): Promise<WorkspaceDto> {
  const [w] = await db
    .select({ id: workspaces.id, name: workspaces.name, personal: workspaces.personal, role: memberships.role, members: memberCount })
    .from(workspaces)
    .innerJoin(memberships, and(eq(memberships.workspaceId, workspaces.id), eq(memberships.userId, actor.userId)))
    .where(eq(workspaces.id, id));
  if (!w) throw notFound();
  return toWorkspaceDto(w, actor);
}

/** A shared workspace with the caller as its owner; the session stays where it is. */
export async function createWorkspace(app: Pick<AppServices, "db" | "limits">, actor: Actor, name: string): Promise<WorkspaceDto> {
  // Limited: each workspace is a place to invite from, and a row nobody may clean up for us.
  await consume(app.limits, "workspacesPerUser", actor.userId);
  const db = app.db;
  const now = Date.now();
  const id = newWorkspaceId();
  await db.transaction(async (tx) => {
    await tx.insert(workspaces).values({ id, name, personal: false, createdAt: now });
    await tx.insert(memberships).values({ workspaceId: id, userId: actor.userId, role: "owner", joinedAt: now });
  });
  return { id, name, role: "owner", personal: false, current: false, members: 1 };
}

/** This session acts in the workspace from its next request on (null stored: the personal one). */
export async function switchWorkspace(db: DbOrTx, actor: Actor, id: string): Promise<AccountDto> {
  const ws = await membershipOf(db, actor.userId, id, "any");
  const sessionId = actor.sessionId;
  if (!sessionId) throw new AppError("SESSION_REQUIRED");
  // This session only: every sign-in starts in the personal workspace.
  await db
    .update(sessions)
    .set({ workspaceId: ws.personal ? null : ws.id })
    .where(eq(sessions.id, sessionId));
  return getAccount(db, actor.userId, ws.id);
}

/**
 * Which of the caller's workspaces holds a link, linktree or domain: its id and name, so a page
 * opened from a teammate's address can switch there. 404 NOT_FOUND when none of them does (also
 * when it exists in a workspace the caller is not a member of: nothing is told about it).
 */
export async function locateObject(
  db: DbOrTx,
  actor: Actor,
  type: LocateType,
  id: string,
): Promise<{ workspace_id: string; name: string | null; personal: boolean }> {
  const table = type === "link" ? links : type === "linktree" ? linktrees : domains;
  const alive = type === "link" ? isNull(links.deletedAt) : undefined;
  const [row] = await db
    .select({ id: workspaces.id, name: workspaces.name, personal: workspaces.personal })
    .from(table)
    .innerJoin(workspaces, eq(workspaces.id, table.workspaceId))
    .innerJoin(memberships, and(eq(memberships.workspaceId, workspaces.id), eq(memberships.userId, actor.userId)))
    .where(and(eq(table.id, id), alive))
    .limit(1);
  if (!row) throw notFound();
  return { workspace_id: row.id, name: row.name, personal: row.personal };
}

export async function renameWorkspace(db: DbOrTx, actor: Actor, id: string, name: string): Promise<WorkspaceDto> {
  await membershipOf(db, actor.userId, id, "owner");
  await db.update(workspaces).set({ name }).where(eq(workspaces.id, id));
  return getWorkspace(db, actor, id);
}

/**
 * Deletes a shared workspace in one transaction: links and linktrees (slugs freed), domains,
 * invitations and memberships go, tokens bound to it are revoked, sessions in it fall back to their
 * personal workspace; click events stay. A personal workspace: 409 PERSONAL_WORKSPACE.
 */
export async function deleteWorkspace(
  app: Pick<AppServices, "db" | "invalidateCredentials" | "invalidateDomains" | "invalidateSlugs">,
  actor: Actor,
  id: string,
): Promise<void> {
  const purged = await app.db.transaction(async (tx) => {
    const ws = await membershipOf(tx, actor.userId, id, "owner", "delete");
    if (ws.personal) throw new AppError("PERSONAL_WORKSPACE");
    return purgeWorkspace(tx, id);
  });
  await dropCaches(app, purged);
}

const pendingInvite = (now: number) => and(isNull(workspaceInvites.acceptedAt), isNull(workspaceInvites.revokedAt), gt(workspaceInvites.expiresAt, now));

const toInviteDto = (r: typeof workspaceInvites.$inferSelect): InviteDto => ({
  id: r.id,
  email: r.email,
  role: r.role,
  created_at: r.createdAt,
  expires_at: r.expiresAt,
});

/** Members (by join date) and pending invitations (oldest first); any member may look. */
export async function listMembers(db: DbOrTx, actor: Actor, id: string): Promise<{ members: MemberDto[]; invites: InviteDto[] }> {
  await membershipOf(db, actor.userId, id, "any");
  const members = await db
    .select({ user_id: users.id, email: users.email, name: users.name, role: memberships.role, joined_at: memberships.joinedAt })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(eq(memberships.workspaceId, id))
    .orderBy(asc(memberships.joinedAt), asc(users.id));
  const invites = await db
    .select()
    .from(workspaceInvites)
    .where(and(eq(workspaceInvites.workspaceId, id), pendingInvite(Date.now())))
    .orderBy(asc(workspaceInvites.createdAt), asc(workspaceInvites.id));
  return { members, invites: invites.map(toInviteDto) };
}

export const acceptUrl = (app: Pick<AppServices, "config">, token: string) => `${base(app.config.appUrl)}/invites/${token}`;

/**
 * Invites an address (owners only). A pending invitation for the same address is replaced (the old
 * link stops working); an address that is a member already: 409 ALREADY_MEMBER; a personal
 * workspace cannot be shared: 409 PERSONAL_WORKSPACE. The mail goes out before the commit, so a
 * failed mail leaves no invitation behind.
 */
export async function createInvite(
  app: Pick<AppServices, "config" | "db" | "limits" | "mail">,
  actor: Actor,
  input: { id: string; email: string; role: Role },
): Promise<InviteDto> {
  const email = normalizeEmail(input.email);
  return app.db.transaction(async (tx) => {
    const ws = await membershipOf(tx, actor.userId, input.id, "owner", "serial");
    if (ws.personal) throw new AppError("PERSONAL_WORKSPACE");
    // Spent only by owners of a shared workspace: nobody else can make us send mail. Counted per
    // inviting account too, so making more workspaces sends no more mail.
    await consume(app.limits, "invitesPerUser", actor.userId);
    await consume(app.limits, "invitesPerWorkspace", ws.id);
    const [member] = await tx
      .select({ id: users.id })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(and(eq(memberships.workspaceId, ws.id), eq(users.email, email)));
    if (member) throw new AppError("ALREADY_MEMBER");
    const now = Date.now();
    await tx
      .update(workspaceInvites)
      .set({ revokedAt: now })
      .where(
        and(
          eq(workspaceInvites.workspaceId, ws.id),
          eq(workspaceInvites.email, email),
          isNull(workspaceInvites.acceptedAt),
          isNull(workspaceInvites.revokedAt),
        ),
      );
    const token = newInviteToken();
    const [row] = await tx
      .insert(workspaceInvites)
      .values({
        id: newInviteId(),
        workspaceId: ws.id,
        email,
        role: input.role,
        tokenHash: sha256(token),
        invitedBy: actor.userId,
        createdAt: now,
        expiresAt: now + INVITE_TTL_MS,
      })
      .returning();
    const [inviter] = await tx.select({ name: users.name, email: users.email }).from(users).where(eq(users.id, actor.userId));
    await app.mail.send(
      inviteMail(email, {
        workspace: ws.name ?? "a workspace",
        invitedBy: inviter?.name || inviter?.email || null,
        role: input.role,
        acceptUrl: acceptUrl(app, token),
      }),
    );
    return toInviteDto(row);
  });
}

/** Owners only; the mailed link stops working. 204 again for an invitation already revoked or used. */
export async function revokeInvite(db: DbOrTx, actor: Actor, id: string, inviteId: string): Promise<void> {
  await db.transaction(async (tx) => {
    await membershipOf(tx, actor.userId, id, "owner", "serial");
    const [invite] = await tx
      .select({ id: workspaceInvites.id })
      .from(workspaceInvites)
      .where(and(eq(workspaceInvites.id, inviteId), eq(workspaceInvites.workspaceId, id)));
    if (!invite) throw notFound();
    await tx
      .update(workspaceInvites)
      .set({ revokedAt: Date.now() })
      .where(and(eq(workspaceInvites.id, inviteId), isNull(workspaceInvites.acceptedAt), isNull(workspaceInvites.revokedAt)));
  });
}

/** The pending invitation of a mailed token, or null: unknown, used, revoked and expired are alike. */
async function pendingByToken(tx: DbOrTx, token: string, lock = false) {
  if (!INVITE_TOKEN_RE.test(token)) return null;
  const q = tx
    .select()
    .from(workspaceInvites)
    .where(and(eq(workspaceInvites.tokenHash, sha256(token)), pendingInvite(Date.now())));
  const [row] = lock ? await q.for("update") : await q;
  return row ?? null;
}

/** For the landing page: what the invitation is for. Unknown, used, revoked or expired: 404. */
export async function previewInvite(db: DbOrTx, token: string): Promise<InvitePreviewDto> {
  const invite = await pendingByToken(db, token);
  if (!invite) throw notFound();
  const [ws] = await db.select({ id: workspaces.id, name: workspaces.name }).from(workspaces).where(eq(workspaces.id, invite.workspaceId));
  if (!ws) throw notFound();
  const [inviter] = invite.invitedBy ? await db.select({ name: users.name, email: users.email }).from(users).where(eq(users.id, invite.invitedBy)) : [];
  return { workspace: ws, email: invite.email, role: invite.role, invited_by: inviter ? inviter.name || inviter.email : null, expires_at: invite.expiresAt };
}

/**
 * Joins the workspace with the invitation's role. The signed-in address must be the invited one
 * (case-insensitive), else 403 INVITE_EMAIL_MISMATCH; unknown, used, revoked or expired: 404.
 */
export async function acceptInvite(db: DbOrTx, actor: Actor, token: string): Promise<{ workspace: WorkspaceDto }> {
  const first = await pendingByToken(db, token);
  if (!first) throw notFound();
  const workspaceId = await db.transaction(async (tx) => {
    // The workspace row first, as every membership change locks it; then the invitation itself.
    const ws = await lockWorkspace(tx, first.workspaceId, "serial");
    const invite = ws ? await pendingByToken(tx, token, true) : null;
    if (!invite) throw notFound();
    const [me] = await tx.select({ email: users.email }).from(users).where(eq(users.id, actor.userId));
    if (!me || normalizeEmail(me.email) !== normalizeEmail(invite.email)) throw new AppError("INVITE_EMAIL_MISMATCH");
    try {
      await tx.transaction((sp) =>
        sp.insert(memberships).values({ workspaceId: invite.workspaceId, userId: actor.userId, role: invite.role, joinedAt: Date.now() }),
      );
    } catch (e) {
      if (isUniqueViolation(e)) throw new AppError("ALREADY_MEMBER");
      throw e;
    }
    await tx.update(workspaceInvites).set({ acceptedAt: Date.now() }).where(eq(workspaceInvites.id, invite.id));
    return invite.workspaceId;
  });
  return { workspace: await getWorkspace(db, actor, workspaceId) };
}

const memberRow = (tx: DbOrTx, workspaceId: string, userId: string) =>
  tx
    .select({ user_id: users.id, email: users.email, name: users.name, role: memberships.role, joined_at: memberships.joinedAt })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(and(eq(memberships.workspaceId, workspaceId), eq(memberships.userId, userId)));

/** Owners only. Demoting the last owner: 409 LAST_OWNER. The member's tokens act with the new role from the next request on. */
export async function setMemberRole(
  app: Pick<AppServices, "db" | "invalidateCredentials">,
  actor: Actor,
  input: { id: string; userId: string; role: Role },
): Promise<MemberDto> {
  const member = await app.db.transaction(async (tx) => {
    await membershipOf(tx, actor.userId, input.id, "owner", "serial");
    const [target] = await memberRow(tx, input.id, input.userId);
    if (!target) throw notFound();
    if (target.role === input.role) return target;
    if (target.role === "owner" && (await ownerCount(tx, input.id)) <= 1) throw new AppError("LAST_OWNER");
    await tx
      .update(memberships)
      .set({ role: input.role })
      .where(and(eq(memberships.workspaceId, input.id), eq(memberships.userId, input.userId)));
    return { ...target, role: input.role };
  });
  await app.invalidateCredentials();
  return member;
}

/**
 * An owner removes a member, or a member leaves. Leaving no owner: 409 LAST_OWNER. In the same
 * transaction the member's tokens bound to the workspace are revoked and their sessions in it go
 * back to their personal workspace; every request also checks membership (core/auth), and the
 * answer waits until every instance dropped its cached token look-ups, so this holds from the very
 * next request on every instance.
 */
/** The ids of a member's working tokens bound to the workspace: what removing the member revokes. */
export async function liveTokenIds(db: DbOrTx, workspaceId: string, userId: string): Promise<string[]> {
  const rows = await db
    .select({ id: apiTokens.id })
    .from(apiTokens)
    .where(and(eq(apiTokens.workspaceId, workspaceId), eq(apiTokens.userId, userId), isNull(apiTokens.revokedAt)));
  return rows.map((r) => r.id).sort();
}

export async function removeMember(app: Pick<AppServices, "db" | "invalidateCredentials">, actor: Actor, id: string, userId: string): Promise<void> {
  await app.db.transaction(async (tx) => {
    const self = userId === actor.userId;
    await membershipOf(tx, actor.userId, id, self ? "any" : "owner", "serial");
    const [target] = await memberRow(tx, id, userId);
    if (!target) throw notFound();
    if (target.role === "owner" && (await ownerCount(tx, id)) <= 1) throw new AppError("LAST_OWNER");
    await tx.delete(memberships).where(and(eq(memberships.workspaceId, id), eq(memberships.userId, userId)));
    await tx
      .update(apiTokens)
      .set({ revokedAt: Date.now() })
      .where(and(eq(apiTokens.workspaceId, id), eq(apiTokens.userId, userId), isNull(apiTokens.revokedAt)));
    await tx
      .update(sessions)
      .set({ workspaceId: null })
      .where(and(eq(sessions.workspaceId, id), eq(sessions.userId, userId)));
  });
  await app.invalidateCredentials();
}
