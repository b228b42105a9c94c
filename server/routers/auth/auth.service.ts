import { eq } from "drizzle-orm";
import { users } from "../../../db/schema";
import { isUniqueViolation } from "../../domain/errors";
import { consumeCodeMail } from "../../lib/rate-limit";
import { createUserWithWorkspace, normalizeEmail } from "../../lib/users";
import type { AppServices } from "../../core/services";
import type { Actor, Exchange } from "../../trpc/context";
import { getAccount } from "../account";
import type { AccountDto } from "../account";
import { startLoginSession } from "../sessions";
import { codeMail, consumeEmailCode, createEmailCode, invalidCode } from "./email-codes";
import { beginPendingSignIn, endPendingSignIn, pendingSignInHash } from "./pending-sign-in";
import { maySignIn } from "./sign-in-policy";

/** What sign-in reads and writes: accounts and codes, the send limits, the mail, sessions. */
export type SignInDeps = Pick<AppServices, "db" | "config" | "limits" | "metrics" | "log" | "mail" | "lucia">;

/**
 * Mails a sign-in code, bound to the calling browser's pending sign-in (its cookie). Known and
 * unknown addresses take the same path (no account oracle): sign-up and sign-in are one flow, the
 * account is made on the first verify. Only the caller's own send limits answer 429; past the
 * address's cap over every caller the answer is the same, without a mail.
 */
export async function startSignIn(app: SignInDeps, rawEmail: string, exchange: Exchange): Promise<void> {
  const email = normalizeEmail(rawEmail);
  const allowed = await consumeCodeMail(app.limits, exchange.req.ip, email);
  const pendingHash = beginPendingSignIn(app, exchange);
  if (!allowed) {
    app.metrics.rateLimited.inc({ limit: "signInPerEmail" });
    app.log.warn("sign-in code not mailed: the e-mail address's hourly cap is reached");
    return;
  }
  // SIGNUPS=off: an address that is neither a user nor invited gets no mail, and the same answer.
  if (!(await maySignIn(app.db, app.config, email))) {
    app.log.info("sign-in code not mailed: sign-ups are off and the address is neither a user nor invited");
    return;
  }
  const code = await createEmailCode(app.db, app.config.sessionSecret, { email, purpose: "sign_in", pendingHash });
  await app.mail.send(codeMail(email, code, "sign_in"));
}

/**
 * Signs in with a mailed code. The browser that asked for it (its pending-sign-in cookie) tries its
 * own codes; a caller without that cookie (a script) may try the address's codes too, its wrong tries
 * counted apart: five end the code for such callers, never for the browser that asked.
 */
export async function verifySignIn(app: SignInDeps, input: { email: string; code: string }, exchange: Exchange): Promise<AccountDto> {
  const { code } = input;
  const email = normalizeEmail(input.email);
  const pendingHash = pendingSignInHash(exchange);
  const userId = await app.db.transaction(async (tx) => {
    const whose = pendingHash ? { pendingHash } : { loose: true };
    const match = await consumeEmailCode(tx, app.config.sessionSecret, { purpose: "sign_in", email, ...whose }, code);
    if (!match) return null;
    const [existing] = await tx.select({ id: users.id }).from(users).where(eq(users.email, email));
    if (existing) return existing.id;
    // A code mailed before SIGNUPS was turned off makes no account now.
    if (!(await maySignIn(tx, app.config, email))) return null;
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
  endPendingSignIn(app, exchange);
  const session = await startLoginSession(app, userId, exchange);
  return getAccount(app.db, userId, session.workspaceId ?? undefined);
}

/** Ends the caller's session (if it came with one) and clears the cookie either way. */
export async function logout(app: Pick<AppServices, "lucia">, actor: Actor | null, exchange: Pick<Exchange, "res">): Promise<void> {
  if (actor?.sessionId) await app.lucia.invalidateSession(actor.sessionId);
  exchange.res.appendHeader("Set-Cookie", app.lucia.createBlankSessionCookie().serialize());
}
