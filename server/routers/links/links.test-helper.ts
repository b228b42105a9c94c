import { inArray } from "drizzle-orm";
import { links } from "../../../db/schema";
import { toPublicError } from "../../domain/errors";
import { clickRecord, recordClicks } from "../../test/click-records";
import type { TestApp, TestUser } from "../../test/harness";
import { insertLink } from "./links.service";

/** The error a call ends in as the HTTP layer answers it; `{ error: "ok" }` when it succeeded. */
export const errorOf = (p: Promise<unknown>) =>
  p.then(
    () => ({ error: "ok" }) as { error: string; fields?: Record<string, string[]> },
    (e) => toPublicError(e).body,
  );

export const uniq = () => Math.random().toString(36).slice(2, 8);

/** The links tests' shorthands on the file's test app; `t()` answers it once its beforeAll made it. */
export const linkTools = (t: () => TestApp) => ({
  /** `u`'s tRPC caller. */
  as: (u: TestUser) => t().caller(u.auth),
  /** A link straight into the table (any expiry, any creation time, several at one time), at a destination of its own. */
  put: (u: TestUser, over: Partial<typeof links.$inferInsert> = {}) =>
    insertLink(t().app.db, { workspaceId: u.workspaceId, url: `https://example.com/${uniq()}`, ...over }),
  rowsOf: (ids: string[]) => t().app.db.select().from(links).where(inArray(links.id, ids)),
  /** Stores `n` clicks on a link at `timestamp`, the way the recorder does (rows + hourly rollups). */
  clicksOn: (linkId: string, workspaceId: string, n: number, timestamp = Date.now() - 60_000) =>
    recordClicks(
      t().app,
      Array.from({ length: n }, () => clickRecord(linkId, workspaceId, timestamp)),
    ),
});
