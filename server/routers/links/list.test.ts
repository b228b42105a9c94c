import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq, inArray } from "drizzle-orm";
import { domains, links, memberships } from "../../../db/schema";
import { issueToken } from "../../lib/users";
import { removeMember } from "../workspaces/workspaces.service";
import { newLinkId } from "../../lib/ids";
import { createTestApp, type TestApp } from "../../test/harness";
import { errorOf, linkTools, uniq } from "./links.test-helper";
import { LIST_PAGE_SIZE, SPARK_DAYS } from "./list.schema";

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const DAY = 86_400_000;
const { as, put, clicksOn } = linkTools(() => t);

const idsOf = (r: { links: { id: string }[] }) => r.links.map((l) => l.id);

describe("link.dashboardList", () => {
  it("sorts newest first by default", async () => {
    const u = await t.user();
    const a = await as(u).link.create({ url: "https://example.com/1" });
    const b = await as(u).link.create({ url: "https://example.com/2" });
    const r = await as(u).link.dashboardList({});
    expect(idsOf(r)).toEqual([b.id, a.id]);
    expect(r).toMatchObject({ page: 1, per_page: LIST_PAGE_SIZE, total: 2, pages: 1 });
  });

  it("sorts by most clicks, ties newest first", async () => {
    const u = await t.user();
    const few = await as(u).link.create({ url: "https://example.com/few" });
    const many = await as(u).link.create({ url: "https://example.com/many" });
    const none = await as(u).link.create({ url: "https://example.com/none" });
    const none2 = await as(u).link.create({ url: "https://example.com/none2" });
    await clicksOn(few.id, u.workspaceId, 2);
    await clicksOn(many.id, u.workspaceId, 5);
    const r = await as(u).link.dashboardList({ sort: "clicks" });
    expect(idsOf(r)).toEqual([many.id, few.id, none2.id, none.id]);
  });

  it("counts clicks exactly: all time, the last 7 days, and per day for the sparkline", async () => {
    const u = await t.user();
    const l = await as(u).link.create({ url: "https://example.com/counted" });
    const now = Date.now();
    await clicksOn(l.id, u.workspaceId, 3, now - 60_000);
    await clicksOn(l.id, u.workspaceId, 2, now - 2 * DAY);
    await clicksOn(l.id, u.workspaceId, 4, now - 30 * DAY);
    const [row] = (await as(u).link.dashboardList({})).links;
    expect(row.clicks.total).toBe(9);
    expect(row.clicks.last_7_days).toBe(5);
    expect(row.clicks.daily).toHaveLength(SPARK_DAYS);
    expect(row.clicks.daily.reduce((s, n) => s + n, 0)).toBe(5);
    const dayOf = (ms: number) => SPARK_DAYS - 1 - (Math.floor(now / DAY) - Math.floor(ms / DAY));
    expect(row.clicks.daily[dayOf(now - 60_000)]).toBeGreaterThanOrEqual(3);
    expect(row.clicks.daily[dayOf(now - 2 * DAY)]).toBe(2);
  });

  it("filters by tag; a tag no link has is an empty page, not an error", async () => {
    const u = await t.user();
    const tagged = await as(u).link.create({ url: "https://example.com/t", tags: ["promo"] });
    await as(u).link.create({ url: "https://example.com/u", tags: ["other"] });
    const r = await as(u).link.dashboardList({ tag: "promo" });
    expect(idsOf(r)).toEqual([tagged.id]);
    expect(r.tags).toEqual(["other", "promo"]);
    expect(await as(u).link.dashboardList({ tag: "nobody-has-it" })).toMatchObject({ links: [], total: 0 });
  });

  it("filters by domain: the default redirect domain or a branded one of the workspace", async () => {
    const u = await t.user();
    const brand = `b${uniq()}.example`;
    const domainId = newLinkId();
    await t.app.db
      .insert(domains)
      .values({ id: domainId, workspaceId: u.workspaceId, name: brand, verificationValue: "x", verified: true, verifiedAt: Date.now(), createdAt: Date.now() });
    const onDefault = await put(u);
    const onBrand = await put(u, { domainId });
    expect(idsOf(await as(u).link.dashboardList({ domain: brand }))).toEqual([onBrand.id]);
    const def = await as(u).link.dashboardList({ domain: t.app.config.redirectDomain });
    expect(idsOf(def)).toEqual([onDefault.id]);
    expect(def.domains).toEqual([t.app.config.redirectDomain, brand]);
    expect((await as(u).link.dashboardList({ domain: "elsewhere.example" })).links).toEqual([]);
  });

  it("filters by status: active, expired, password, targeting, share card", async () => {
    const u = await t.user();
    const plain = await put(u);
    const expired = await put(u, { expiresAt: Date.now() - 1000 });
    const later = await put(u, { expiresAt: Date.now() + DAY });
    const locked = await put(u, { passwordHash: "x" });
    const targeted = await put(u, { targeting: { ios: "https://apps.example/ios" } });
    const card = await put(u, { ogTitle: "Card" });
    const ids = async (status: "active" | "expired" | "password" | "targeting" | "share_card") => idsOf(await as(u).link.dashboardList({ status })).sort();
    expect(await ids("expired")).toEqual([expired.id]);
    expect(await ids("active")).toEqual([plain.id, later.id, locked.id, targeted.id, card.id].sort());
    expect(await ids("password")).toEqual([locked.id]);
    expect(await ids("targeting")).toEqual([targeted.id]);
    expect(await ids("share_card")).toEqual([card.id]);
    const row = (await as(u).link.dashboardList({ status: "expired" })).links[0];
    expect(row.expires_at).toBe(expired.expiresAt);
  });

  it("searches slug, destination URL and share-card title, with % and _ literal", async () => {
    const u = await t.user();
    const s = uniq();
    const bySlug = await put(u, { slug: `s-${s}` });
    const byUrl = await put(u, { url: `https://example.com/page-${s}` });
    const byTitle = await put(u, { ogTitle: `Title ${s.toUpperCase()}` });
    await put(u, { url: "https://example.com/unrelated" });
    expect(idsOf(await as(u).link.dashboardList({ q: s })).sort()).toEqual([bySlug.id, byUrl.id, byTitle.id].sort());
    expect((await as(u).link.dashboardList({ q: "%" })).links).toEqual([]);
  });

  it("pages by 50: page 2 holds the rest, a page past the end is empty", async () => {
    const u = await t.user();
    const base = Date.now() - DAY;
    const made = [];
    for (let i = 0; i < LIST_PAGE_SIZE + 3; i++) made.push((await put(u)).id);
    // Distinct creation times, so newest-first is the order they were made in, reversed.
    for (let i = 0; i < made.length; i++)
      await t.app.db
        .update(links)
        .set({ createdAt: base + i })
        .where(eq(links.id, made[i]));
    const p1 = await as(u).link.dashboardList({ page: 1 });
    const p2 = await as(u).link.dashboardList({ page: 2 });
    expect(p1).toMatchObject({ total: LIST_PAGE_SIZE + 3, pages: 2 });
    expect([...idsOf(p1), ...idsOf(p2)]).toEqual([...made].reverse());
    expect(idsOf(p2)).toHaveLength(3);
    expect((await as(u).link.dashboardList({ page: 3 })).links).toEqual([]);
  });

  it("shows only the caller's workspace, live links of kind link", async () => {
    const u = await t.user();
    const other = await t.user();
    const mine = await put(u);
    await put(other);
    const gone = await put(u);
    await as(u).link.delete({ id: gone.id });
    expect(idsOf(await as(u).link.dashboardList({}))).toEqual([mine.id]);
  });

  it("answers bad input with 400 VALIDATION_FAILED and its fields", async () => {
    const u = await t.user();
    const sort = await errorOf(as(u).link.dashboardList({ sort: "oldest" as "newest" }));
    expect(sort.error).toBe("VALIDATION_FAILED");
    expect(Object.keys(sort.fields ?? {})).toEqual(["sort"]);
    const page = await errorOf(as(u).link.dashboardList({ page: 0 }));
    expect(page.error).toBe("VALIDATION_FAILED");
    expect(Object.keys(page.fields ?? {})).toEqual(["page"]);
    const status = await errorOf(as(u).link.dashboardList({ status: "broken" as "active" }));
    expect(Object.keys(status.fields ?? {})).toEqual(["status"]);
  });

  it("needs authentication", async () => {
    expect((await errorOf(t.caller({}).link.dashboardList({}))).error).toBe("UNAUTHORIZED");
  });
});

