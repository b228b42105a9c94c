import { inLinkTransaction, softDeleteLink } from "../links";
import { and, desc, eq, isNull } from "drizzle-orm";
import type { DbOrTx } from "../../../db/client";
import { abuseReports, links } from "../../../db/schema";
import { AppError, notFound } from "../../domain/errors";
import { newId } from "../../lib/ids";
import { consume } from "../../lib/rate-limit";
import type { AppServices } from "../../core/services";
import type { RequestInfo } from "../../trpc/context";
import type { RuntimeCheck } from "../../trpc/init";
import type { CreateReportInput, ReportDto } from "./reports.schema";
import { parseReportedUrl, sameHost } from "./short-link-url";
import { lookupDomainByHost } from "../../core/lookup";
import { hostFromHeader } from "../../lib/hostnames";

const notAShortLinkMessage = (domain: string) => `must be a short link on ${domain} or on a verified branded domain, or its slug`;
const notAShortLink = (domain: string) => new AppError("NOT_A_SHORT_LINK", { fields: { url: [notAShortLinkMessage(domain)] } });

/**
 * The report URL's host check, on the raw body (runtimeChecks): a URL of the right shape whose host
 * is no domain served here fails alongside the body's other failures.
 */
export const reportUrlChecks: RuntimeCheck = async (app, _actor, raw) => {
  if (typeof raw.url !== "string") return [];
  const parsed = parseReportedUrl(raw.url);
  // A malformed URL is the schema's failure; only a well-formed one on an unknown host is added.
  if (!parsed || (await reportedNamespace(app, parsed.url)) !== undefined) return [];
  return [{ field: "url", message: notAShortLinkMessage(app.config.redirectDomain), code: "NOT_A_SHORT_LINK" }];
};

/**
 * Which namespace a reported link is in: null for the redirect domain (a bare slug too), the
 * domain's id for a verified branded domain, undefined when its host is no domain served here.
 */
async function reportedNamespace(app: Pick<AppServices, "config" | "db" | "domainCache">, url: URL | null): Promise<string | null | undefined> {
  if (url === null || sameHost(url, app.config.redirectDomain)) return null;
  const host = hostFromHeader(url.host);
  const domain = host ? await lookupDomainByHost(app, host) : null;
  return domain ? domain.id : undefined;
}

/**
 * Stores a report about a live short link. Unknown slugs answer the same `{ok: true}` and store
 * nothing, and both limits are spent before the lookup, so neither the body nor a 429 tells
 * whether a slug exists. The link itself is never touched.
 */
export async function createReport(
  app: Pick<AppServices, "config" | "db" | "domainCache" | "limits" | "metrics">,
  input: CreateReportInput,
  from: Pick<RequestInfo, "ip" | "headers">,
): Promise<{ ok: boolean }> {
  const parsed = parseReportedUrl(input.url);
  const domainId = parsed ? await reportedNamespace(app, parsed.url) : undefined;
  if (!parsed || domainId === undefined) throw notAShortLink(app.config.redirectDomain);
  const { slug } = parsed;
  await consume(app.limits, "reportPerAddress", from.ip);
  // Per slug in its namespace: a branded domain's `x` is not the redirect domain's `x`.
  await consume(app.limits, "reportPerSlug", domainId === null ? slug : `${domainId}/${slug}`);
  const [link] = await app.db
    .select({ id: links.id })
    .from(links)
    .where(and(eq(links.slug, slug), isNull(links.deletedAt), domainId === null ? isNull(links.domainId) : eq(links.domainId, domainId)))
    .limit(1);
  if (!link) return { ok: true };
  const ua = from.headers["user-agent"];
  await app.db.insert(abuseReports).values({
    id: newId(),
    linkId: link.id,
    slug,
    url: input.url,
    reason: input.reason,
    detail: input.detail ?? null,
    email: input.email ?? null,
    ip: from.ip || null,
    userAgent: typeof ua === "string" ? ua.slice(0, 1000) : null,
    createdAt: Date.now(),
  });
  app.metrics.reports.inc();
  return { ok: true };
}

