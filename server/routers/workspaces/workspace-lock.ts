import { eq } from "drizzle-orm";
import type { DbOrTx } from "../../../db/client";
import { workspaces } from "../../../db/schema";
import { notFound } from "../../domain/errors";

/**
 * How a transaction holds its workspace's row until it ends:
 * - `create`: anything made in the workspace (links, linktrees, items, domains, import batches).
 *   Creates do not wait for one another, nor for a rename; a deletion waits for them, or they for it.
 * - `serial`: one at a time per workspace (limits counted in the workspace, membership changes),
 *   still without holding up creates.
 * - `delete`: the deletion of the workspace, which waits for every create in progress and makes
 *   later ones find the workspace gone.
 * `create` is the lock the foreign keys to `workspaces` take for a single insert statement too.
 */
const STRENGTH = { create: "key share", serial: "no key update", delete: "update" } as const;
export type WorkspaceLock = keyof typeof STRENGTH;

/**
 * Locks the workspace row for the rest of the transaction; false when the workspace is gone
 * (deleted meanwhile). Take it before any other row lock of the workspace (a domain, a linktree,
 * an import job): deletion locks the workspace first and the others after, so the same order
 * here keeps the two from waiting for each other for ever.
 */
export async function lockWorkspace(tx: DbOrTx, workspaceId: string, lock: WorkspaceLock = "create"): Promise<boolean> {
  const [row] = await tx.select({ id: workspaces.id }).from(workspaces).where(eq(workspaces.id, workspaceId)).for(STRENGTH[lock]);
  return row !== undefined;
}

/** `lockWorkspace`, with 404 NOT_FOUND when the workspace is gone. */
export async function lockWorkspaceOrNotFound(tx: DbOrTx, workspaceId: string, lock: WorkspaceLock = "create"): Promise<void> {
  if (!(await lockWorkspace(tx, workspaceId, lock))) throw notFound();
}
