import { and, eq, isNull } from "drizzle-orm";
import { domains, links } from "../../../db/schema";
import { AppError } from "../../domain/errors";
import type { AppServices } from "../../core/services";
import type { Actor } from "../../trpc/context";
import { bulkWrite, softDeleteLink } from "../links";
import { findOwnDomain } from "./domains.service";

/**
 * Removes a domain; refused with 409 DOMAIN_IN_USE while a live link (not deleted, not archived) is
 * on it. Archived links on it go with it, each deleted as DELETE /links/{id} deletes (their clicks
 * stay; webhooks and the audit log hear of each), in the one transaction. A module of its own: it
 * writes links through the link store, which itself reads domains.
 */
export async function deleteDomain(app: Pick<AppServices, "config" | "db" | "invalidateSlugs" | "invalidateDomains">, actor: Actor, id: string): Promise<void> {
  await bulkWrite(app, { actor, action: "link.deleted", changes: [] }, async (lt) => {
    // The row lock makes a link being created on this domain (which takes a share lock) wait or lose.
    const row = await findOwnDomain(lt.db, actor, id, "update");
    const onIt = await lt.db
      .select()
      .from(links)
      .where(and(eq(links.domainId, row.id), isNull(links.deletedAt)));
    // A linktree's page or button links are in use whatever their state: the linktree goes first.
    if (onIt.some((l) => l.archivedAt === null || l.kind !== "link")) throw new AppError("DOMAIN_IN_USE", { message: `${row.name} has live links` });
    for (const l of onIt) await softDeleteLink(lt, l);
    await lt.db.delete(domains).where(eq(domains.id, row.id));
    return onIt;
  });
  await app.invalidateDomains();
}
