import { eq } from "drizzle-orm";
import { apiTokens, users } from "../../db/schema";
import type { AppServices } from "./services";
import type { Actor, RequestInfo, ResponseSink } from "../domain/types";
import { sha256 } from "../lib/crypto";
import { SESSION_COOKIE } from "../lib/lucia";
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

async function resolveToken(app: AppServices, header: string): Promise<AuthResult> {
  const m = BEARER_RE.exec(header);
  if (!m) return { actor: null, invalid: true };
  const [row] = await app.db
    .select({
      id: apiTokens.id,
      revokedAt: apiTokens.revokedAt,
      lastUsedAt: apiTokens.lastUsedAt,
      userId: users.id,
      workspaceId: users.workspaceId,
      plan: users.plan,
      isAdmin: users.isAdmin,
    })
    .from(apiTokens)
    .innerJoin(users, eq(users.id, apiTokens.userId))
    .where(eq(apiTokens.tokenHash, sha256(m[1])))
    .limit(1);
  if (!row || row.revokedAt !== null) return { actor: null, invalid: true };
  const now = Date.now();
  if (row.lastUsedAt === null || now - row.lastUsedAt >= LAST_USED_INTERVAL_MS) {
    await app.db.update(apiTokens).set({ lastUsedAt: now }).where(eq(apiTokens.id, row.id));
  }
  return {
    actor: { via: "token", tokenId: row.id, userId: row.userId, workspaceId: row.workspaceId, plan: row.plan, isAdmin: row.isAdmin },
    invalid: false,
  };
}

async function resolveSession(app: AppServices, sessionId: string, res: ResponseSink): Promise<AuthResult> {
  const { session, user } = await app.lucia.validateSession(sessionId);
  if (!session || !user) {
    res.appendHeader("Set-Cookie", app.lucia.createBlankSessionCookie().serialize());
    return { actor: null, invalid: false };
  }
  if (session.fresh) res.appendHeader("Set-Cookie", app.lucia.createSessionCookie(session.id).serialize());
  return {
    actor: { via: "session", sessionId: session.id, userId: user.id, workspaceId: user.workspaceId, plan: user.plan, isAdmin: user.isAdmin },
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