const reportColumns = {
  id: abuseReports.id,
  linkId: abuseReports.linkId,
  slug: abuseReports.slug,
  url: abuseReports.url,
  reason: abuseReports.reason,
  detail: abuseReports.detail,
  email: abuseReports.email,
  ip: abuseReports.ip,
  userAgent: abuseReports.userAgent,
  status: abuseReports.status,
  createdAt: abuseReports.createdAt,
  reviewedAt: abuseReports.reviewedAt,
  reviewedBy: abuseReports.reviewedBy,
  linkUrl: links.url,
  linkWorkspaceId: links.workspaceId,
  linkKind: links.kind,
  linkDeletedAt: links.deletedAt,
};
function toReportDto(r: Awaited<ReturnType<typeof selectReports>>[number]): ReportDto {
  return {
    id: r.id,
    link_id: r.linkId,
    slug: r.slug,
    url: r.url,
    reason: r.reason,
    detail: r.detail,
    email: r.email,
    address: r.ip,
    user_agent: r.userAgent,
    status: r.status,
    created_at: r.createdAt,
    reviewed_at: r.reviewedAt,
    reviewed_by: r.reviewedBy,
    link:
      r.linkUrl !== null && r.linkWorkspaceId !== null && r.linkKind !== null
        ? { url: r.linkUrl, workspace_id: r.linkWorkspaceId, kind: r.linkKind, deleted_at: r.linkDeletedAt }
        : null,
  };
}

function selectReports(db: DbOrTx, where: { status?: ReportDto["status"]; id?: string }) {
  const conds = [];
  if (where.status) conds.push(eq(abuseReports.status, where.status));
  if (where.id) conds.push(eq(abuseReports.id, where.id));
  return db
    .select(reportColumns)
    .from(abuseReports)
    .leftJoin(links, eq(links.id, abuseReports.linkId))
    .where(conds.length ? and(...conds) : undefined)
    .orderBy(desc(abuseReports.createdAt), desc(abuseReports.id))
    .limit(500);
}

/** Newest first, at most 500, optionally one status (reviewers, the CLI). */
export async function listReports(db: DbOrTx, status?: ReportDto["status"]): Promise<ReportDto[]> {
  return (await selectReports(db, { status })).map(toReportDto);
}

async function getReport(db: DbOrTx, id: string): Promise<ReportDto> {
  const [row] = await selectReports(db, { id });
  if (!row) throw notFound();
  return toReportDto(row);
}

export async function dismissReport(app: Pick<AppServices, "db">, reviewerId: string, id: string): Promise<ReportDto> {
  const done = await app.db
    .update(abuseReports)
    .set({ status: "dismissed", reviewedAt: Date.now(), reviewedBy: reviewerId })
    .where(eq(abuseReports.id, id))
    .returning({ id: abuseReports.id });
  if (!done.length) throw notFound();
  return getReport(app.db, id);
}

/**
 * Soft-deletes the reported link with the same rule as DELETE /links/{id} (softDeleteLink),
 * whatever its workspace, and marks the link's open reports (this one included) link_deleted.
 */
export async function deleteReportedLink(app: Pick<AppServices, "db" | "invalidateSlugs">, reviewerId: string, id: string): Promise<ReportDto> {
  await inLinkTransaction(app, async (lt) => {
    const tx = lt.db;
    const [report] = await tx.select({ linkId: abuseReports.linkId }).from(abuseReports).where(eq(abuseReports.id, id)).for("update");
    if (!report) throw notFound();
    const [link] = await tx
      .select({ id: links.id, kind: links.kind, slug: links.slug, domainId: links.domainId, deletedAt: links.deletedAt })
      .from(links)
      .where(eq(links.id, report.linkId))
      .for("update");
    // A linktree's page or item link is refused (409 LINKTREE_LINK_NOT_EDITABLE), as through the API.
    if (link) await softDeleteLink(lt, link);
    const now = Date.now();
    const review = { status: "link_deleted" as const, reviewedAt: now, reviewedBy: reviewerId };
    await tx
      .update(abuseReports)
      .set(review)
      .where(and(eq(abuseReports.linkId, report.linkId), eq(abuseReports.status, "open")));
    await tx.update(abuseReports).set(review).where(eq(abuseReports.id, id));
  });
  return getReport(app.db, id);
}
