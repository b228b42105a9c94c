import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { auditEvents, webhookDeliveries } from "../../../db/schema";
import { createTestServer, http, type TestServer, type TestUser } from "../../test/harness";
import { errorOf, linkTools, uniq } from "./links.test-helper";
import { MAX_BULK } from "./list.schema";

let t: TestServer;

beforeAll(async () => {
  // Loopback webhook endpoints are allowed: events are read from the outbox, nothing is delivered.
  t = await createTestServer({ WEBHOOK_ALLOW_PRIVATE: "true" });
});
afterAll(() => t?.close());

const BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";
const { as, put, rowsOf } = linkTools(() => t);
const visit = (slug: string) => http(`${t.redirect}/${slug}`, { headers: { "user-agent": BROWSER } });

/** A pro user whose workspace has a webhook endpoint for link events (never delivered here: the outbox is read). */
async function userWithWebhook() {
  const u = await t.user({ plan: "pro" });
  await as(u).webhook.create({ url: "http://127.0.0.1:9/hook", events: ["link.updated", "link.deleted"] });
  return u;
}
const updatedEvents = async (u: TestUser) =>
  (
    await t.app.db
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.workspaceId, u.workspaceId), eq(webhookDeliveries.event, "link.updated")))
  ).map((d) => (d.payload as { data: { id: string; archived?: boolean } }).data);
const auditOf = (u: TestUser) => t.app.db.select().from(auditEvents).where(eq(auditEvents.workspaceId, u.workspaceId));

describe("bulk archive on chosen links", () => {
  it("archiving chosen links takes them out of service at once and restoring puts them back", async () => {
    const u = await t.user();
    const [a, b] = [await put(u), await put(u)];
    // A first visit puts the link in the redirect cache; archiving must drop it from there.
    expect((await visit(a.slug)).status).toBe(301);
    expect(await as(u).link.bulkArchive({ ids: [a.id, b.id], archived: true })).toEqual({ updated: 2 });
    expect((await visit(a.slug)).status).toBe(404);
    expect((await as(u).link.dashboardList({})).links.map((l) => l.id)).toEqual([]);
    const archived = await as(u).link.dashboardList({ status: "archived" });
    expect(archived.links.map((l) => [l.id, l.archived]).sort()).toEqual(
      [
        [a.id, true],
        [b.id, true],
      ].sort(),
    );
    expect(await as(u).link.bulkArchive({ ids: [a.id, b.id], archived: false })).toEqual({ updated: 2 });
    expect((await visit(a.slug)).status).toBe(301);
    expect((await rowsOf([a.id, b.id])).every((r) => r.archivedAt === null)).toBe(true);
  });

  it("counts only links whose state changes; one archived already keeps its first archive time", async () => {
    const u = await t.user();
    const earlier = Date.now() - 86_400_000;
    const old = await put(u, { archivedAt: earlier });
    const live = await put(u);
    expect(await as(u).link.bulkArchive({ ids: [old.id, live.id], archived: true })).toEqual({ updated: 1 });
    const rows = await rowsOf([old.id, live.id]);
    expect(rows.find((r) => r.id === old.id)!.archivedAt).toBe(earlier);
    expect(rows.find((r) => r.id === live.id)!.archivedAt).not.toBeNull();
  });

  it("sends link.updated with the archived link for each changed link, and logs each changed link as link.updated naming archived", async () => {
    const u = await userWithWebhook();
    const [a, b] = [await put(u), await put(u)];
    await as(u).link.bulkArchive({ ids: [a.id, b.id], archived: true });
    const events = await updatedEvents(u);
    expect(events.map((e) => [e.id, e.archived]).sort()).toEqual(
      [
        [a.id, true],
        [b.id, true],
      ].sort(),
    );
    await as(u).link.bulkArchive({ ids: [a.id], archived: false });
    const after = await updatedEvents(u);
    expect(after).toHaveLength(3);
    expect(after.filter((e) => e.id === a.id && e.archived === undefined)).toHaveLength(1);
    const audit = (await auditOf(u)).filter((e) => e.action === "link.updated");
    expect(audit.map((e) => [e.targetId, e.changes]).sort()).toEqual(
      [
        [a.id, ["archived"]],
        [b.id, ["archived"]],
        [a.id, ["archived"]],
      ].sort(),
    );
  });

  it("touches nothing when an id is another workspace's or a deleted link's, and says which", async () => {
    const u = await t.user();
    const other = await t.user();
    const mine = await put(u);
    const theirs = await put(other);
    const gone = await put(u, { deletedAt: Date.now() });
    for (const id of [theirs.id, gone.id]) {
      const e = await errorOf(as(u).link.bulkArchive({ ids: [mine.id, id], archived: true }));
      expect(e.error).toBe("NOT_FOUND");
    }
    expect((await rowsOf([mine.id, theirs.id])).every((r) => r.archivedAt === null)).toBe(true);
  });

  it("answers bad input with 400 VALIDATION_FAILED naming the member", async () => {
    const u = await t.user();
    const l = await put(u);
    expect((await errorOf(as(u).link.bulkArchive({ ids: [l.id] } as never))).fields).toHaveProperty("archived");
    expect((await errorOf(as(u).link.bulkArchive({ ids: [], archived: true }))).fields).toHaveProperty("ids");
    const many = Array.from({ length: MAX_BULK + 1 }, (_, i) => `a${String(i).padStart(7, "0")}`);
    expect((await errorOf(as(u).link.bulkArchive({ ids: many, archived: true }))).error).toBe("VALIDATION_FAILED");
    expect((await rowsOf([l.id]))[0].archivedAt).toBeNull();
  });
});

