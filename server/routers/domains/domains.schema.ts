import { z } from "zod";
import { atLeastOne, body, text } from "../../lib/input";
import { hostNameProblems } from "../../lib/hostnames";
import { httpUrl } from "../../lib/urls";

/**
 * A branded domain's name as sent: checked here for its form (the service adds "not one of our own
 * hosts", which needs the configuration). Only the stored form is accepted, never converted, so the
 * name a caller sends is the name they get back and the one their DNS must carry.
 */
export const domainNameSchema = text().superRefine((name, ctx) => {
  for (const message of hostNameProblems(name, [])) ctx.addIssue({ code: "custom", message });
});

/** Domain ids are opaque (8 characters of [0-9a-z] when made here): any other text is simply not found. */
const domainId = text();

export const createDomainInput = body({ name: domainNameSchema });
export type CreateDomainInput = z.output<typeof createDomainInput>;

/** Strict: a body sent to POST /domains/{id}/verify must not carry members (400 naming them). */
export const domainIdInput = z.object({ id: domainId }).strict();

export const updateDomainInput = body({ id: domainId, not_found_url: httpUrl.nullable().optional() }, atLeastOne("id"));
export type UpdateDomainInput = z.output<typeof updateDomainInput>;

export const domainOutput = z.object({
  id: z.string(),
  name: z.string(),
  verified: z.boolean(),
  verified_at: z.number().int().nullable(),
  verification: z.object({
    type: z.literal("TXT"),
    name: z.string(),
    value: z.string(),
  }),
  not_found_url: z.string().url().nullable(),
  created_at: z.number().int(),
});
export type DomainDto = z.infer<typeof domainOutput>;
