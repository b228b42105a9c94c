import { and, eq, gt, isNull, lte, or, type SQL } from "drizzle-orm";
import { links } from "../../../db/schema";

/**
 * What "live" and "expired" mean for the links table, in SQL. A link is live until it is deleted
 * (its slug is then free). It is expired from the millisecond `expires_at` is reached, the same
 * instant the redirect host starts answering its expiry (the rule of `isExpired` in
 * server/domain/redirect-decision.ts, for a row already read).
 */

/** Not deleted: the link still holds its slug. */
export const liveLink: SQL = isNull(links.deletedAt);

/** Expired at `now`: an expiry was set and has been reached. */
export const expiredAt = (now: number): SQL => lte(links.expiresAt, now);

/** Not expired at `now`: no expiry, or one still ahead. */
export const unexpiredAt = (now: number): SQL => or(isNull(links.expiresAt), gt(links.expiresAt, now))!;

/** The workspace's live links of kind `link` (not linktree pages or items): what lists and exports show. */
export const workspaceLinks = (workspaceId: string): SQL => and(eq(links.workspaceId, workspaceId), eq(links.kind, "link"), liveLink)!;
