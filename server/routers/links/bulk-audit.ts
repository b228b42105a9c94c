import type { Actor } from "../../trpc/context";
import { writeAuditEvents } from "../../trpc/audit";
import type { LinkRow, LinkTx } from "./link-store";

/** How a bulk action is logged: each link it changed is an event, as a single edit or delete of it would be. */
export type BulkLog = { actor: Actor; action: "link.updated" | "link.deleted"; changes: string[] | ((before: LinkRow) => string[]) };

/** The events of the links a bulk action changed (`rows` as they were before it), in its transaction. */
export async function logEach(lt: LinkTx, logged: BulkLog, rows: LinkRow[]): Promise<void> {
  const { actor, action, changes } = logged;
  await writeAuditEvents(
    lt.db,
    actor,
    rows.map((r) => ({
      workspaceId: r.workspaceId,
      action,
      targetType: "link",
      targetId: r.id,
      changes: typeof changes === "function" ? changes(r) : changes,
    })),
  );
}

/** What setting an expiry on a link changes; clearing it also clears a fallback URL the link had. */
export const expiryChanges =
  (expiresAt: number | null) =>
  (before: LinkRow): string[] => [
    ...(expiresAt === null && before.expirationUrl !== null ? ["expiration_url"] : []),
    ...(before.expiresAt !== expiresAt ? ["expires_at"] : []),
  ];
