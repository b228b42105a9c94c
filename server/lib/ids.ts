import { randomBytes, randomFillSync, randomInt } from "node:crypto";

const BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz";
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Uniform random string over `alphabet` (rejection sampling, no modulo bias). */
export function randomString(length: number, alphabet: string): string {
  let out = "";
  while (out.length < length) {
    const bytes = randomBytes(length * 2);
    for (const b of bytes) {
      if (b < 256 - (256 % alphabet.length)) out += alphabet[b % alphabet.length];
      if (out.length === length) break;
    }
  }
  return out;
}

export const LINK_ID_RE = /^[0-9a-z]{8}$/;
/**
 * Ids the API shows (links, workspaces, users, tokens, linktrees and their items, import jobs): 8
 * characters of [0-9a-z]. Records made by earlier releases may keep their 12.
 */
export const newPublicId = () => randomString(8, BASE36);
export const newLinkId = newPublicId;
export const newWorkspaceId = newPublicId;
/** Ids of records the API never shows (sign-in codes, idempotency keys, abuse reports): 12 characters of [0-9a-z]. */
export const newId = () => randomString(12, BASE36);
export const newTokenValue = () => `tok_${randomString(32, BASE62)}`;
const tsPool = Buffer.alloc(8192);
let tsPoolAt = tsPool.length;
/**
 * Sort key of a click: 13-digit ms timestamp, '#', 8 random base-36 characters, so keys order by
 * time. Drawn from a pooled random buffer: the click writer makes tens of thousands a second.
 */
export function clickTs(timestampMs: number): string {
  let r = "";
  while (r.length < 8) {
    if (tsPoolAt >= tsPool.length) {
      randomFillSync(tsPool);
      tsPoolAt = 0;
    }
    const b = tsPool[tsPoolAt++];
    if (b < 252) r += BASE36[b % 36]; // 252 = 7 × 36: no modulo bias
  }
  return `${String(timestampMs).padStart(13, "0")}#${r}`;
}
export const sixDigitCode = () => String(randomInt(0, 1_000_000)).padStart(6, "0");
export { BASE36, BASE62 };
