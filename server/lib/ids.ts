import { randomFillSync, randomInt } from "node:crypto";

const BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz";
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/**
 * Random bytes drawn from a pooled buffer filled by the system's CSPRNG, each byte used once: ids
 * are made on every write and the click writer makes tens of thousands a second, where a
 * `randomBytes` call per id cost more than the id.
 */
const pool = Buffer.alloc(8192);
let poolAt = pool.length;
function randomByte(): number {
  if (poolAt >= pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  return pool[poolAt++];
}

/** Uniform random string over `alphabet` (rejection sampling, no modulo bias). */
export function randomString(length: number, alphabet: string): string {
  const below = 256 - (256 % alphabet.length);
  let out = "";
  while (out.length < length) {
    const b = randomByte();
    if (b < below) out += alphabet[b % alphabet.length];
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
/** Sort key of a click: 13-digit ms timestamp, '#', 8 random base-36 characters, so keys order by time. */
export const clickTs = (timestampMs: number): string => `${String(timestampMs).padStart(13, "0")}#${randomString(8, BASE36)}`;
export const sixDigitCode = () => String(randomInt(0, 1_000_000)).padStart(6, "0");
export { BASE36, BASE62 };
