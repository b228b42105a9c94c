import { z } from "zod";
import { authedProcedure, contract, router, runtimeChecks, type Meta } from "../../trpc/init";
import {
  createdWebhookOutput,
  createWebhookInput,
  updateWebhookInput,
  webhookDeliveriesOutput,
  webhookIdInput,
  webhookListOutput,
  webhookOutput,
} from "./webhooks.schema";
import { createWebhook, deleteWebhook, listWebhookDeliveries, listWebhooks, sendTestEvent, updateWebhook, webhookUrlChecks } from "./webhooks.service";

const TAG = "webhooks";
const api = (method: "GET" | "POST" | "PATCH" | "DELETE", path: `/${string}`, summary: string, description: string): Meta => ({
  openapi: { method, path, tags: [TAG], summary, description, protect: true },
});

const DELIVERY =
  "Each event is a `POST` of `{type, timestamp, data}` (ISO 8601 `timestamp`) signed as Standard Webhooks: headers `webhook-id` (the same on every retry), " +
  '`webhook-timestamp` (seconds) and `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body" keyed with the secret\'s base64-decoded part>`. ' +
  "A 2xx answer within 10 s is delivered; anything else is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, then the delivery is `failed`.";

const URL_RULE =
  "`url` must be https and must not resolve to a loopback, private, link-local or multicast address (400 naming `url`; checked again at each delivery), " +
  "unless the server runs with WEBHOOK_ALLOW_PRIVATE=true, which allows http and any address.";

/** Webhooks: a workspace's HTTPS endpoints subscribed to its events, for tokens and sessions. */
export const webhookRouter = router({
  list: authedProcedure
    .meta({ scope: "webhooks:read" })
    .meta(api("GET", "/webhooks", "List webhooks", "The workspace's webhook endpoints, oldest first. Secrets are never shown again after creation."))
    .input(z.object({}))
    .output(contract(webhookListOutput))
    .query(async ({ ctx }) => ({ webhooks: await listWebhooks(ctx.app, ctx.actor) })),

  create: authedProcedure
    .meta({
      scope: "webhooks:write",
      ...api(
        "POST",
        "/webhooks",
        "Add a webhook",
        "Subscribes an endpoint to some of `link.created`, `link.updated`, `link.deleted`, `link.clicked`, `link.broken` and `linktree.viewed` (at least one). " +
          "The answer holds the signing `secret`, shown this once. " +
          URL_RULE +
          " " +
          DELIVERY +
          " 409 WEBHOOK_LIMIT: the workspace has 10 webhooks already.",
      ),
      successStatus: 201,
      errors: [409],
    })
    .use(runtimeChecks(createWebhookInput, webhookUrlChecks))
    .input(createWebhookInput)
    .output(contract(createdWebhookOutput))
    .mutation(({ ctx, input }) => createWebhook(ctx.app, ctx.actor, input)),

  update: authedProcedure
    .meta({
      scope: "webhooks:write",
      ...api(
        "PATCH",
        "/webhooks/{id}",
        "Update a webhook",
        "Changes `url`, `events` or `active`. Turning an endpoint off gives up its pending deliveries; turning it on again clears `disabled_reason`. " +
          URL_RULE,
      ),
      auditBefore: async (app, actor, input) => (await listWebhooks(app, actor)).find((w) => w.id === input.id),
    })
    .use(runtimeChecks(updateWebhookInput, webhookUrlChecks))
    .input(updateWebhookInput)
    .output(contract(webhookOutput))
    .mutation(({ ctx, input }) => updateWebhook(ctx.app, ctx.actor, input)),

  delete: authedProcedure
    .meta({
      scope: "webhooks:write",
      ...api("DELETE", "/webhooks/{id}", "Remove a webhook", "Removes the endpoint and its deliveries; nothing more is sent to it."),
      successStatus: 204,
    })
    .input(webhookIdInput)
    .output(contract(z.void()))
    .mutation(async ({ ctx, input }) => {
      await deleteWebhook(ctx.app, ctx.actor, input.id);
    }),

  listDeliveries: authedProcedure
    .meta({ scope: "webhooks:read" })
    .meta(
      api(
        "GET",
        "/webhooks/{id}/deliveries",
        "List a webhook's deliveries",
        "The endpoint's newest 100 deliveries, newest first: `pending` (waiting for its next attempt at `next_attempt_at`), `delivered` or `failed`, " +
          "with the number of attempts and the last answer's HTTP status (null when none came).",
      ),
    )
    .input(webhookIdInput)
    .output(contract(webhookDeliveriesOutput))
    .query(async ({ ctx, input }) => ({ deliveries: await listWebhookDeliveries(ctx.app, ctx.actor, input.id) })),

  test: authedProcedure
    .meta({
      scope: "webhooks:write",
      ...api(
        "POST",
        "/webhooks/{id}/test",
        "Send a test event",
        "Queues a `ping` event (`data: {webhook_id}`) for this endpoint, delivered, signed and retried like any other event; see its deliveries for the outcome.",
      ),
      successStatus: 202,
    })
    .input(webhookIdInput)
    .output(contract(z.void()))
    .mutation(async ({ ctx, input }) => {
      await sendTestEvent(ctx.app, ctx.actor, input.id);
    }),
});
