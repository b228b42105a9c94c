import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clickRollups, clicks } from "../../../db/schema";
import type { ClickRecord } from "../../core/clicks";
import { CLICK_EVENT_FIELDS, clickRecord, recordClicks } from "../../test/click-records";
import { insertLink } from "../links/links.service";
import { createTestServer, http, type TestServer, type TestUser } from "../../test/harness";
import { countClicks, HOUR_MS } from "./analytics.service";

let t: TestServer;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  t = await createTestServer();
  alice = await t.user({ plan: "pro" });
  bob = await t.user({ plan: "pro" });
});
afterAll(() => t?.close());

const newLink = async (auth = alice.auth) => {
  const r = await http(`${t.api}/links`, { method: "POST", json: { url: "https://dest.example/" }, headers: auth });
  expect(r.status).toBe(201);
  return r.json as { id: string; slug: string };
};
const IN_SAO_PAULO = { country: "BR", region: "SP", regionName: "São Paulo", city: "São Paulo", timezone: "America/Sao_Paulo", lat: -23.5, lng: -46.6 };
const click = (linkId: string, workspaceId: string, timestamp: number, over: Partial<ClickRecord> = {}) =>
  clickRecord(linkId, workspaceId, timestamp, {
    ...IN_SAO_PAULO,
    device: "mobile",
    platform: "iOS",
    browser: "Mobile Safari 18",
    referer: "https://ref.example/",
    ...over,
  });
/** Stores clicks the way the recorder does (rows + hourly rollups). */
const store = (rows: ClickRecord[]) => recordClicks(t.app, rows);
const get = (path: string, auth = alice.auth) => http(`${t.api}${path}`, { headers: auth });
const T0 = Date.UTC(2025, 0, 1, 10, 0, 0); // on an hour boundary

