import { z } from "zod";
import { emailAddress, text } from "../../lib/input";
import { httpUrl } from "../../lib/urls";

export const emailSchema = emailAddress();

/** Six digits; anything else is simply a wrong code (400 INVALID_CODE, never VALIDATION_FAILED). */
export const codeSchema = text()
  .trim()
  .superRefine((v, ctx) => {
    if (!/^\d{6}$/.test(v)) ctx.addIssue({ code: "custom", message: "must be the 6-digit code from the e-mail", params: { code: "INVALID_CODE" } });
  });

export const accountOutput = z.object({
  user: z.object({
    id: z.string(),
    email: z.string(),
    name: z.string().nullable(),
    avatar_url: z.string().nullable(),
    created_at: z.number().int(),
  }),
  workspace: z.object({ id: z.string(), name: z.string().nullable() }),
});
export type AccountDto = z.infer<typeof accountOutput>;

export const updateAccountInput = z
  .object({
    // Empty or blank clears the name.
    name: text()
      .trim()
      .max(100, "at most 100 characters")
      .nullable()
      .transform((v) => v || null),
  })
  .strict();

export const changeEmailInput = z.object({ email: emailSchema }).strict();
export const verifyEmailInput = z.object({ code: codeSchema }).strict();
export const setAvatarInput = z.object({ avatar_url: httpUrl.nullable() }).strict();
