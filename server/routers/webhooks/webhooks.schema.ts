import { z } from "zod";
import { WEBHOOK_EVENTS } from "../../../db/schema";
import { atLeastOne, body, text } from "../../lib/input";
import { httpUrl } from "../../lib/urls";
import { strictNumber } from "../links";

/** Webhook ids are opaque (8 characters of [0-9a-z] when made here): any other text is simply not found. */
const webhookId = text();

/** The endpoint: an absolute URL here; https and a public address are checked with the configuration (webhooks.service.ts). */
export const webhookUrlSchema = httpUrl;

/** A non-empty set of event names; a name sent twice counts once. */
export const eventsSchema = z
  .array(z.enum(WEBHOOK_EVENTS))
  .min(1, "at least one event")
  .transform((events) => [...new Set(events)]);

/** A JSON boolean only: the REST adapter would otherwise turn "false" into true. */
const activeSchema = strictNumber(z.boolean());

export const createWebhookInput = body({
  url: webhookUrlSchema,
  events: eventsSchema,
  active: activeSchema.optional(),
});
export type CreateWebhookInput = z.output<typeof createWebhookInput>;

export const updateWebhookInput = body(
  {
    id: webhookId,
    url: webhookUrlSchema.optional(),
    events: eventsSchema.optional(),
    active: activeSchema.optional(),
  },
  atLeastOne("id"),
);
export type UpdateWebhookInput = z.output<typeof updateWebhookInput>;

/** Strict: a body sent to POST /webhooks/{id}/test must not carry members (400 naming them). */
export const webhookIdInput = z.object({ id: webhookId }).strict();

export const webhookOutput = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENTS)),
  active: z.boolean(),
  created_at: z.number().int(),
  disabled_reason: z.string().nullable().describe("Why the service turned the endpoint off (every delivery failed for 3 days); null otherwise"),
});
export type WebhookDto = z.infer<typeof webhookOutput>;

export const createdWebhookOutput = webhookOutput.extend({
  secret: z.string().describe("`whsec_` + base64 of 24 random bytes: the signing secret, shown only in this answer"),
});
export type CreatedWebhookDto = z.infer<typeof createdWebhookOutput>;

export const webhookDeliveryOutput = z.object({
  id: z.string().describe("The `webhook-id` header of every attempt"),
  event: z.string(),
  status: z.enum(["pending", "delivered", "failed"]),
  attempts: z.number().int(),
  response_status: z.number().int().nullable(),
  last_attempt_at: z.number().int().nullable(),
  next_attempt_at: z.number().int().nullable(),
});
export type WebhookDeliveryDto = z.infer<typeof webhookDeliveryOutput>;

export const webhookListOutput = z.object({ webhooks: z.array(webhookOutput) });
export const webhookDeliveriesOutput = z.object({ deliveries: z.array(webhookDeliveryOutput) });
