import { afterAll, beforeAll, expect, it } from "vitest";
import type { Visit } from "../../core/clicks";
import { PEOPLE } from "../../redirect/ua-fixtures";
import { createTestApp, type TestApp, type TestUser } from "../../test/harness";

let t: TestApp;
let alice: TestUser;
let bob: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  alice = await t.user({ plan: "pro" });
  bob = await t.user({ plan: "pro" });
});
afterAll(() => t?.close());

const visit = (linkId: string, workspaceId: string, ip: string, userAgent: string = PEOPLE.macSafari): Visit => ({
  linkId,
  workspaceId,
  timestamp: Date.now(),
  userAgent,
  ip,
  referer: null,
  rule: "url",
  edge: null,
});

it("the dashboard shows clicks and unique visitors per day: one address and browser is one visitor however often it clicks", async () => {
  const api = t.caller(alice.auth);
  const link = await api.link.create({ url: "https://dest.example/a" });
  for (const v of [
    visit(link.id, alice.workspaceId, "203.0.113.1"),
    visit(link.id, alice.workspaceId, "203.0.113.1"),
    visit(link.id, alice.workspaceId, "203.0.113.1", PEOPLE.androidChrome),
    visit(link.id, alice.workspaceId, "203.0.113.2"),
  ])
    t.app.clicks!.recordVisit(v);
  await t.app.clicks!.flush();
  const today = new Date().toISOString().slice(0, 10);
  expect((await api.analytics.daily({ link_id: link.id })).days).toEqual([{ day: today, clicks: 4, visitors: 3 }]);
  expect((await api.analytics.daily({})).days).toEqual([{ day: today, clicks: 4, visitors: 3 }]);
  // Another workspace sees none of it, and not the link either.
  expect((await t.caller(bob.auth).analytics.daily({})).days).toEqual([]);
  await expect(t.caller(bob.auth).analytics.daily({ link_id: link.id })).rejects.toMatchObject({ message: "NOT_FOUND" });
});

it("the CSV export carries each click's visitor key; the REST click records keep their documented shape", async () => {
  const api = t.caller(alice.auth);
  const link = await api.link.create({ url: "https://dest.example/b" });
  t.app.clicks!.recordVisit(visit(link.id, alice.workspaceId, "198.51.100.9"));
  t.app.clicks!.recordVisit(visit(link.id, alice.workspaceId, "198.51.100.9"));
  await t.app.clicks!.flush();
  const { clicks } = await api.analytics.export({ link_id: link.id });
  expect(clicks).toHaveLength(2);
  expect(clicks[0].visitor).toMatch(/^[A-Za-z0-9_-]{22}$/);
  expect(clicks[1].visitor).toBe(clicks[0].visitor);
  const rest = await api.analytics.link({ id: link.id });
  expect(rest.clicks).toHaveLength(2);
  for (const c of rest.clicks) expect(c).not.toHaveProperty("visitor");
});
