import http from "node:http";
import type { AddressInfo } from "node:net";
import { eq, inArray } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { linkHealth, type links } from "../../../db/schema";
import { createProber } from "../../core/health-probe";
import { createTestApp, pollUntil, type TestApp, type TestUser } from "../../test/harness";
import { insertLink } from "../links/links.service";
import { CHECK_INTERVAL_MS } from "./health.service";
import { LEASE_MS, claimDueChecks, startHealthChecks, sweepHealthRows } from "./scheduler";

let dest: http.Server;
let base = "";
const hits: string[] = [];
let t: TestApp;
let u: TestUser;
const fast = createProber({ hostIntervalMs: 0, timeoutMs: 2000 });

beforeAll(async () => {
  dest = http.createServer((req, res) => {
    hits.push(req.url ?? "");
    res.writeHead(200).end();
  });
  await new Promise<void>((r) => dest.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(dest.address() as AddressInfo).port}`;
  t = await createTestApp({ WEBHOOK_ALLOW_PRIVATE: "true" });
  u = await t.user();
});
afterAll(async () => {
  await t?.close();
  dest.closeAllConnections();
  await new Promise<void>((r) => dest.close(() => r()));
});

const put = (over: Partial<typeof links.$inferInsert> = {}) =>
  insertLink(t.app.db, { workspaceId: u.workspaceId, url: `${base}/${Math.random().toString(36).slice(2)}`, ...over });
const row = async (id: string) => (await t.app.db.select().from(linkHealth).where(eq(linkHealth.linkId, id)))[0];
/** Checks already due from earlier tests are pushed out of the way, so each test sees only its own. */
const clearDue = () => t.app.db.update(linkHealth).set({ nextCheckAt: Date.now() + CHECK_INTERVAL_MS });

describe("scheduled destination checks", () => {
  it("live links without a row get one, unknown and due now; deleted, archived links and linktree pages get none", async () => {
    await clearDue();
    const live = await put();
    const deleted = await put({ deletedAt: Date.now() });
    const archived = await put({ archivedAt: Date.now() });
    const page = await put({ kind: "linktree" });
    const now = Date.now();
    await sweepHealthRows(t.app.db, now);
    expect(await row(live.id)).toMatchObject({ status: "unknown", checkedAt: null, nextCheckAt: now, leaseUntil: null, workspaceId: u.workspaceId });
    for (const l of [deleted, archived, page]) expect(await row(l.id)).toBeUndefined();
  });

  it("the row of a link that no longer exists at all is dropped when it falls due", async () => {
    await t.app.db.insert(linkHealth).values({ linkId: "gone0000", workspaceId: u.workspaceId, nextCheckAt: Date.now() - 1 });
    await sweepHealthRows(t.app.db);
    expect(await row("gone0000")).toBeUndefined();
  });

  it("a due check is leased to one claimer at a time, and taken again once its lease has run out", async () => {
    await clearDue();
    const a = await put();
    const b = await put();
    const now = Date.now();
    await sweepHealthRows(t.app.db, now);
    const [first, second] = await Promise.all([claimDueChecks(t.app.db, 1, now), claimDueChecks(t.app.db, 1, now)]);
    const firstAgain = await claimDueChecks(t.app.db, 10, now);
    const claimed = [...first, ...second, ...firstAgain];
    expect(claimed.sort()).toEqual([a.id, b.id].sort());
    expect((await row(a.id)).leaseUntil).toBe(now + LEASE_MS);
    expect(await claimDueChecks(t.app.db, 10, now + 1000)).toEqual([]);
    // The instance holding them stopped without finishing: after the lease they are due again.
    expect((await claimDueChecks(t.app.db, 10, now + LEASE_MS + 1)).sort()).toEqual([a.id, b.id].sort());
  });

  it("a due link that was deleted or archived meanwhile is not checked, and its check moves a day on", async () => {
    await clearDue();
    const link = await put();
    const now = Date.now();
    await sweepHealthRows(t.app.db, now);
    await t.app.db.execute(`update links set archived_at = ${now} where id = '${link.id}'`);
    expect(await claimDueChecks(t.app.db, 10, now)).toEqual([]);
    await sweepHealthRows(t.app.db, now);
    expect((await row(link.id)).nextCheckAt).toBe(now + CHECK_INTERVAL_MS);
  });

  it("the scheduler checks a new link, then not again for a day", async () => {
    await clearDue();
    const link = await put();
    hits.length = 0;
    const scheduler = startHealthChecks(t.app, { pollMs: 50, prober: fast });
    try {
      const checked = await pollUntil(
        () => row(link.id),
        (r) => r?.checkedAt != null,
        10_000,
      );
      expect(checked).toMatchObject({ status: "ok", httpStatus: 200, leaseUntil: null });
      expect(checked.nextCheckAt).toBe(checked.checkedAt! + CHECK_INTERVAL_MS);
      await new Promise((r) => setTimeout(r, 300));
      expect(hits.filter((h) => h === new URL(link.url).pathname)).toHaveLength(1);
    } finally {
      await scheduler.stop();
    }
  });

  it("a check whose instance died mid-way (its lease ran out) is done after a restart", async () => {
    await clearDue();
    const link = await put();
    const now = Date.now();
    await sweepHealthRows(t.app.db, now);
    await t.app.db
      .update(linkHealth)
      .set({ leaseUntil: now - 1 })
      .where(inArray(linkHealth.linkId, [link.id]));
    const scheduler = startHealthChecks(t.app, { pollMs: 50, prober: fast });
    try {
      const checked = await pollUntil(
        () => row(link.id),
        (r) => r?.checkedAt != null,
        10_000,
      );
      expect(checked.status).toBe("ok");
    } finally {
      await scheduler.stop();
    }
  });

  it("LINK_HEALTH_CHECKS=off: no scheduled check runs", async () => {
    const off = await createTestApp({ WEBHOOK_ALLOW_PRIVATE: "true", LINK_HEALTH_CHECKS: "off" });
    try {
      const who = await off.user();
      const link = await insertLink(off.app.db, { workspaceId: who.workspaceId, url: `${base}/off` });
      hits.length = 0;
      const scheduler = startHealthChecks(off.app, { pollMs: 20, prober: fast });
      await new Promise((r) => setTimeout(r, 500));
      await scheduler.stop();
      expect(await off.app.db.select().from(linkHealth).where(eq(linkHealth.linkId, link.id))).toEqual([]);
      expect(hits).toEqual([]);
    } finally {
      await off.close();
    }
  });
});
