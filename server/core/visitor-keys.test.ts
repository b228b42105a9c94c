import { eq } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { clicks, visitorSalts } from "../../db/schema";
import { createTestApp, type TestApp } from "../test/harness";
import { PEOPLE } from "../redirect/ua-fixtures";
import { startClickRecorder, type Visit } from "./clicks";
import { SALT_GRACE_MS, utcDay, VisitorKeys } from "./visitor-keys";

let t: TestApp;
beforeAll(async () => void (t = await createTestApp()));
afterAll(() => t.close());

const DAY = 86_400_000;
const visit = (linkId: string, over: Partial<Visit> = {}): Visit => ({
  linkId,
  workspaceId: "public",
  timestamp: Date.now(),
  userAgent: PEOPLE.macSafari,
  ip: "203.0.113.7",
  referer: null,
  rule: "url",
  edge: null,
  ...over,
});

it("each click carries a visitor key: the same address and User-Agent on one day share it, another address or agent does not", async () => {
  const rec = startClickRecorder(t.app, { intervalMs: 60_000 });
  rec.recordVisit(visit("vis00001"));
  rec.recordVisit(visit("vis00001", { timestamp: Date.now() + 1 }));
  rec.recordVisit(visit("vis00001", { ip: "203.0.113.8" }));
  rec.recordVisit(visit("vis00001", { userAgent: PEOPLE.androidChrome }));
  await rec.close();
  const keys = (await t.app.db.select({ visitor: clicks.visitor, ts: clicks.ts }).from(clicks).where(eq(clicks.linkId, "vis00001"))).map((r) => r.visitor);
  expect(keys).toHaveLength(4);
  for (const k of keys) expect(k).toMatch(/^[A-Za-z0-9_-]{22}$/);
  expect(new Set(keys).size).toBe(3);
  // The key is no address: nothing in the stored row is the visitor's address.
  const [row] = await t.app.db.select().from(clicks).where(eq(clicks.linkId, "vis00001")).limit(1);
  expect(JSON.stringify(row)).not.toContain("203.0.113");
});

it("every instance uses the same salt of the day, so a visitor is one visitor across instances", async () => {
  const now = Date.now();
  const a = await new VisitorKeys(t.app.db).keyFor(now, "198.51.100.1", "ua", now);
  const b = await new VisitorKeys(t.app.db).keyFor(now, "198.51.100.1", "ua", now);
  expect(a).not.toBeNull();
  expect(a).toBe(b);
});

it("a day's salt is deleted when the day ends, so keys cannot be linked across days or recomputed later", async () => {
  const keys = new VisitorKeys(t.app.db);
  const day1 = Date.parse("2031-03-04T12:00:00Z");
  const day2 = day1 + DAY;
  const k1 = await keys.keyFor(day1, "198.51.100.2", "ua", day1);
  expect(k1).not.toBeNull();
  expect(
    await t.app.db
      .select()
      .from(visitorSalts)
      .where(eq(visitorSalts.day, utcDay(day1))),
  ).toHaveLength(1);
  // Past midnight and the grace minute, the salt of the day before is gone, here and in the database.
  const after = Date.parse("2031-03-05T00:00:00Z") + SALT_GRACE_MS + 1;
  await keys.sweep(after);
  expect(
    await t.app.db
      .select()
      .from(visitorSalts)
      .where(eq(visitorSalts.day, utcDay(day1))),
  ).toHaveLength(0);
  expect(await keys.keyFor(day1, "198.51.100.2", "ua", after)).toBeNull();
  expect(await new VisitorKeys(t.app.db).keyFor(day1, "198.51.100.2", "ua", after)).toBeNull();
  // The next day has a salt of its own: the same visitor gets an unrelated key.
  const k2 = await keys.keyFor(day2, "198.51.100.2", "ua", day2);
  expect(k2).not.toBeNull();
  expect(k2).not.toBe(k1);
});

it("the key at hand without waiting is the stored key: none before the day's salt is read, the same one after", async () => {
  const keys = new VisitorKeys(t.app.db);
  const now = Date.now();
  expect(keys.knownKey(now, "203.0.113.9", PEOPLE.macSafari)).toBeUndefined();
  const key = await keys.keyFor(now, "203.0.113.9", PEOPLE.macSafari);
  expect(key).toMatch(/^[A-Za-z0-9_-]{22}$/);
  expect(keys.knownKey(now + 1, "203.0.113.9", PEOPLE.macSafari)).toBe(key);
  expect(keys.knownKey(now, "203.0.113.10", PEOPLE.macSafari)).not.toBe(key);
});
