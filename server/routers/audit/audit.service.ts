import { and, asc, desc, eq, isNotNull, lt, or } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "../../../db/client";
import { auditEvents, memberships, users } from "../../../db/schema";
import { AppError, validation } from "../../domain/errors";
import type { Actor } from "../../trpc/context";
import { AUDIT_PAGE_DEFAULT, type AuditFilterChoicesDto, type AuditListDto, type AuditListInput } from "./audit.schema";

// The time is a millisecond timestamp: beyond 2^53 it is none we wrote (and no bigint parameter).
const cursorShape = z.tuple([z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER), z.string().regex(/^[0-9a-z]{1,32}$/)]);

const encodeCursor = (at: number, id: string) => Buffer.from(JSON.stringify([at, id])).toString("base64url");

function decodeCursor(cursor: string): [number, string] {
  const bad = () => validation({ cursor: ["must be the next_cursor of the previous page"] });
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw bad();
  try {
    return cursorShape.parse(JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")));
  } catch {
    throw bad();
  }
}

/** The workspace's audit log, newest first, a page at a time (keyset on at, id). Owners only. */
export async function listAuditEvents(db: Db, actor: Actor, input: AuditListInput): Promise<AuditListDto> {
  if (actor.role !== "owner") throw new AppError("FORBIDDEN");
  const limit = input.limit ?? AUDIT_PAGE_DEFAULT;
  const after = input.cursor === undefined ? null : decodeCursor(input.cursor);
  const rows = await db
    .select()
    .from(auditEvents)
    .where(
      and(
        eq(auditEvents.workspaceId, actor.workspaceId),
        input.actor === undefined ? undefined : eq(auditEvents.actorUserId, input.actor),
        input.action === undefined ? undefined : eq(auditEvents.action, input.action),
        input.target_type === undefined ? undefined : eq(auditEvents.targetType, input.target_type),
        input.target_id === undefined ? undefined : eq(auditEvents.targetId, input.target_id),
        after ? or(lt(auditEvents.at, after[0]), and(eq(auditEvents.at, after[0]), lt(auditEvents.id, after[1]))) : undefined,
      ),
    )
    .orderBy(desc(auditEvents.at), desc(auditEvents.id))
    .limit(limit + 1);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    events: page.map((r) => ({
      id: r.id,
      at: r.at,
      actor: { user_id: r.actorUserId, email: r.actorEmail, token_id: r.actorTokenId },
      action: r.action,
      target: { type: r.targetType, id: r.targetId },
      changes: (r.changes as string[] | Record<string, number> | null) ?? null,
    })),
    next_cursor: rows.length > limit && last ? encodeCursor(last.at, last.id) : null,
  };
}

/**
 * The choices of the dashboard's filters: the workspace's members and anyone the log names (people who
 * have left included), and the actions and object types it holds. Owners only.
 */
export async function auditFilterChoices(db: Db, actor: Actor): Promise<AuditFilterChoicesDto> {
  if (actor.role !== "owner") throw new AppError("FORBIDDEN");
  const ws = eq(auditEvents.workspaceId, actor.workspaceId);
  const [members, actors, actions, types] = await Promise.all([
    db
      .select({ id: users.id, email: users.email })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(eq(memberships.workspaceId, actor.workspaceId)),
    db
      .selectDistinct({ id: auditEvents.actorUserId, email: auditEvents.actorEmail })
      .from(auditEvents)
      .where(and(ws, isNotNull(auditEvents.actorUserId))),
    db.selectDistinct({ v: auditEvents.action }).from(auditEvents).where(ws).orderBy(asc(auditEvents.action)),
    db.selectDistinct({ v: auditEvents.targetType }).from(auditEvents).where(ws).orderBy(asc(auditEvents.targetType)),
  ]);
  const people = new Map<string, string | null>();
  for (const m of members) people.set(m.id, m.email);
  for (const a of actors) if (a.id && !people.has(a.id)) people.set(a.id, a.email);
  return {
    people: [...people].map(([user_id, email]) => ({ user_id, email })).sort((a, b) => (a.email ?? a.user_id).localeCompare(b.email ?? b.user_id)),
    actions: actions.map((r) => r.v),
    target_types: types.map((r) => r.v),
  };
}
