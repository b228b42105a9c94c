import { z } from "zod";
import { codeSchema, emailSchema } from "../account";

export const startInput = z.object({ email: emailSchema }).strict();
export const verifyInput = z.object({ email: emailSchema, code: codeSchema }).strict();
