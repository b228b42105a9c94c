import type { Role } from "../domain/types";
import { and, eq } from "drizzle-orm";
import { apiTokens, memberships, sessions, users } from "../../db/schema";
import type { AppServices, TokenEntry } from "./services";
import type { Actor, RequestInfo, ResponseSink } from "../domain/types";
import { grantedScopes } from "../domain/scopes";
import { sha256 } from "../lib/crypto";
import { SESSION_COOKIE } from "../lib/lucia";
import type { LruCache } from "../lib/lru";
import { CacheReader } from "./cache-reader";
import { parse as parseCookie } from "cookie";

export type AuthResult = { actor: Actor | null; /** a credential was presented and is not valid */ invalid: boolean };

const BEARER_RE = /^Bearer (tok_[0-9A-Za-z]{32})$/;
const LAST_USED_INTERVAL_MS = 5 * 60 * 1000;

/** One place decides token vs cookie (design example 2). */
export async function resolveAuth(app: AppServices, req: RequestInfo, res: ResponseSink): Promise<AuthResult> {
  const header = req.headers.authorization;
  if (header !== undefined) return resolveToken(app, String(header));
  const sessionId = readSessionCookie(req);
  if (!sessionId) return { actor: null, invalid: false };
  // A cookie on a state-changing request from another site is not honoured (CSRF), on top of SameSite.
  if (isCrossSiteWrite(app, req)) return { actor: null, invalid: false };
  return resolveSession(app, sessionId, res);
}

export function readSessionCookie(req: Pick<RequestInfo, "headers">): string | null {
  const raw = req.headers.cookie;
  if (!raw) return null;
  try {
    return parseCookie(raw)[SESSION_COOKIE] ?? null;
  } catch {
    return null;
  }
}

/** A cached look-up is trusted this long at most (a lost notification cannot keep a revoked token alive longer). */
const TOKEN_CACHE_MS = 60_000;

type CachedToken = TokenEntry & { scopes?: string[] | null };

/** One reader per token cache. Only valid tokens are kept (an unknown or revoked one is asked again). */
const tokenReaders = new WeakMap<object, CacheReader<CachedToken, CachedToken | null>>();
function tokenReader(cache: LruCache<TokenEntry>): CacheReader<CachedToken, CachedToken | null> {
  let reader = tokenReaders.get(cache);
  if (!reader) {
    reader = new CacheReader<CachedToken, CachedToken | null>({
      cache,
      fresh: (entry, now) => entry.until > now,
      valueOf: (entry) => entry,
      entryOf: (value) => value ?? undefined,
    });
    tokenReaders.set(cache, reader);
  }
  return reader;
}

/**
 * The token, its user and the user's membership of the token's workspace, in one query, cached per
 * instance: a revoked token, or one whose user has left (or been removed from) its workspace, answers
 * 401 from the next request on, on every instance, because every such change drops the cached look-ups
 * everywhere before it answers (services.invalidateCredentials, migration 0007's triggers). Only
 * valid tokens are cached. The look-up was a third of GET /links' database round trips.
 */
async function resolveToken(app: AppServices, header: string): Promise<AuthResult> {
  const m = BEARER_RE.exec(header);
  if (!m) return { actor: null, invalid: true };
  const hash = sha256(m[1]);
  const now = Date.now();
  const row = await tokenReader(app.tokenCache).read(
    hash,
    async (): Promise<CachedToken | null> => {
      const [found] = await app.db
        .select({
          id: apiTokens.id,
          revokedAt: apiTokens.revokedAt,
          lastUsedAt: apiTokens.lastUsedAt,
          workspaceId: apiTokens.workspaceId,
          userId: users.id,
          plan: users.plan,
          isAdmin: users.isAdmin,
          role: memberships.role,
          scopes: apiTokens.scopes,
        })
        .from(apiTokens)
        .innerJoin(users, eq(users.id, apiTokens.userId))
        .innerJoin(memberships, and(eq(memberships.workspaceId, apiTokens.workspaceId), eq(memberships.userId, apiTokens.userId)))
        .where(eq(apiTokens.tokenHash, hash))
        .limit(1);
      return found && found.revokedAt === null ? { ...found, until: now + TOKEN_CACHE_MS } : null;
    },
    now,
  );
  if (!row) return { actor: null, invalid: true };
  if (row.lastUsedAt === null || now - row.lastUsedAt >= LAST_USED_INTERVAL_MS) {
    row.lastUsedAt = now;
    await app.db.update(apiTokens).set({ lastUsedAt: now }).where(eq(apiTokens.id, row.id));
  }
  return {
    actor: {
      via: "token",
      tokenId: row.id,
      userId: row.userId,
      workspaceId: row.workspaceId,
      role: row.role,
      plan: row.plan,
      isAdmin: row.isAdmin,
      scopes: grantedScopes(row.scopes),
    },
    invalid: false,
  };
}

/** lib/lucia: sessions last 30 days and slide once half of that has passed. */
const SESSION_MS = 30 * 24 * 3600 * 1000;

/**
 * Lucia's validateSession, as one query that also reads the session's current workspace and the
 * user's membership of it. A session whose workspace the user no longer belongs to (left, removed,
 * workspace deleted) acts in the user's personal workspace from this request on, and forgets it.
 */
async function resolveSession(app: AppServices, sessionId: string, res: ResponseSink): Promise<AuthResult> {
  const [row] = await app.db
    .select({
      id: sessions.id,
      expiresAt: sessions.expiresAt,
      current: sessions.workspaceId,
      userId: users.id,
      personal: users.workspaceId,
      plan: users.plan,
      isAdmin: users.isAdmin,
      role: memberships.role,
    })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .leftJoin(memberships, and(eq(memberships.workspaceId, sessions.workspaceId), eq(memberships.userId, sessions.userId)))
    .where(eq(sessions.id, sessionId))
    .limit(1);
  const now = Date.now();
  if (!row || row.expiresAt.getTime() <= now) {
    if (row) await app.db.delete(sessions).where(eq(sessions.id, row.id));
    res.appendHeader("Set-Cookie", app.lucia.createBlankSessionCookie().serialize());
    return { actor: null, invalid: false };
  }
  if (row.expiresAt.getTime() - SESSION_MS / 2 <= now) {
    await app.db
      .update(sessions)
      .set({ expiresAt: new Date(now + SESSION_MS) })
      .where(eq(sessions.id, row.id));
    res.appendHeader("Set-Cookie", app.lucia.createSessionCookie(row.id).serialize());
  }
  // A personal workspace has exactly one member, its owner.
  let workspaceId = row.personal;
  let role: Role = "owner";
  if (row.current !== null && row.role !== null) {
    workspaceId = row.current;
    role = row.role;
  } else if (row.current !== null) {
    // No longer a member there: back in the personal workspace from this request on.
    await app.db
      .update(sessions)
      .set({ workspaceId: null })
      .where(and(eq(sessions.id, row.id), eq(sessions.workspaceId, row.current)));
  }
  return {
    actor: { via: "session", sessionId: row.id, userId: row.userId, workspaceId, role, plan: row.plan, isAdmin: row.isAdmin },
    invalid: false,
  };
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export function isCrossSiteWrite(app: AppServices, req: RequestInfo): boolean {
  if (SAFE_METHODS.has(req.method.toUpperCase())) return false;
  if (req.headers["sec-fetch-site"] === "cross-site") return true;
  const origin = req.headers.origin;
  if (!origin) return false; // not a browser (curl, scripts); browsers send Origin on every cross-origin write
  const allowed = new Set([app.config.appUrl.origin, app.config.apiUrl.origin]);
  return !allowed.has(String(origin));
}
