import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { links } from "../../../db/schema";
import { createTestApp, type TestApp } from "../../test/harness";
import { errorOf, linkTools, uniq } from "./links.test-helper";
import { MAX_BULK } from "./list.schema";
import { MAX_MATCHING } from "./bulk-matching";

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const DAY = 86_400_000;
const { as, put, rowsOf } = linkTools(() => t);

/** `n` links whose destination holds `word` (what the list's search finds), plus one that does not. */
async function workspaceWith(n: number, word: string, over: Partial<typeof links.$inferInsert> = {}) {
  const u = await t.user();
  const matching = [];
  for (let i = 0; i < n; i++) matching.push(await put(u, { url: `https://example.com/${word}/${i}`, ...over }));
  const other = await put(u, { url: "https://example.com/elsewhere" });
  return { u, ids: matching.map((l) => l.id), other };
}

describe("bulk actions on every link the list's filters match", () => {
  it("select all N matching: tags every matching link beyond one bulk call's 100 ids, in one action, and no other", async () => {
    const word = `promo${uniq()}`;
    const { u, ids, other } = await workspaceWith(MAX_BULK + 20, word, { tags: ["keep"] });
    const total = (await as(u).link.dashboardList({ q: word })).total;
    expect(total).toBe(MAX_BULK + 20);
    expect(await as(u).link.bulkTagMatching({ filters: { q: word }, expected: total, add: "spring" })).toEqual({ updated: total });
    const rows = await rowsOf([...ids, other.id]);
    expect(rows.filter((r) => r.id !== other.id).every((r) => r.tags!.join() === "keep,spring")).toBe(true);
    expect(rows.find((r) => r.id === other.id)!.tags).toEqual([]);
    // Removing it again touches only the links that have it; the tags stay sorted.
    expect(await as(u).link.bulkTagMatching({ filters: { tag: "spring" }, expected: total, remove: "spring" })).toEqual({ updated: total });
    expect((await rowsOf(ids)).every((r) => r.tags!.join() === "keep")).toBe(true);
  });

  it("select all N matching: the filters are the list's, status and tag included", async () => {
    const u = await t.user();
    const expired = await put(u, { expiresAt: Date.now() - DAY, tags: ["x"] });
    await put(u, { tags: ["x"] });
    await put(u, { expiresAt: Date.now() - DAY });
    const filters = { tag: "x", status: "expired" as const };
    expect((await as(u).link.dashboardList(filters)).total).toBe(1);
    expect(await as(u).link.bulkDeleteMatching({ filters, expected: 1 })).toEqual({ updated: 1 });
    expect((await rowsOf([expired.id]))[0].deletedAt).not.toBeNull();
    expect((await as(u).link.dashboardList({})).total).toBe(2);
  });

  it("select all N matching: a count that changed since the review writes nothing and says how many match now", async () => {
    const word = `count${uniq()}`;
    const { u, ids } = await workspaceWith(3, word);
    const e = await errorOf(as(u).link.bulkDeleteMatching({ filters: { q: word }, expected: 2 }));
    expect(e).toEqual({ error: "VALIDATION_FAILED", fields: { expected: ["3 links match these filters now, not 2; review again"] } });
    expect((await rowsOf(ids)).every((r) => r.deletedAt === null)).toBe(true);
  });

  it("select all N matching: a tag that would pass 10 on any matching link fails the whole action", async () => {
    const word = `full${uniq()}`;
    const u = await t.user();
    const full = await put(u, { url: `https://example.com/${word}/a`, tags: Array.from({ length: 10 }, (_, i) => `t${i}`) });
    const roomy = await put(u, { url: `https://example.com/${word}/b`, tags: ["a"] });
    const e = await errorOf(as(u).link.bulkTagMatching({ filters: { q: word }, expected: 2, add: "extra" }));
    expect(e.error).toBe("VALIDATION_FAILED");
    expect(e.fields?.add?.[0]).toContain(full.slug);
    expect((await rowsOf([roomy.id]))[0].tags).toEqual(["a"]);
  });

  it("select all N matching: sets an expiry on every matching link, and clearing it clears the fallback URL", async () => {
    const word = `exp${uniq()}`;
    const { u, ids, other } = await workspaceWith(3, word, { expiresAt: Date.now() + DAY, expirationUrl: "https://example.com/over" });
    const when = Date.now() + 3 * DAY;
    expect(await as(u).link.bulkExpiryMatching({ filters: { q: word }, expected: 3, expires_at: when })).toEqual({ updated: 3 });
    expect((await rowsOf(ids)).map((r) => [r.expiresAt, r.expirationUrl])).toEqual(ids.map(() => [when, "https://example.com/over"]));
    const before = (await rowsOf(ids))[0].updatedAt;
    await as(u).link.bulkExpiryMatching({ filters: { q: word }, expected: 3, expires_at: null });
    const after = await rowsOf(ids);
    expect(after.map((r) => [r.expiresAt, r.expirationUrl])).toEqual(ids.map(() => [null, null]));
    expect(after[0].updatedAt).toBeGreaterThan(before);
    expect((await rowsOf([other.id]))[0].expiresAt).toBeNull();
    const past = await errorOf(as(u).link.bulkExpiryMatching({ filters: { q: word }, expected: 3, expires_at: Date.now() - 1000 }));
    expect(past.error).toBe("EXPIRES_AT_IN_THE_PAST");
  });

  it("select all N matching: deletes only the caller's workspace's links, and frees their slugs", async () => {
    const word = `del${uniq()}`;
    const { u, ids } = await workspaceWith(2, word);
    const stranger = await t.user();
    const theirs = await put(stranger, { url: `https://example.com/${word}/theirs` });
    const slug = (await rowsOf([ids[0]]))[0].slug;
    expect(await as(u).link.bulkDeleteMatching({ filters: { q: word }, expected: 2 })).toEqual({ updated: 2 });
    expect((await rowsOf([theirs.id]))[0].deletedAt).toBeNull();
    expect((await as(stranger).link.slugAvailable({ slug })).available).toBe(true);
  });

  it("select all N matching: more than the cap, bad filters or no tag answer 400 VALIDATION_FAILED naming the field", async () => {
    const u = await t.user();
    const over = await errorOf(as(u).link.bulkDeleteMatching({ filters: {}, expected: MAX_MATCHING + 1 }));
    expect(over).toMatchObject({ error: "VALIDATION_FAILED", fields: { expected: [expect.stringContaining("narrow the filters")] } });
    const bad = await errorOf(as(u).link.bulkDeleteMatching({ filters: { status: "nope" } as never, expected: 1 }));
    expect(bad.error).toBe("VALIDATION_FAILED");
    expect(Object.keys(bad.fields ?? {})).toEqual(["filters"]);
    const page = await errorOf(as(u).link.bulkDeleteMatching({ filters: { page: 2 } as never, expected: 1 }));
    expect(page.error).toBe("VALIDATION_FAILED");
    const none = await errorOf(as(u).link.bulkTagMatching({ filters: {}, expected: 1 }));
    expect(Object.keys(none.fields ?? {})).toEqual(["add"]);
    expect((await errorOf(t.caller({}).link.bulkDeleteMatching({ filters: {}, expected: 1 }))).error).toBe("UNAUTHORIZED");
  });
});