describe("bulk archive on every link the list's filters match", () => {
  it("archives every matching link beyond one bulk call's 100 ids, and restores them from the Archived filter", async () => {
    const u = await t.user();
    const word = `arch${uniq()}`;
    const ids: string[] = [];
    for (let i = 0; i < MAX_BULK + 5; i++) ids.push((await put(u, { url: `https://example.com/${word}/${i}` })).id);
    const other = await put(u);
    expect(await as(u).link.bulkArchiveMatching({ filters: { q: word }, expected: ids.length, archived: true })).toEqual({ updated: ids.length });
    expect((await rowsOf(ids)).every((r) => r.archivedAt !== null)).toBe(true);
    expect((await rowsOf([other.id]))[0].archivedAt).toBeNull();
    const filters = { q: word, status: "archived" as const };
    expect((await as(u).link.dashboardList(filters)).total).toBe(ids.length);
    expect(await as(u).link.bulkArchiveMatching({ filters, expected: ids.length, archived: false })).toEqual({ updated: ids.length });
    expect((await rowsOf(ids)).every((r) => r.archivedAt === null)).toBe(true);
  });

  it("drops the matching links from the redirect cache, sends link.updated for each and logs each as link.updated", async () => {
    const u = await userWithWebhook();
    const word = `cache${uniq()}`;
    const a = await put(u, { url: `https://example.com/${word}/a` });
    const b = await put(u, { url: `https://example.com/${word}/b` });
    expect((await visit(a.slug)).status).toBe(301);
    await as(u).link.bulkArchiveMatching({ filters: { q: word }, expected: 2, archived: true });
    expect((await visit(a.slug)).status).toBe(404);
    expect((await updatedEvents(u)).map((e) => [e.id, e.archived]).sort()).toEqual(
      [
        [a.id, true],
        [b.id, true],
      ].sort(),
    );
    const audit = (await auditOf(u)).filter((e) => e.action === "link.updated");
    expect(audit.map((e) => [e.targetId, e.changes]).sort()).toEqual(
      [
        [a.id, ["archived"]],
        [b.id, ["archived"]],
      ].sort(),
    );
  });

  it("a count that changed since the review writes nothing and says how many match now", async () => {
    const u = await t.user();
    const word = `n${uniq()}`;
    const ids = [(await put(u, { url: `https://example.com/${word}/1` })).id, (await put(u, { url: `https://example.com/${word}/2` })).id];
    const e = await errorOf(as(u).link.bulkArchiveMatching({ filters: { q: word }, expected: 3, archived: true }));
    expect(e).toEqual({ error: "VALIDATION_FAILED", fields: { expected: ["2 links match these filters now, not 3; review again"] } });
    expect((await rowsOf(ids)).every((r) => r.archivedAt === null)).toBe(true);
  });

  it("answers a missing archived member with 400 VALIDATION_FAILED naming it", async () => {
    const u = await t.user();
    const e = await errorOf(as(u).link.bulkArchiveMatching({ filters: {}, expected: 1 } as never));
    expect(e.error).toBe("VALIDATION_FAILED");
    expect(e.fields).toHaveProperty("archived");
  });
});
