import { randomBytes, randomInt } from "node:crypto";

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
/** Link ids: 8 characters of [0-9a-z] (decisions §3). */
export const newLinkId = () => randomString(8, BASE36);
/** Ids of other records: 12 characters of [0-9a-z]. */
export const newId = () => randomString(12, BASE36);
export const newTokenValue = () => `tok_${randomString(32, BASE62)}`;
/** Sort key of a click: 13-digit ms timestamp, then random, so keys order by time. */
export const clickTs = (timestampMs: number) => `${String(timestampMs).padStart(13, "0")}#${randomString(8, BASE36)}`;
export const sixDigitCode = () => String(randomInt(0, 1_000_000)).padStart(6, "0");
export { BASE36, BASE62 };