describe("GET /links/{id}/analytics", () => {
  it("answers {count, clicks} with every ClickEvent field, newest first", async () => {
    const l = await newLink();
    await store([click(l.id, alice.workspaceId, T0), click(l.id, alice.workspaceId, T0 + 5, { rule: "ios" })]);
    const r = await get(`/links/${l.id}/analytics`);
    expect(r.status).toBe(200);
    expect(r.json.count).toBe(2);
    expect(r.json.clicks[0]).toEqual({
      ts: expect.stringMatching(new RegExp(`^${T0 + 5}#[0-9a-z]+$`)),
      timestamp: T0 + 5,
      country: "BR",
      region: "SP",
      region_name: "São Paulo",
      timezone: "America/Sao_Paulo",
      lat: expect.closeTo(-23.5, 3),
      lng: expect.closeTo(-46.6, 3),
      device: "mobile",
      platform: "iOS",
      browser: "Mobile Safari 18",
      referer: "https://ref.example/",
      rule: "ios",
    });
    expect(r.json.clicks[1].timestamp).toBe(T0);
  });

  it("from and to are inclusive bounds", async () => {
    const l = await newLink();
    await store([T0, T0 + 10, T0 + 20, T0 + 30].map((ts) => click(l.id, alice.workspaceId, ts)));
    const r = await get(`/links/${l.id}/analytics?from=${T0 + 10}&to=${T0 + 20}`);
    expect(r.json.count).toBe(2);
    expect(r.json.clicks.map((c: { timestamp: number }) => c.timestamp)).toEqual([T0 + 20, T0 + 10]);
    expect((await get(`/links/${l.id}/analytics?from=${T0 + 31}`)).json.count).toBe(0);
    expect((await get(`/links/${l.id}/analytics?to=${T0}`)).json.count).toBe(1);
    expect((await get(`/links/${l.id}/analytics?from=${T0 + 20}&to=${T0 + 10}`)).json).toEqual({ count: 0, clicks: [] });
  });

  it("caps clicks at 500 while count stays exact and uncapped", async () => {
    const l = await newLink();
    await store(Array.from({ length: 520 }, (_, i) => click(l.id, alice.workspaceId, T0 + i * 1000)));
    const r = await get(`/links/${l.id}/analytics`);
    expect(r.json.count).toBe(520);
    expect(r.json.clicks).toHaveLength(500);
    expect(r.json.clicks[0].timestamp).toBe(T0 + 519_000);
  });

  it("count is exact for ranges cutting through hours (rollups for whole hours, clicks at the edges)", async () => {
    const l = await newLink();
    // 3 clicks in each of 5 hours: at +0, +30 min and the hour's last ms.
    const times = [0, 1, 2, 3, 4].flatMap((h) => [T0 + h * HOUR_MS, T0 + h * HOUR_MS + HOUR_MS / 2, T0 + (h + 1) * HOUR_MS - 1]);
    await store(times.map((ts) => click(l.id, alice.workspaceId, ts)));
    const cases: [number | undefined, number | undefined][] = [
      [undefined, undefined],
      [T0, T0 + 5 * HOUR_MS - 1],
      [T0 + 1, T0 + 5 * HOUR_MS - 2],
      [T0 + HOUR_MS / 2, T0 + 3 * HOUR_MS + HOUR_MS / 2],
      [T0 + HOUR_MS - 1, T0 + HOUR_MS],
      [T0 + 2 * HOUR_MS, T0 + 2 * HOUR_MS],
      [T0 + 10, T0 + 20],
    ];
    for (const [from, to] of cases) {
      const expected = times.filter((x) => (from === undefined || x >= from) && (to === undefined || x <= to)).length;
      expect((await countClicks(t.app.db, [l.id], from, to)).get(l.id), `${from}..${to}`).toBe(expected);
      const qs = new URLSearchParams();
      if (from !== undefined) qs.set("from", String(from));
      if (to !== undefined) qs.set("to", String(to));
      expect((await get(`/links/${l.id}/analytics?${qs}`)).json.count).toBe(expected);
    }
  });

  it("counts through the rollups: they hold the hourly totals written with the clicks", async () => {
    const l = await newLink();
    await store([click(l.id, alice.workspaceId, T0 + 1), click(l.id, alice.workspaceId, T0 + 2), click(l.id, alice.workspaceId, T0 + HOUR_MS)]);
    const rows = await t.app.db.select().from(clickRollups);
    const mine = rows.filter((r) => r.linkId === l.id).sort((a, b) => a.hour - b.hour);
    expect(mine).toEqual([
      { linkId: l.id, hour: T0, count: 2 },
      { linkId: l.id, hour: T0 + HOUR_MS, count: 1 },
    ]);
  });

  it("a deleted link's analytics stay readable", async () => {
    const l = await newLink();
    await store([click(l.id, alice.workspaceId, T0)]);
    await http(`${t.api}/links/${l.id}`, { method: "DELETE", headers: alice.auth });
    const r = await get(`/links/${l.id}/analytics`);
    expect(r.status).toBe(200);
    expect(r.json.count).toBe(1);
  });

  it.each([
    ["1.5", "from"],
    ["abc", "from"],
    ["12,5", "to"],
    ["now", "to"],
    ["1e3", "to"],
    ["", "from"],
    ["", "to"],
  ])("from/to that are not integers (%s) → 400 VALIDATION_FAILED", async (value, name) => {
    const l = await newLink();
    const r = await get(`/links/${l.id}/analytics?${name}=${encodeURIComponent(value)}`);
    expect(r.status).toBe(400);
    expect(r.json.error).toBe("VALIDATION_FAILED");
    expect(r.json.fields[name]).toBeDefined();
  });

  it("reads query parameters as plain strings: nested forms are refused (not objects, not dropped), unrelated ones are ignored", async () => {
    const l = await newLink();
    const nested = await get(`/links/${l.id}/analytics?from[a]=1`);
    expect(nested.status).toBe(400);
    expect(Object.keys(nested.json.fields)).toEqual(["from"]);
    expect((await get(`/links/${l.id}/analytics?utm=x&from=0`)).status).toBe(200);
  });

  it("an unknown link or another workspace's link → 404; a malformed id → 400 INVALID_LINK_ID; no credential → 401", async () => {
    const l = await newLink();
    expect((await get(`/links/zzzzzzzz/analytics`)).status).toBe(404);
    expect((await get(`/links/${l.id}/analytics`, bob.auth)).json).toEqual({ error: "NOT_FOUND" });
    const bad = await get(`/links/NOT-AN-ID/analytics`);
    expect(bad.status).toBe(400);
    expect(bad.json.error).toBe("INVALID_LINK_ID");
    expect((await get(`/links/${l.id}/analytics`, {})).status).toBe(401);
  });
});

