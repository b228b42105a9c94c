import { bigint, index, integer, json, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";

const ms = (name: string) => bigint(name, { mode: "number" });

/**
 * Idempotency keys of creating requests. A row is inserted as `running` before the request runs, so a
 * second instance sees it too; the answer is stored when the request ends. Rows older than a day are
 * expired, and running rows whose lease ran out are abandoned (their instance stopped): either may be taken over.
 */
export const idempotencyKeys = pgTable(
  "idempotency_keys",
  {
    id: text("id").primaryKey(),
    /** Who sent it: `w:<workspace id>`, or `a:<client address>` without a credential. */
    scope: text("scope").notNull(),
    key: text("key").notNull(),
    /** SHA-256 of the procedure and its input: the same key with another body is refused. */
    fingerprint: text("fingerprint").notNull(),
    state: text("state", { enum: ["running", "done"] }).notNull(),
    /** The stored answer (state `done`): its HTTP status and body, as json (not jsonb), so a replay keeps the order of its members. */
    status: integer("status"),
    body: json("body"),
    createdAt: ms("created_at").notNull(),
    /** Until when a running row's instance holds it. */
    leaseUntil: ms("lease_until").notNull(),
  },
  (t) => [uniqueIndex("idempotency_keys_scope_key_idx").on(t.scope, t.key), index("idempotency_keys_created_idx").on(t.createdAt)],
);
