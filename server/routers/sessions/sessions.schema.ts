import { z } from "zod";
import { text } from "../../lib/input";

export const sessionOutput = z.object({
  id: z.string(),
  created_at: z.number().int(),
  expires_at: z.number().int(),
  current: z.boolean(),
  device: z.enum(["desktop", "mobile", "tablet", "smarttv"]).nullable(),
  browser: z.string().nullable(),
  platform: z.string().nullable(),
  country: z.string().nullable(),
  region_name: z.string().nullable(),
  city: z.string().nullable(),
});
export type SessionDto = z.infer<typeof sessionOutput>;

export const sessionIdInput = z.object({ id: text() });