describe("GET /analytics", () => {
  it("covers every short link of the workspace with link_id on each click, deleted links included, linktree-owned ones excluded", async () => {
    const carol = await t.user({ plan: "pro" });
    const a = await newLink(carol.auth);
    const b = await newLink(carol.auth);
    const item = await insertLink(t.app.db, { workspaceId: carol.workspaceId, url: "https://item.example/", kind: "linktree_item" });
    const tree = await insertLink(t.app.db, { workspaceId: carol.workspaceId, url: "https://tree.example/", kind: "linktree" });
    await store([
      click(a.id, carol.workspaceId, T0),
      click(b.id, carol.workspaceId, T0 + 1),
      click(item.id, carol.workspaceId, T0 + 2),
      click(tree.id, carol.workspaceId, T0 + 3),
    ]);
    await http(`${t.api}/links/${b.id}`, { method: "DELETE", headers: carol.auth });
    const r = await get(`/analytics`, carol.auth);
    expect(r.status).toBe(200);
    expect(r.json.count).toBe(2);
    expect(r.json.clicks.map((c: { link_id: string }) => c.link_id)).toEqual([b.id, a.id]);
    expect(Object.keys(r.json.clicks[0]).sort()).toEqual([...CLICK_EVENT_FIELDS, "link_id"].sort());
    // Another workspace sees none of it.
    expect((await get(`/analytics`, bob.auth)).json.clicks.map((c: { link_id: string }) => c.link_id)).not.toContain(a.id);
  });

  it("link_id narrows to one link; unknown, another workspace's or linktree-owned → 404; malformed → 400 INVALID_LINK_ID", async () => {
    const a = await newLink();
    const b = await newLink();
    await store([click(a.id, alice.workspaceId, T0), click(b.id, alice.workspaceId, T0)]);
    const r = await get(`/analytics?link_id=${a.id}`);
    expect(r.json.count).toBe(1);
    expect(r.json.clicks[0].link_id).toBe(a.id);
    expect((await get(`/analytics?link_id=zzzzzzzz`)).status).toBe(404);
    expect((await get(`/analytics?link_id=${a.id}`, bob.auth)).status).toBe(404);
    const item = await insertLink(t.app.db, { workspaceId: alice.workspaceId, url: "https://item.example/", kind: "linktree_item" });
    expect((await get(`/analytics?link_id=${item.id}`)).status).toBe(404);
    const bad = await get(`/analytics?link_id=x`);
    expect(bad.status).toBe(400);
    expect(bad.json.error).toBe("INVALID_LINK_ID");
  });

  it("caps clicks at 500 per link, newest first across links, count uncapped; from/to inclusive", async () => {
    const dave = await t.user({ plan: "pro" });
    const a = await newLink(dave.auth);
    const b = await newLink(dave.auth);
    await store([
      ...Array.from({ length: 510 }, (_, i) => click(a.id, dave.workspaceId, T0 + i * 2)),
      ...Array.from({ length: 3 }, (_, i) => click(b.id, dave.workspaceId, T0 + i * 2 + 1)),
    ]);
    const r = await get(`/analytics`, dave.auth);
    expect(r.json.count).toBe(513);
    expect(r.json.clicks).toHaveLength(503);
    const ts = r.json.clicks.map((c: { timestamp: number }) => c.timestamp);
    expect([...ts].sort((x: number, y: number) => y - x)).toEqual(ts);
    const ranged = await get(`/analytics?from=${T0}&to=${T0 + 3}`, dave.auth);
    expect(ranged.json.count).toBe(4);
    expect((await get(`/analytics?from=x`, dave.auth)).json.error).toBe("VALIDATION_FAILED");
  });

  it("both endpoints are in /openapi.json under the analytics tag", async () => {
    const doc = (await http(`${t.api}/openapi.json`)).json;
    expect(doc.paths["/analytics"].get.tags).toEqual(["analytics"]);
    expect(doc.paths["/links/{id}/analytics"].get.tags).toEqual(["analytics"]);
  });
});

describe("countClicks (shared with linktree analytics)", () => {
  it("returns a map with every asked link, 0 when it has no clicks", async () => {
    const a = await newLink();
    const b = await newLink();
    await store([click(a.id, alice.workspaceId, T0)]);
    const m = await countClicks(t.app.db, [a.id, b.id]);
    expect([...m.entries()].sort()).toEqual(
      [
        [a.id, 1],
        [b.id, 0],
      ].sort(),
    );
    expect((await countClicks(t.app.db, [])).size).toBe(0);
  });
});

// Keeps the clicks import used (the table is the recorder's target).
void clicks;
