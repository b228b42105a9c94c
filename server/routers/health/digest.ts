import { and, asc, count, eq, gt, isNull, lt, lte, or, sql } from "drizzle-orm";
import { healthDigests, linkHealth, links, memberships, users, workspaces } from "../../../db/schema";
import { base } from "../../config";
import type { AppServices } from "../../core/services";
import { healthDigestMail, type BrokenLinkLine } from "../../lib/health-digest-mail";

/**
 * A workspace's digest waits until its first unreported break is this old, so the links one check
 * run finds broken arrive in one mail rather than the first of them alone.
 */
export const DIGEST_GATHER_MS = 3600_000;
/** Links listed in one mail; the rest are counted. */
const LISTED = 50;

/** The UTC day of `ms`, `YYYY-MM-DD`: a workspace gets at most one digest per such day. */
export const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Live links of a workspace that turned broken after `after` and up to `now`, and are still broken. */
const newlyBroken = (workspaceId: string, after: number, now: number) =>
  and(
    eq(linkHealth.workspaceId, workspaceId),
    eq(linkHealth.status, "broken"),
    gt(linkHealth.brokenAt, after),
    lte(linkHealth.brokenAt, now),
    isNull(links.deletedAt),
    isNull(links.archivedAt),
  );

/** Workspaces with a break not yet reported, gathered long enough, and no digest yet today. */
async function dueWorkspaces(app: Pick<AppServices, "db">, now: number): Promise<string[]> {
  const rows = await app.db
    .select({ workspaceId: linkHealth.workspaceId })
    .from(linkHealth)
    .innerJoin(links, eq(links.id, linkHealth.linkId))
    .leftJoin(healthDigests, eq(healthDigests.workspaceId, linkHealth.workspaceId))
    .where(
      and(
        eq(linkHealth.status, "broken"),
        gt(linkHealth.brokenAt, sql`coalesce(${healthDigests.reportedUntil}, 0)`),
        lte(linkHealth.brokenAt, now),
        isNull(links.deletedAt),
        isNull(links.archivedAt),
        or(isNull(healthDigests.sentDay), lt(healthDigests.sentDay, dayOf(now))),
      ),
    )
    .groupBy(linkHealth.workspaceId)
    .having(lte(sql`min(${linkHealth.brokenAt})`, now - DIGEST_GATHER_MS));
  return rows.map((r) => r.workspaceId);
}

/**
 * One workspace's digest, in one transaction holding its digest row (FOR UPDATE SKIP LOCKED: an
 * instance that finds the row taken leaves it to the one holding it, and afterwards sees today's
 * mark). The mail goes out before the mark commits: if the process dies in between, the mark is
 * rolled back and the digest is sent again after the restart rather than lost. Returns the mails sent.
 */
async function sendDigest(app: Pick<AppServices, "config" | "db" | "log" | "mail">, workspaceId: string, now: number): Promise<number> {
  const today = dayOf(now);
  return app.db.transaction(async (tx) => {
    await tx.insert(healthDigests).values({ workspaceId, sentDay: "", reportedUntil: 0 }).onConflictDoNothing();
    const [digest] = await tx.select().from(healthDigests).where(eq(healthDigests.workspaceId, workspaceId)).for("update", { skipLocked: true });
    if (!digest || digest.sentDay >= today) return 0;
    const where = newlyBroken(workspaceId, digest.reportedUntil, now);
    const broken = await tx
      .select({ id: links.id, slug: links.slug, title: links.title, url: links.url, destinations: linkHealth.destinations, error: linkHealth.error })
      .from(linkHealth)
      .innerJoin(links, eq(links.id, linkHealth.linkId))
      .where(where)
      .orderBy(asc(linkHealth.brokenAt), asc(links.id))
      .limit(LISTED);
    if (!broken.length) return 0;
    const [{ n }] = await tx.select({ n: count() }).from(linkHealth).innerJoin(links, eq(links.id, linkHealth.linkId)).where(where);
    const owners = await tx
      .select({ email: users.email, workspace: workspaces.name, personal: workspaces.personal })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .innerJoin(workspaces, eq(workspaces.id, memberships.workspaceId))
      .where(and(eq(memberships.workspaceId, workspaceId), eq(memberships.role, "owner")));
    const appUrl = base(app.config.appUrl);
    const lines: BrokenLinkLine[] = broken.map((l) => {
      const failed = (l.destinations ?? []).find((d) => d.status === "failed");
      return {
        label: l.title ?? l.slug,
        destination: failed?.url ?? l.url,
        reason: failed?.error ?? l.error,
        pageUrl: `${appUrl}/links/${l.id}`,
      };
    });
    let sent = 0;
    for (const o of owners) {
      const mail = healthDigestMail(o.email, {
        workspace: o.workspace ?? (o.personal ? "Personal" : "your workspace"),
        links: lines,
        more: n - lines.length,
        linksUrl: `${appUrl}/links`,
      });
      await app.mail.send(mail).then(
        () => sent++,
        (e: unknown) => app.log.error({ err: e, workspace: workspaceId }, "broken-links digest mail failed"),
      );
    }
    // Nobody reached (the mail server is down): try again at a later round instead of marking the day.
    if (owners.length && !sent) throw new Error("broken-links digest: no mail could be sent");
    await tx.update(healthDigests).set({ sentDay: today, reportedUntil: now }).where(eq(healthDigests.workspaceId, workspaceId));
    return sent;
  });
}

/**
 * The daily broken-links digests due now, each workspace's on its own (one failing does not hold
 * back the others). Run by the health scheduler; safe to run on every instance at once.
 */
export async function sendHealthDigests(app: Pick<AppServices, "config" | "db" | "log" | "mail">, now = Date.now()): Promise<number> {
  let sent = 0;
  for (const workspaceId of await dueWorkspaces(app, now)) {
    try {
      sent += await sendDigest(app, workspaceId, now);
    } catch (e) {
      app.log.error({ err: e, workspace: workspaceId }, "broken-links digest failed");
    }
  }
  return sent;
}
