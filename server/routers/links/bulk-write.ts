import type { AppServices } from "../../core/services";
import type { Actor } from "../../trpc/context";
import { writeAuditEvents } from "../../trpc/audit";
import { inLinkTransaction, type LinkRow, type LinkTx } from "./link-store";
import { bulkLinkEvents } from "./links.service";

/** How a bulk action is logged: each link it changed is an event, as a single edit or delete of it would be. */
export type BulkLog = { actor: Actor; action: "link.updated" | "link.deleted"; changes: string[] | ((before: LinkRow) => string[]) };

/**
 * Runs a bulk action's write (on chosen links or on every link a filter matches) in one transaction,
 * with the changed links' webhook events and audit events in it; the link store drops them from the
 * redirect cache once it commits. `write` answers the links it changed, as they were before.
 */
export async function bulkWrite(
  app: Pick<AppServices, "config" | "db" | "invalidateSlugs">,
  logged: BulkLog,
  write: (lt: LinkTx) => Promise<LinkRow[]>,
): Promise<{ updated: number }> {
  const rows = await inLinkTransaction(app, async (lt) => {
    const changed = await write(lt);
    await bulkLinkEvents(lt.db, app.config, changed);
    await logEach(lt, logged, changed);
    return changed;
  });
  return { updated: rows.length };
}

async function logEach(lt: LinkTx, logged: BulkLog, rows: LinkRow[]): Promise<void> {
  const { actor, action, changes } = logged;
  const events = rows.map((r) => ({
    workspaceId: r.workspaceId,
    action,
    targetType: "link",
    targetId: r.id,
    changes: typeof changes === "function" ? changes(r) : changes,
  }));
  // A link the action left as it was (no expiry to clear) has no change to log.
  await writeAuditEvents(
    lt.db,
    actor,
    events.filter((e) => action === "link.deleted" || e.changes.length > 0),
  );
}

/** What setting an expiry on a link changes; clearing it also clears a fallback URL the link had. */
export const expiryChanges =
  (expiresAt: number | null) =>
  (before: LinkRow): string[] => [
    ...(expiresAt === null && before.expirationUrl !== null ? ["expiration_url"] : []),
    ...(before.expiresAt !== expiresAt ? ["expires_at"] : []),
  ];