describe("bulk actions", () => {
  const tagsOf = async (ids: string[]) =>
    Object.fromEntries((await t.app.db.select({ id: links.id, tags: links.tags }).from(links).where(inArray(links.id, ids))).map((r) => [r.id, r.tags]));

  it("adds and removes a tag on every selected link", async () => {
    const u = await t.user();
    const a = await put(u, { tags: ["old", "keep"] });
    const b = await put(u);
    expect(await as(u).link.bulkTag({ ids: [a.id, b.id], add: ["new"], remove: ["old"] })).toEqual({ updated: 2 });
    expect(await tagsOf([a.id, b.id])).toEqual({ [a.id]: ["keep", "new"], [b.id]: ["new"] });
  });

  it("refuses a tag that would pass 10 on any link, writing nothing", async () => {
    const u = await t.user();
    const full = await put(u, { tags: Array.from({ length: 10 }, (_, i) => `t${i}`) });
    const roomy = await put(u, { tags: ["a"] });
    const e = await errorOf(as(u).link.bulkTag({ ids: [roomy.id, full.id], add: ["extra"] }));
    expect(e.error).toBe("VALIDATION_FAILED");
    expect(e.fields?.add?.[0]).toContain(`${full.slug} would have 11`);
    expect((await tagsOf([roomy.id]))[roomy.id]).toEqual(["a"]);
  });

  it("sets an expiry on every selected link, and clearing it clears the fallback URL", async () => {
    const u = await t.user();
    const when = Date.now() + 3 * DAY;
    const a = await put(u);
    const b = await put(u, { expiresAt: Date.now() + DAY, expirationUrl: "https://example.com/over" });
    await as(u).link.bulkExpiry({ ids: [a.id, b.id], expires_at: when });
    expect((await as(u).link.get({ id: a.id })).expires_at).toBe(when);
    expect((await as(u).link.get({ id: b.id })).expiration_url).toBe("https://example.com/over");
    await as(u).link.bulkExpiry({ ids: [a.id, b.id], expires_at: null });
    expect(await as(u).link.get({ id: b.id })).toMatchObject({ expires_at: null, expiration_url: null });
    const past = await errorOf(as(u).link.bulkExpiry({ ids: [a.id], expires_at: Date.now() - 1000 }));
    expect(past.error).toBe("EXPIRES_AT_IN_THE_PAST");
  });

  it("deletes the selected links of the workspace", async () => {
    const u = await t.user();
    const a = await put(u);
    const b = await put(u);
    const kept = await put(u);
    expect(await as(u).link.bulkDelete({ ids: [a.id, b.id] })).toEqual({ updated: 2 });
    expect(idsOf(await as(u).link.dashboardList({}))).toEqual([kept.id]);
  });

  it("touches nothing when an id is another workspace's, and says which", async () => {
    const u = await t.user();
    const other = await t.user();
    const mine = await put(u);
    const theirs = await put(other);
    const del = await errorOf(as(u).link.bulkDelete({ ids: [mine.id, theirs.id] }));
    expect(del.error).toBe("NOT_FOUND");
    const tag = await errorOf(as(u).link.bulkTag({ ids: [mine.id, theirs.id], add: ["x"] }));
    expect(tag.error).toBe("NOT_FOUND");
    await expect(as(u).link.bulkTag({ ids: [mine.id, theirs.id], add: ["x"] })).rejects.toThrow(theirs.id);
    const rows = await t.app.db
      .select()
      .from(links)
      .where(inArray(links.id, [mine.id, theirs.id]));
    expect(rows.map((r) => [r.deletedAt, r.tags])).toEqual([
      [null, []],
      [null, []],
    ]);
  });

  it("allows bulk edits only to signed-in callers, on their own workspace", async () => {
    const u = await t.user();
    const l = await put(u);
    expect((await errorOf(t.caller({}).link.bulkDelete({ ids: [l.id] }))).error).toBe("UNAUTHORIZED");
    const stranger = await t.user();
    expect((await errorOf(as(stranger).link.bulkExpiry({ ids: [l.id], expires_at: null }))).error).toBe("NOT_FOUND");
  });

  it("lets a member of the workspace bulk-edit as they edit one link, and no longer once removed", async () => {
    const owner = await t.user();
    const m = await t.user({ plan: "pro" }); // a second live token
    await t.app.db.insert(memberships).values({ workspaceId: owner.workspaceId, userId: m.id, role: "member", joinedAt: Date.now() });
    const { token } = await issueToken(t.app.db, m.id, "shared", owner.workspaceId);
    // A caller per call: a context resolves its credential once.
    const member = () => t.caller({ authorization: `Bearer ${token}` }).link;
    const l = await put(owner);
    expect(await member().bulkTag({ ids: [l.id], add: ["shared"] })).toEqual({ updated: 1 });
    await removeMember(
      t.app,
      { via: "token", userId: owner.id, workspaceId: owner.workspaceId, role: "owner", plan: "free", isAdmin: false },
      owner.workspaceId,
      m.id,
    );
    const single = await errorOf(member().update({ id: l.id, tags: [] }));
    expect(single.error).not.toBe("ok");
    expect((await errorOf(member().bulkTag({ ids: [l.id], remove: ["shared"] }))).error).toBe(single.error);
    expect((await errorOf(member().bulkDelete({ ids: [l.id] }))).error).toBe(single.error);
    expect((await tagsOf([l.id]))[l.id]).toEqual(["shared"]);
  });

  it("answers bad input with 400 VALIDATION_FAILED and its fields", async () => {
    const u = await t.user();
    const none = await errorOf(as(u).link.bulkDelete({ ids: [] }));
    expect(none).toMatchObject({ error: "VALIDATION_FAILED", fields: { ids: expect.any(Array) } });
    const bad = await errorOf(as(u).link.bulkTag({ ids: ["abcdefgh"], add: ["Bad Tag"] }));
    expect(Object.keys(bad.fields ?? {})).toEqual(["add"]);
    const empty = await errorOf(as(u).link.bulkTag({ ids: ["abcdefgh"] }));
    expect(Object.keys(empty.fields ?? {})).toEqual(["add"]);
  });
});
