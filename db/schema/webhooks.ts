import { sql } from "drizzle-orm";
import { bigint, boolean, index, integer, jsonb, pgTable, text } from "drizzle-orm/pg-core";
import { workspaces } from "./accounts";

const ms = (name: string) => bigint(name, { mode: "number" });

export const WEBHOOK_EVENTS = ["link.created", "link.updated", "link.deleted", "link.clicked", "link.broken", "linktree.viewed"] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** A workspace's subscription of an HTTP endpoint to some of its events. */
export const webhooks = pgTable(
  "webhooks",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    events: text("events").array().notNull(),
    active: boolean("active").notNull().default(true),
    /** `whsec_` + base64 of 24 random bytes; answered once, at creation. */
    secret: text("secret").notNull(),
    disabledReason: text("disabled_reason"),
    createdAt: ms("created_at").notNull(),
    updatedAt: ms("updated_at").notNull(),
  },
  (t) => [index("webhooks_workspace_idx").on(t.workspaceId, t.createdAt)],
);

/**
 * The outbox: one row per event and endpoint, written in the transaction of the change it tells
 * of (clicks: of their storage), delivered at least once by whichever instance holds its lease.
 */
export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    webhookId: text("webhook_id")
      .notNull()
      .references(() => webhooks.id, { onDelete: "cascade" }),
    workspaceId: text("workspace_id").notNull(),
    event: text("event").notNull(),
    /** The whole `{type, timestamp, data}` body, fixed when the event happened: every retry sends the same bytes. `link.clicked`: only the click's key `{link_id, ts}`, its body built from the (unchanging) click when sent. */
    payload: jsonb("payload").notNull(),
    status: text("status", { enum: ["pending", "delivered", "failed"] })
      .notNull()
      .default("pending"),
    attempts: integer("attempts").notNull().default(0),
    responseStatus: integer("response_status"),
    lastAttemptAt: ms("last_attempt_at"),
    nextAttemptAt: ms("next_attempt_at"),
    leaseUntil: ms("lease_until"),
    createdAt: ms("created_at").notNull(),
  },
  (t) => [
    index("webhook_deliveries_due_idx")
      .on(t.nextAttemptAt)
      .where(sql`${t.status} = 'pending'`),
    index("webhook_deliveries_webhook_idx").on(t.webhookId, t.createdAt.desc()),
  ],
);
