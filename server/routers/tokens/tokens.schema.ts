import { z } from "zod";
import { text } from "../../lib/input";
import { SCOPES } from "../../domain/scopes";

export const apiTokenOutput = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  created_at: z.number().int(),
  last_used_at: z.number().int().nullable(),
  revoked_at: z.number().int().nullable(),
  /** What the token may do; every scope for a token made without a list. */
  scopes: z.array(z.enum(SCOPES)),
});
export type ApiTokenDto = z.infer<typeof apiTokenOutput>;

const SCOPE_MESSAGE = `must be a list of scopes: ${SCOPES.join(", ")}`;

export const createTokenInput = z
  .object({
    name: text().trim().min(1, "must be 1-100 characters").max(100, "must be 1-100 characters"),
    /** Absent: every scope. Duplicates are dropped; the stored list follows SCOPES' order. */
    scopes: z
      .array(z.enum(SCOPES, { errorMap: () => ({ message: SCOPE_MESSAGE }) }), { errorMap: () => ({ message: SCOPE_MESSAGE }) })
      .max(SCOPES.length * 2, SCOPE_MESSAGE)
      .transform((list) => SCOPES.filter((s) => list.includes(s)))
      .optional(),
  })
  .strict();
export const createTokenOutput = z.object({ token: z.string(), record: apiTokenOutput });
// Path ids are plain strings: an unknown one is simply not found (404).
export const tokenIdInput = z.object({ id: text() });
