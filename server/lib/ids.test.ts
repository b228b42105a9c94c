import { describe, expect, it } from "vitest";
import { BASE36, BASE62, clickTs, newPublicId, newTokenValue, randomString } from "./ids";

describe("random ids", () => {
  it("public ids are 8 characters of [0-9a-z], and do not repeat", () => {
    const ids = Array.from({ length: 20_000 }, newPublicId);
    for (const id of ids) expect(id).toMatch(/^[0-9a-z]{8}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("every character of the alphabet is about equally likely (no modulo bias)", () => {
    // 62 does not divide 256: a plain modulo would make the first 8 characters 25 % more likely.
    const counts = new Map<string, number>();
    for (const c of randomString(620_000, BASE62)) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62);
    for (const n of counts.values()) expect(Math.abs(n - 10_000)).toBeLessThan(600);
  });

  it("API token values are tok_ and 32 characters of [0-9A-Za-z]", () => {
    expect(newTokenValue()).toMatch(/^tok_[0-9A-Za-z]{32}$/);
  });

  it("a click's key is its 13-digit time, '#', and 8 characters of [0-9a-z], so keys order by time", () => {
    expect(clickTs(1_700_000_000_123)).toMatch(/^1700000000123#[0-9a-z]{8}$/);
    expect(clickTs(5)).toMatch(/^0000000000005#/);
    expect([clickTs(2000), clickTs(1000)].sort()[0].startsWith("0000000001000#")).toBe(true);
    expect(BASE36).toHaveLength(36);
  });
});
