import { and, desc, eq, gt, like } from "drizzle-orm";
import { sessions } from "../../../db/schema";
import { notFound } from "../../domain/errors";
import { readEdgeHeaders } from "../../lib/edge";
import { parseUserAgent } from "../../lib/user-agent";
import type { AppServices } from "../../core/services";
import type { Actor, Exchange, RequestInfo } from "../../trpc/context";
import type { SessionDto } from "./sessions.schema";

/** The Session record's `id`: the last six characters of the session token, never the token itself. */
export const publicSessionId = (sessionId: string) => sessionId.slice(-6);

const header = (req: RequestInfo, name: string) => {
  const v = req.headers[name];
  return (Array.isArray(v) ? v[0] : v) || null;
};

/** Device, browser and platform from the edge's device hints (when trusted) or the User-Agent; place from the edge. */
export function describeClient(app: Pick<AppServices, "config">, req: RequestInfo) {
  const edge = readEdgeHeaders(req.headers, app.config.edgeHeaders);
  const ua = header(req, "user-agent");
  const parsed = ua ? parseUserAgent(ua) : null;
  return {
    device: edge.device ?? parsed?.device ?? null,
    browser: parsed?.browser ?? null,
    platform: parsed?.platform ?? null,
    country: edge.country,
    regionName: edge.regionName,
    city: edge.city,
  };
}

/**
 * A lucia session (30 days, sliding) for a signed-in user, in their personal workspace (as every
 * sign-in starts); sets the cookie on the answer.
 */
export async function startLoginSession(
  app: Pick<AppServices, "db" | "config" | "lucia">,
  userId: string,
  exchange: Exchange,
): Promise<{ id: string; workspaceId: string | null }> {
  const session = await app.lucia.createSession(userId, { createdAt: Date.now(), ...describeClient(app, exchange.req) });
  exchange.res.appendHeader("Set-Cookie", app.lucia.createSessionCookie(session.id).serialize());
  return { id: session.id, workspaceId: null };
}

export async function listSessions(app: Pick<AppServices, "db">, actor: Actor): Promise<SessionDto[]> {
  const rows = await app.db
    .select({
      id: sessions.id,
      createdAt: sessions.createdAt,
      expiresAt: sessions.expiresAt,
      device: sessions.device,
      browser: sessions.browser,
      platform: sessions.platform,
      country: sessions.country,
      regionName: sessions.regionName,
      city: sessions.city,
    })
    .from(sessions)
    .where(and(eq(sessions.userId, actor.userId), gt(sessions.expiresAt, new Date())))
    .orderBy(desc(sessions.createdAt), desc(sessions.id));
  return rows.map((r) => ({
    id: publicSessionId(r.id),
    created_at: r.createdAt,
    expires_at: r.expiresAt.getTime(),
    current: r.id === actor.sessionId,
    device: (r.device as SessionDto["device"]) ?? null,
    browser: r.browser,
    platform: r.platform,
    country: r.country,
    region_name: r.regionName,
    city: r.city,
  }));
}

/** Ends the user's session(s) whose token ends with `id` (the caller's own: its cookie is cleared); another user's session is not found. */
export async function revokeSession(app: Pick<AppServices, "db" | "lucia">, actor: Actor, id: string, exchange: Pick<Exchange, "res">): Promise<void> {
  if (!/^[0-9a-z]{6}$/.test(id)) throw notFound();
  const ended = await app.db
    .delete(sessions)
    .where(and(eq(sessions.userId, actor.userId), like(sessions.id, `%${id}`)))
    .returning({ id: sessions.id });
  if (!ended.length) throw notFound();
  if (ended.some((s) => s.id === actor.sessionId)) exchange.res.appendHeader("Set-Cookie", app.lucia.createBlankSessionCookie().serialize());
}
