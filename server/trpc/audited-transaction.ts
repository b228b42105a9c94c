import type { Db, Tx } from "../../db/client";
import type { AppServices } from "../core/services";
import type { ReadRouting } from "../core/read-routing";

/**
 * One transaction around an audited mutation: the procedure gets an app whose database is that
 * transaction, so its change and the audit events written before the commit land together or not at
 * all. The services' own `db.transaction(...)` calls become savepoints inside it.
 *
 * Work that must only follow a commit (dropping redirect caches here and on other instances, NOTIFY)
 * is queued while the transaction is open and run once it has committed; after a rollback it is
 * dropped, as nothing it would announce happened. A read the procedure sends to the replica routing
 * runs in the transaction too: on PGlite's single connection a query outside it would wait for the
 * commit that is waiting for it.
 */
export type AuditedScope = { app: AppServices; tx: Tx };

/** Thrown inside the transaction to roll it back while handing `value` to the caller. */
class RollBack<T> {
  constructor(readonly value: T) {}
}

/** Ends the transaction without its changes; `inAuditedTransaction` answers `value`. */
export const rollBack = <T>(value: T): never => {
  throw new RollBack(value);
};

export async function inAuditedTransaction<T>(app: AppServices, work: (scope: AuditedScope) => Promise<T>): Promise<T> {
  const afterCommit: (() => Promise<unknown>)[] = [];
  let out: T;
  try {
    out = await app.db.transaction((tx) => work({ app: scopedApp(app, tx, afterCommit), tx }));
  } catch (e) {
    if (e instanceof RollBack) return e.value as T;
    throw e;
  }
  for (const job of afterCommit) await job();
  return out;
}

function scopedApp(app: AppServices, tx: Tx, afterCommit: (() => Promise<unknown>)[]): AppServices {
  const later =
    <A extends unknown[]>(fn: (...args: A) => Promise<unknown>) =>
    async (...args: A) => {
      afterCommit.push(() => fn(...args));
    };
  const db = tx as unknown as Db;
  // Created over the originals, so flags set later (draining) and methods bound to them still read through.
  const reads: ReadRouting = Object.assign(Object.create(app.reads) as ReadRouting, {
    run: <R>(_workspaceId: string | null, read: (d: Db) => Promise<R>) => read(db),
  });
  const database = Object.assign(Object.create(app.database) as AppServices["database"], {
    db,
    plannedOnce: db,
    notify: later((channel: string, payload: string) => app.database.notify(channel, payload)),
  });
  return Object.assign(Object.create(app) as AppServices, {
    db,
    reads,
    database,
    invalidateSlugs: later((slugs: string[]) => app.invalidateSlugs(slugs)),
    // A NOTIFY sent inside this transaction would only leave at its commit, after `sent` was called.
    announceSlugs: () => {
      throw new Error("announceSlugs is for writes outside a transaction");
    },
    invalidateDomains: later(() => app.invalidateDomains()),
    invalidateCredentials: later(() => app.invalidateCredentials()),
  });
}
