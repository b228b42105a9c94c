import { readFileSync } from "node:fs";
import path from "node:path";
import { asc, eq, sql, type SQL } from "drizzle-orm";
import { migrationsFolder, type Db, type DbOrTx } from "../../db/client";
import { apiTokens, users } from "../../db/schema";
import { CREDENTIALS_CHANGED, DOMAINS_CHANGED, LINK_CHANNEL, type AppServices } from "../core/services";
import { deleteAccount } from "../routers/account/account.service";
import { revokeToken } from "../routers/tokens/tokens.service";
import { tokenEvents, writeAuditEvents } from "../trpc/audit";

/**
 * A failure of an operator command with its own code (BACKUP_INVALID, DATABASE_NOT_EMPTY, …): the
 * command line prints it as `{"error": code, "message"}` and exits 1.
 */
export class OperatorError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Rows of a raw query on either driver (postgres.js answers an array, PGlite `{rows}`). */
export async function rowsOf<T>(db: DbOrTx, query: SQL): Promise<T[]> {
  const r = (await db.execute(query)) as unknown as { rows?: T[] } & T[];
  return r.rows ?? r;
}

/** The migrations this code knows, in order (drizzle's journal). */
export function knownMigrations(): { tag: string; when: number }[] {
  const journal = JSON.parse(readFileSync(path.join(migrationsFolder, "meta/_journal.json"), "utf8")) as { entries: { tag: string; when: number }[] };
  return journal.entries.map((e) => ({ tag: e.tag, when: e.when }));
}

/**
 * How far the database is migrated: the number of migrations applied and the newest one's time (the
 * migrator applies every journal entry newer than that). A database never migrated has none.
 */
export async function migrationLevel(db: DbOrTx): Promise<{ count: number; last: number | null }> {
  const [exists] = await rowsOf<{ t: string | null }>(db, sql`select to_regclass('drizzle.__drizzle_migrations')::text as t`);
  if (!exists?.t) return { count: 0, last: null };
  const [row] = await rowsOf<{ n: number | string; last: number | string | null }>(
    db,
    sql`select count(*)::int as n, max(created_at)::text as last from drizzle.__drizzle_migrations`,
  );
  return { count: Number(row.n), last: row.last === null ? null : Number(row.last) };
}

/** The journal's migrations this database has not applied yet, by name. */
export async function pendingMigrations(db: DbOrTx): Promise<string[]> {
  const { last } = await migrationLevel(db);
  return knownMigrations()
    .filter((m) => last === null || m.when > last)
    .map((m) => m.tag);
}

// ---- users and tokens ---------------------------------------------------------------------------

export async function listUsers(db: DbOrTx) {
  const rows = await db.select().from(users).orderBy(asc(users.createdAt), asc(users.id));
  return {
    users: rows.map((u) => ({
      id: u.id,
      email: u.email,
      name: u.name,
      plan: u.plan,
      is_admin: u.isAdmin,
      workspace_id: u.workspaceId,
      created_at: u.createdAt,
    })),
  };
}

/**
 * Tells every running instance, through the database, to drop what it cached: the command line has no
 * caches of its own, and in the server the notice reaches its own listener too.
 */
function notifyingServices(db: Db): Pick<AppServices, "db" | "invalidateSlugs" | "invalidateDomains" | "invalidateCredentials"> {
  const notify = async (payload: string) => void (await db.execute(sql`select pg_notify(${LINK_CHANNEL}, ${payload})`));
  return {
    db,
    invalidateSlugs: async (keys) => {
      for (const key of keys) await notify(key);
    },
    invalidateDomains: () => notify(DOMAINS_CHANGED),
    invalidateCredentials: () => notify(CREDENTIALS_CHANGED),
  };
}

/** Deletes a user as DELETE /account does (their links, tokens, sessions; a shared workspace they alone own refuses with LAST_OWNER). */
export async function deleteUser(db: Db, email: string): Promise<{ deleted: string; email: string }> {
  const [user] = await db.select({ id: users.id }).from(users).where(eq(users.email, email));
  if (!user) throw new OperatorError("NOT_FOUND", "no user with this e-mail");
  await deleteAccount(notifyingServices(db) as AppServices, user.id);
  return { deleted: user.id, email };
}

/** Revokes a token by its id, whoever owns it; revoking it again answers the first revocation's time. */
export async function revokeTokenById(db: Db, id: string): Promise<{ id: string; user_id: string; revoked_at: number }> {
  const [token] = await db.select({ userId: apiTokens.userId, revokedAt: apiTokens.revokedAt }).from(apiTokens).where(eq(apiTokens.id, id));
  if (!token) throw new OperatorError("NOT_FOUND", "no token with this id");
  if (token.revokedAt !== null) return { id, user_id: token.userId, revoked_at: token.revokedAt };
  // revokeToken waits for every instance to drop the token (migration 0007's trigger tells them too).
  await revokeToken(notifyingServices(db) as AppServices, token.userId, id);
  // Logged as the token's owner revoking it would be, once every instance has dropped it.
  await writeAuditEvents(db, { userId: token.userId }, await tokenEvents(db, id, "token.deleted", []));
  const [after] = await db.select({ revokedAt: apiTokens.revokedAt }).from(apiTokens).where(eq(apiTokens.id, id));
  return { id, user_id: token.userId, revoked_at: after.revokedAt! };
}
