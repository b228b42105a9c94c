import { z } from "zod";
import { text } from "../../lib/input";

export const apiTokenOutput = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  created_at: z.number().int(),
  last_used_at: z.number().int().nullable(),
  revoked_at: z.number().int().nullable(),
});
export type ApiTokenDto = z.infer<typeof apiTokenOutput>;

export const createTokenInput = z.object({ name: text().trim().min(1, "must be 1-100 characters").max(100, "must be 1-100 characters") }).strict();
export const createTokenOutput = z.object({ token: z.string(), record: apiTokenOutput });
// Path ids are plain strings: an unknown one is simply not found (404).
export const tokenIdInput = z.object({ id: text() });
