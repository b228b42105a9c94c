import { eq } from "drizzle-orm";
import { users } from "../../../db/schema";
import { isUniqueViolation } from "../../domain/errors";
import { consume } from "../../lib/rate-limit";
import { createUserWithWorkspace, normalizeEmail } from "../../lib/users";
import type { Context } from "../../trpc/context";
import { getAccount } from "../account/account.service";
import type { AccountDto } from "../account/account.schema";
import { startLoginSession } from "../sessions/sessions.service";
import { codeMail, consumeEmailCode, createEmailCode, invalidCode } from "./email-codes";

/**
 * Mails a sign-in code. Known and unknown addresses take the same path (no account oracle):
 * sign-up and sign-in are one flow, the account is made on the first verify.
 */
export async function startSignIn(ctx: Context, rawEmail: string): Promise<void> {
  const { app } = ctx;
  const email = normalizeEmail(rawEmail);
  await consume(app.limits, "signInPerAddress", ctx.req.ip);
  await consume(app.limits, "signInPerEmail", email);
  const code = await createEmailCode(app.db, app.config.sessionSecret, { email, purpose: "sign_in" });
  await app.mail.send(codeMail(email, code, "sign_in"));
}

export async function verifySignIn(ctx: Context, rawEmail: string, code: string): Promise<AccountDto> {
  const { app } = ctx;
  const email = normalizeEmail(rawEmail);
  const userId = await app.db.transaction(async (tx) => {
    const match = await consumeEmailCode(tx, app.config.sessionSecret, { purpose: "sign_in", email }, code);
    if (!match) return null;
    const [existing] = await tx.select({ id: users.id }).from(users).where(eq(users.email, email));
    if (existing) return existing.id;
    try {
      return (await tx.transaction((sp) => createUserWithWorkspace(sp, { email }))).id;
    } catch (e) {
      // Made in parallel (e.g. by the CLI): that account is the one.
      if (!isUniqueViolation(e, "users_email_idx")) throw e;
      const [made] = await tx.select({ id: users.id }).from(users).where(eq(users.email, email));
      return made.id;
    }
  });
  if (!userId) throw invalidCode(); // after commit, so the wrong try counts
  await startLoginSession(ctx, userId);
  return getAccount(app.db, userId);
}

export async function logout(ctx: Context): Promise<void> {
  const auth = await ctx.auth();
  if (auth.actor?.sessionId) await ctx.app.lucia.invalidateSession(auth.actor.sessionId);
  ctx.res.appendHeader("Set-Cookie", ctx.app.lucia.createBlankSessionCookie().serialize());
}
