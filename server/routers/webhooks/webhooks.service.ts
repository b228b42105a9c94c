import { randomBytes } from "node:crypto";
import { and, asc, count, desc, eq } from "drizzle-orm";
import type { DbOrTx } from "../../../db/client";
import { webhookDeliveries, webhooks, type WebhookEvent } from "../../../db/schema";
import { AppError, notFound, validation } from "../../domain/errors";
import { newLinkId } from "../../lib/ids";
import type { FieldIssue } from "../../lib/input";
import type { AppServices } from "../../core/services";
import { endpointProblems } from "../../core/outgoing-address-guard";
import { enqueueWebhookDelivery, giveUpPendingDeliveries } from "../../core/webhook-outbox";
import { kickWebhookWorkers } from "../../core/webhook-worker";
import type { Actor } from "../../trpc/context";
import type { RuntimeCheck } from "../../trpc/init";
import { lockWorkspaceOrNotFound } from "../workspaces";
import type { CreatedWebhookDto, CreateWebhookInput, UpdateWebhookInput, WebhookDeliveryDto, WebhookDto } from "./webhooks.schema";

export type WebhookRow = typeof webhooks.$inferSelect;

/** Endpoints a workspace may have: each event is one request per endpoint. */
export const MAX_WEBHOOKS = 10;
/** Deliveries GET /webhooks/{id}/deliveries answers, newest first. */
export const DELIVERIES_LISTED = 100;

export function toWebhookDto(row: WebhookRow): WebhookDto {
  return {
    id: row.id,
    url: row.url,
    events: row.events as WebhookEvent[],
    active: row.active,
    created_at: row.createdAt,
    disabled_reason: row.disabledReason,
  };
}

/** `whsec_` + base64 of 24 random bytes: the Standard Webhooks form of a signing secret. */
export const newWebhookSecret = () => `whsec_${randomBytes(24).toString("base64")}`;

/** https and a public address, unless WEBHOOK_ALLOW_PRIVATE (then http and any address): 400 naming `url`. */
async function checkEndpoint(app: Pick<AppServices, "config">, url: string): Promise<void> {
  const problems = await endpointProblems(url, app.config.webhookAllowPrivate ?? false);
  if (problems.length) throw validation({ url: problems });
}

/** The same check before the schema runs, so `fields` names `url` together with any other failing member. */
export const webhookUrlChecks: RuntimeCheck = async (app, _actor, raw) => {
  if (typeof raw.url !== "string") return [];
  const problems = await endpointProblems(raw.url, app.config.webhookAllowPrivate ?? false);
  return problems.map((message): FieldIssue => ({ field: "url", message }));
};

export async function listWebhooks(app: Pick<AppServices, "db">, actor: Actor): Promise<WebhookDto[]> {
  const rows = await app.db.select().from(webhooks).where(eq(webhooks.workspaceId, actor.workspaceId)).orderBy(asc(webhooks.createdAt), asc(webhooks.id));
  return rows.map(toWebhookDto);
}

/** A new endpoint with its secret, answered this once. 409 WEBHOOK_LIMIT past MAX_WEBHOOKS. */
export async function createWebhook(app: Pick<AppServices, "config" | "db">, actor: Actor, input: CreateWebhookInput): Promise<CreatedWebhookDto> {
  await checkEndpoint(app, input.url);
  const now = Date.now();
  const row = await app.db.transaction(async (tx) => {
    // One create at a time per workspace, so two cannot both pass the count.
    await lockWorkspaceOrNotFound(tx, actor.workspaceId, "serial");
    const [n] = await tx.select({ n: count() }).from(webhooks).where(eq(webhooks.workspaceId, actor.workspaceId));
    if (n.n >= MAX_WEBHOOKS) throw new AppError("WEBHOOK_LIMIT", { message: `at most ${MAX_WEBHOOKS} webhooks per workspace` });
    const [inserted] = await tx
      .insert(webhooks)
      .values({
        id: newLinkId(),
        workspaceId: actor.workspaceId,
        url: input.url,
        events: input.events,
        active: input.active ?? true,
        secret: newWebhookSecret(),
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    return inserted;
  });
  return { ...toWebhookDto(row), secret: row.secret };
}

/** An endpoint of the actor's workspace, or 404 (another workspace's too). */
async function findOwnWebhook(db: DbOrTx, actor: Actor, id: string, forUpdate = false): Promise<WebhookRow> {
  const q = db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.id, id), eq(webhooks.workspaceId, actor.workspaceId)))
    .limit(1);
  const [row] = forUpdate ? await q.for("update") : await q;
  if (!row) throw notFound();
  return row;
}

/**
 * Changes url, events or active. Turned on again, the endpoint's `disabled_reason` is cleared.
 * Turned off, its pending deliveries are given up (`failed`): an endpoint that is off is sent
 * nothing, and events while it is off are not kept for later.
 */
export async function updateWebhook(app: Pick<AppServices, "config" | "db">, actor: Actor, input: UpdateWebhookInput): Promise<WebhookDto> {
  if (input.url !== undefined) await checkEndpoint(app, input.url);
  const row = await app.db.transaction(async (tx) => {
    const current = await findOwnWebhook(tx, actor, input.id, true);
    const set: Partial<WebhookRow> = { updatedAt: Date.now() };
    if (input.url !== undefined) set.url = input.url;
    if (input.events !== undefined) set.events = input.events;
    if (input.active !== undefined) {
      set.active = input.active;
      if (input.active) set.disabledReason = null;
      else if (current.active) await giveUpPendingDeliveries(tx, current.id);
    }
    const [updated] = await tx.update(webhooks).set(set).where(eq(webhooks.id, current.id)).returning();
    return updated;
  });
  return toWebhookDto(row);
}

/** Removes the endpoint and its deliveries (pending ones are never sent). */
export async function deleteWebhook(app: Pick<AppServices, "db">, actor: Actor, id: string): Promise<void> {
  await app.db.transaction(async (tx) => {
    const row = await findOwnWebhook(tx, actor, id, true);
    await tx.delete(webhooks).where(eq(webhooks.id, row.id));
  });
}

export async function listWebhookDeliveries(app: Pick<AppServices, "db">, actor: Actor, id: string): Promise<WebhookDeliveryDto[]> {
  const row = await findOwnWebhook(app.db, actor, id);
  const rows = await app.db
    .select({
      id: webhookDeliveries.id,
      event: webhookDeliveries.event,
      status: webhookDeliveries.status,
      attempts: webhookDeliveries.attempts,
      responseStatus: webhookDeliveries.responseStatus,
      lastAttemptAt: webhookDeliveries.lastAttemptAt,
      nextAttemptAt: webhookDeliveries.nextAttemptAt,
    })
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.webhookId, row.id))
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(DELIVERIES_LISTED);
  return rows.map((d) => ({
    id: d.id,
    event: d.event,
    status: d.status,
    attempts: d.attempts,
    response_status: d.responseStatus,
    last_attempt_at: d.lastAttemptAt,
    next_attempt_at: d.nextAttemptAt,
  }));
}

/** Queues a `ping` for this endpoint alone, delivered (and retried) like any event; the worker is woken at once. */
export async function sendTestEvent(app: Pick<AppServices, "db">, actor: Actor, id: string): Promise<void> {
  const row = await findOwnWebhook(app.db, actor, id);
  await enqueueWebhookDelivery(app.db, row, "ping", { webhook_id: row.id });
  kickWebhookWorkers();
}
