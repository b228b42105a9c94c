import { createHmac } from "node:crypto";
import { and, eq, gt, inArray, isNull, lt, sql } from "drizzle-orm";
import type { DbOrTx } from "../../../db/client";
import { emailCodes } from "../../../db/schema";
import { AppError } from "../../domain/errors";
import { safeEqualHex } from "../../lib/crypto";
import { newId, sixDigitCode } from "../../lib/ids";
import type { Mail } from "../../lib/mail";

export const CODE_TTL_MS = 10 * 60 * 1000;
export const MAX_WRONG_TRIES = 5;

export type CodePurpose = "sign_in" | "email_change";
type CodeRow = Pick<typeof emailCodes.$inferSelect, "id" | "email" | "codeHash" | "attempts">;

/** Keyed hash: six digits are too few for a bare hash to mean anything if the table leaks. */
const hashCode = (secret: string, id: string, code: string) => createHmac("sha256", secret).update(`${id}:${code}`).digest("hex");

/** Stores a new code (hashed) and returns the plain one for the mail. */
export async function createEmailCode(
  db: DbOrTx,
  secret: string,
  input: { email: string; purpose: CodePurpose; userId?: string | null; pendingHash?: string | null },
): Promise<string> {
  const code = sixDigitCode();
  const id = newId();
  const now = Date.now();
  // Spent and expired codes are of no use; clearing them here keeps the table small.
  await db.delete(emailCodes).where(and(eq(emailCodes.email, input.email), lt(emailCodes.expiresAt, now - CODE_TTL_MS)));
  await db.insert(emailCodes).values({
    id,
    email: input.email,
    purpose: input.purpose,
    userId: input.userId ?? null,
    pendingHash: input.pendingHash ?? null,
    codeHash: hashCode(secret, id, code),
    createdAt: now,
    expiresAt: now + CODE_TTL_MS,
  });
  return code;
}

export const invalidCode = () => new AppError("INVALID_CODE", { fields: { code: ["wrong or expired code"] } });

/**
 * Checks `code` against the live codes of `where` (unused, unexpired, fewer than 5 wrong tries;
 * for sign-in, those of the caller's pending sign-in, or with `loose` a caller without one, whose
 * tries are counted apart and so never end the code for the browser that asked for it),
 * locking them so parallel guesses count. A match spends every live code of the same kind
 * (single use) and is returned; a miss counts one wrong try on each and returns null. Run it in
 * the transaction that applies the code's effect, and throw `invalidCode()` only after that
 * transaction committed, so the wrong try is kept.
 */
export async function consumeEmailCode(
  tx: DbOrTx,
  secret: string,
  where: { purpose: CodePurpose; email?: string; userId?: string; pendingHash?: string; loose?: boolean },
  code: string,
): Promise<CodeRow | null> {
  const now = Date.now();
  const tries = where.loose ? emailCodes.looseAttempts : emailCodes.attempts;
  const conds = [eq(emailCodes.purpose, where.purpose), isNull(emailCodes.usedAt), gt(emailCodes.expiresAt, now), lt(tries, MAX_WRONG_TRIES)];
  if (where.email !== undefined) conds.push(eq(emailCodes.email, where.email));
  if (where.userId !== undefined) conds.push(eq(emailCodes.userId, where.userId));
  if (where.pendingHash !== undefined) conds.push(eq(emailCodes.pendingHash, where.pendingHash));
  const live: CodeRow[] = await tx
    .select({ id: emailCodes.id, email: emailCodes.email, codeHash: emailCodes.codeHash, attempts: emailCodes.attempts })
    .from(emailCodes)
    .where(and(...conds))
    .for("update");
  if (!live.length) return null;
  const ids = live.map((r) => r.id);
  const match = /^\d{6}$/.test(code) ? live.find((row) => safeEqualHex(row.codeHash, hashCode(secret, row.id, code))) : undefined;
  if (!match) {
    await tx
      .update(emailCodes)
      .set(where.loose ? { looseAttempts: sql`${emailCodes.looseAttempts} + 1` } : { attempts: sql`${emailCodes.attempts} + 1` })
      .where(inArray(emailCodes.id, ids));
    return null;
  }
  await tx.update(emailCodes).set({ usedAt: now }).where(inArray(emailCodes.id, ids));
  return match;
}

/** Text without any user-supplied content, so the code is its only 6-digit number (docs/decisions/012-pending-sign-in-cookie.md). */
export function codeMail(to: string, code: string, purpose: CodePurpose): Mail {
  const what = purpose === "sign_in" ? "sign-in code" : "code to confirm your new e-mail address";
  const subject = purpose === "sign_in" ? "Your sign-in code" : "Confirm your new e-mail address";
  const text = `Your ${what} is ${code}\n\nIt is valid for 10 minutes and works once. If you did not ask for it, ignore this e-mail.\n`;
  const html = `<p>Your ${what} is</p><p style="font-size:24px;font-weight:bold;letter-spacing:4px">${code}</p><p>It is valid for 10 minutes and works once. If you did not ask for it, ignore this e-mail.</p>`;
  return { to, subject, text, html };
}
