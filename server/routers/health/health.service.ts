import { and, eq, inArray } from "drizzle-orm";
import { linkHealth, links } from "../../../db/schema";
import type { DbOrTx } from "../../../db/client";
import { notFound } from "../../domain/errors";
import type { AppServices } from "../../core/services";
import { enqueueWebhookEvent } from "../../core/webhook-outbox";
import { prober as sharedProber, type ProbeResult, type Prober } from "../../core/health-probe";
import { consume } from "../../lib/rate-limit";
import type { Actor } from "../../trpc/context";
import { findOwnLink, linkDtos, type LinkRow } from "../links";
import type { HealthDto, HealthStatus } from "./health.schema";

/** A link is checked at most this often by the scheduler. */
export const CHECK_INTERVAL_MS = 24 * 3600_000;

type HealthRow = typeof linkHealth.$inferSelect;
type StoredDestination = NonNullable<HealthRow["destinations"]>[number];

/** Every destination a visit can be sent to: `url`, each targeting URL and each variant, once each, in that order. */
export function destinationsOf(link: Pick<LinkRow, "url" | "targeting" | "variants">): string[] {
  const t = link.targeting;
  const all = [link.url, t?.ios, t?.android, ...Object.values(t?.geo ?? {}), ...Object.values(t?.languages ?? {}), ...(link.variants ?? []).map((v) => v.url)];
  return [...new Set(all.filter((u): u is string => typeof u === "string" && u.length > 0))];
}

const NEVER_CHECKED: HealthDto = { status: "unknown", checked_at: null, http_status: null, error: null, destinations: [] };

function toHealthDto(row: HealthRow | undefined): HealthDto {
  if (!row) return NEVER_CHECKED;
  return {
    status: row.status,
    checked_at: row.checkedAt,
    http_status: row.httpStatus,
    error: row.error,
    destinations: (row.destinations ?? []).map((d) => ({ url: d.url, status: d.status, http_status: d.http_status })),
  };
}

/**
 * The link's status after a check, from the results and the previous check. Every destination ok:
 * `ok`. A destination that failed this time and the time before: `broken`. Anything else (one
 * failure, or a destination not checked) leaves the status as it was.
 */
export function nextStatus(previous: HealthStatus, previousDestinations: StoredDestination[], results: ProbeResult[]): HealthStatus {
  if (results.length && results.every((r) => r.status === "ok")) return "ok";
  const failedBefore = new Set(previousDestinations.filter((d) => d.status === "failed").map((d) => d.url));
  if (results.some((r) => r.status === "failed" && failedBefore.has(r.url))) return "broken";
  return previous;
}

/** The headline of a check: the first failed destination, else the first not checked, else the main URL. */
function headline(results: ProbeResult[]): { httpStatus: number | null; error: string | null } {
  const r = results.find((d) => d.status === "failed") ?? results.find((d) => d.status === "unknown") ?? results[0];
  return { httpStatus: r?.http_status ?? null, error: r?.error ?? null };
}

/**
 * Stores a check's results and the link's new status in one transaction; a link that turns broken
 * gets its `link.broken` webhook event in that same transaction, so the event exists exactly when
 * the status does. The next scheduled check is a day later, and the lease is given back.
 */
export async function recordCheck(app: Pick<AppServices, "config" | "db">, link: LinkRow, results: ProbeResult[], now = Date.now()): Promise<HealthDto> {
  return app.db.transaction(async (tx) => {
    const locked = () => tx.select().from(linkHealth).where(eq(linkHealth.linkId, link.id)).for("update");
    // Scheduled checks always find their row; a check on request of a link not swept yet makes it.
    let [previous] = await locked();
    if (!previous) {
      await tx.insert(linkHealth).values({ linkId: link.id, workspaceId: link.workspaceId, status: "unknown", nextCheckAt: now }).onConflictDoNothing();
      [previous] = await locked();
    }
    const status = nextStatus(previous.status, previous.destinations ?? [], results);
    const { httpStatus, error } = headline(results);
    const destinations = results.map((r) => ({ url: r.url, status: r.status, http_status: r.http_status, error: r.error }));
    const [row] = await tx
      .update(linkHealth)
      .set({
        workspaceId: link.workspaceId,
        status,
        checkedAt: now,
        httpStatus,
        error,
        // The column's type names ok and failed; a destination not checked is stored as "unknown" too.
        destinations: destinations as StoredDestination[],
        failures: results.some((r) => r.status === "failed") ? previous.failures + 1 : 0,
        nextCheckAt: now + CHECK_INTERVAL_MS,
        leaseUntil: null,
        // The daily digest lists the links that turned broken since its last mail.
        brokenAt: status !== "broken" ? null : previous.status === "broken" ? previous.brokenAt : now,
      })
      .where(eq(linkHealth.linkId, link.id))
      .returning();
    if (status === "broken" && previous.status !== "broken") {
      // The link as it is now (it may have been edited while its destinations were being checked).
      const [current] = await tx.select().from(links).where(eq(links.id, link.id));
      const [dto] = await linkDtos(tx, app.config, [current ?? link]);
      await enqueueWebhookEvent(tx, link.workspaceId, "link.broken", dto, now);
    }
    return toHealthDto(row);
  });
}

/** Checks every destination of `link` now (the prober's limits apply) and records the result. `urgent`: someone waits for it. */
export async function checkLink(app: Pick<AppServices, "config" | "db">, link: LinkRow, prober: Prober = sharedProber, urgent = false): Promise<HealthDto> {
  const allowPrivate = Boolean(app.config.webhookAllowPrivate);
  const results = await Promise.all(destinationsOf(link).map((url) => prober.probe(url, allowPrivate, urgent)));
  return recordCheck(app, link, results);
}

async function healthRow(db: DbOrTx, linkId: string): Promise<HealthRow | undefined> {
  const [row] = await db.select().from(linkHealth).where(eq(linkHealth.linkId, linkId));
  return row;
}

/** `GET /links/{id}/health`: the last check of one of the workspace's links (deleted ones included, as GET /links/{id}). */
export async function getLinkHealth(app: Pick<AppServices, "db">, actor: Actor, id: string): Promise<HealthDto> {
  const link = await findOwnLink(app.db, actor, id);
  return toHealthDto(await healthRow(app.db, link.id));
}

/** `POST /links/{id}/health/check`: a check now, at most 10 a minute per workspace. A deleted link is not checked (404). */
export async function checkLinkNow(
  app: Pick<AppServices, "config" | "db" | "limits">,
  actor: Actor,
  id: string,
  prober: Prober = sharedProber,
): Promise<HealthDto> {
  const link = await findOwnLink(app.db, actor, id);
  if (link.deletedAt !== null) throw notFound();
  await consume(app.limits, "healthCheckPerWorkspace", actor.workspaceId);
  return checkLink(app, link, prober, true);
}

/** Which of `ids` (links of the workspace) are broken: the dashboard's badges. */
export async function brokenAmong(app: Pick<AppServices, "db">, actor: Actor, ids: string[]): Promise<string[]> {
  if (!ids.length) return [];
  const rows = await app.db
    .select({ id: linkHealth.linkId })
    .from(linkHealth)
    .where(and(eq(linkHealth.workspaceId, actor.workspaceId), eq(linkHealth.status, "broken"), inArray(linkHealth.linkId, ids)));
  return rows.map((r) => r.id);
}
