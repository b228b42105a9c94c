import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { hashPassword, safeEqualHex, sha256, verifyPassword } from "../../lib/crypto";

/**
 * Timing-safe comparisons for tokens, codes and passwords; scrypt parameters.
 * Tokens are looked up by their SHA-256 (an index lookup on a hash of 190 random bits reveals
 * nothing by timing); codes are compared as HMACs with safeEqualHex; passwords as scrypt keys
 * with timingSafeEqual.
 */
describe("passwords", () => {
  it("are hashed with scrypt N=2^15, r=8, p=1 and a 16-byte salt, in a self-describing format", async () => {
    const h = await hashPassword("correct horse");
    expect(h).toMatch(/^scrypt\$32768\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(await hashPassword("correct horse")).not.toBe(h); // salted
  });

  it("verifyPassword accepts the password and rejects every other one", async () => {
    const h = await hashPassword("correct horse");
    expect(await verifyPassword("correct horse", h)).toBe(true);
    for (const wrong of ["correct hors", "correct horse ", "Correct horse", "", "correct horse".repeat(20)])
      expect(await verifyPassword(wrong, h), wrong).toBe(false);
  });

  it("verifyPassword rejects malformed stored values instead of matching them", async () => {
    for (const stored of ["", "plain", "scrypt$32768$8$1$$", "scrypt$32768$8$1$c2FsdA$", "bcrypt$x$y$z$a$b", "$$$$$"])
      expect(await verifyPassword("x", stored), stored).toBe(false);
  });
});

describe("codes and tokens", () => {
  it("safeEqualHex compares equal digests only, whatever the length", () => {
    const a = sha256("a");
    expect(safeEqualHex(a, a)).toBe(true);
    expect(safeEqualHex(a, sha256("b"))).toBe(false);
    expect(safeEqualHex(a, a.slice(0, 62))).toBe(false);
    expect(safeEqualHex(a, "")).toBe(false);
    expect(safeEqualHex(a, "zz" + a.slice(2))).toBe(false);
  });

  it("code and password checks go through the constant-time comparisons (source review guard)", () => {
    const crypto = readFileSync("server/lib/crypto.ts", "utf8");
    expect(crypto).toMatch(/return timingSafeEqual\(key, expected\)/);
    expect(readFileSync("server/routers/auth/email-codes.ts", "utf8")).toMatch(/safeEqualHex\(row\.codeHash, hashCode\(/);
    // Tokens are found by their SHA-256, in the where clause and in the per-instance cache of look-ups,
    // never compared as strings in code.
    const auth = readFileSync("server/core/auth.ts", "utf8");
    expect(auth).toMatch(/const hash = sha256\(m\[1\]\)/);
    expect(auth).toMatch(/eq\(apiTokens\.tokenHash, hash\)/);
    expect(auth).toMatch(/tokenReader\(app\.tokenCache\)\.read\(\s*hash,/);
    expect(readFileSync("server/redirect/password-submit.ts", "utf8")).toMatch(/verifyPassword\(password, link\.passwordHash\)/);
  });
});
