import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClickRecord } from "../../core/clicks";
import { toPublicError } from "../../domain/errors";
import { clickRecord, recordClicks } from "../../test/click-records";
import { createTestApp, type TestApp, type TestUser } from "../../test/harness";
import { overview } from "../../../app/components/analytics/overview.server";

let t: TestApp;
let alice: TestUser;
let bob: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  alice = await t.user({ plan: "pro" });
  bob = await t.user({ plan: "pro" });
});
afterAll(() => t?.close());

const api = (u: TestUser = alice) => t.caller(u.auth).analytics;
type ViewInput = { link_id?: string; tz?: string; from?: string; to?: string; interval?: "hour" | "day" } & Record<string, string | undefined>;
/** The dashboard's analytics page: its overview, made of breakdown calls through the same caller. */
const dashboard = (u: TestUser, { link_id, tz, from, to, interval, ...filters }: ViewInput) =>
  overview(t.caller(u.auth), { tz: tz ?? "UTC", from, to, interval: interval as "hour" | "day" | undefined, linkId: link_id, filters });
const newLink = () => t.caller(alice.auth).link.create({ url: "https://dest.example/" });

const click = (linkId: string, timestamp: number, over: Partial<ClickRecord> = {}) =>
  clickRecord(linkId, alice.workspaceId, timestamp, { country: "DE", city: "Berlin", platform: "Windows", browser: "Chrome 126", ...over });
const store = (rows: ClickRecord[]) => recordClicks(t.app, rows);
/** The public error a procedure call ends in, as the HTTP layer would answer it. */
const failure = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    return toPublicError(e);
  }
  throw new Error("expected the call to fail");
};

describe("the analytics page's overview (breakdowns through the caller)", () => {
  it("buckets hours and days in the viewer's time zone across a DST change (Europe/Berlin, 29 March 2026)", async () => {
    const l = await newLink();
    await store([
      click(l.id, Date.UTC(2026, 2, 28, 23, 30)), // 00:30 CET on the 29th
      click(l.id, Date.UTC(2026, 2, 29, 0, 30)), // 01:30 CET
      click(l.id, Date.UTC(2026, 2, 29, 1, 30)), // 03:30 CEST: 02:00-03:00 does not exist that night
      click(l.id, Date.UTC(2026, 2, 29, 22, 30)), // 00:30 CEST on the 30th
    ]);
    const hourly = await dashboard(alice, { link_id: l.id, tz: "Europe/Berlin", from: "2026-03-29", to: "2026-03-29" });
    expect(hourly.interval).toBe("hour");
    expect(hourly.from).toBe(Date.UTC(2026, 2, 28, 23));
    expect(hourly.to).toBe(Date.UTC(2026, 2, 29, 22) - 1);
    expect(hourly.series).toHaveLength(23);
    expect(hourly.series.map((p) => p.bucket)).not.toContain("2026-03-29 02:00");
    expect(hourly.series.filter((p) => p.clicks).map((p) => [p.bucket, p.clicks])).toEqual([
      ["2026-03-29 00:00", 1],
      ["2026-03-29 01:00", 1],
      ["2026-03-29 03:00", 1],
    ]);
    expect(hourly.total).toBe(3);

    const daily = await dashboard(alice, { link_id: l.id, tz: "Europe/Berlin", from: "2026-03-28", to: "2026-03-30", interval: "day" });
    expect(daily.series.map((p) => [p.bucket, p.clicks])).toEqual([
      ["2026-03-28", 0],
      ["2026-03-29", 3],
      ["2026-03-30", 1],
    ]);
    const utc = await dashboard(alice, { link_id: l.id, tz: "UTC", from: "2026-03-28", to: "2026-03-30", interval: "day" });
    expect(utc.series.map((p) => [p.bucket, p.clicks])).toEqual([
      ["2026-03-28", 1],
      ["2026-03-29", 3],
      ["2026-03-30", 0],
    ]);
  });

  it("compares with the previous period of the same number of days: totals, % change and its series point by point", async () => {
    const l = await newLink();
    const at = (d: number, h = 12) => Date.UTC(2025, 5, d, h);
    await store([
      click(l.id, at(7)),
      click(l.id, at(7)),
      click(l.id, at(8)),
      click(l.id, at(8)),
      click(l.id, at(9)),
      click(l.id, at(10)),
      click(l.id, at(10)),
      click(l.id, at(6)), // before both periods
    ]);
    await store([click(l.id, at(9, 13), { visitor: "v1" }), click(l.id, at(9, 14), { visitor: "v1" }), click(l.id, at(10, 1), { visitor: "v1" })]);
    const d = await dashboard(alice, { link_id: l.id, from: "2025-06-09", to: "2025-06-10", interval: "day" });
    expect(d.total).toBe(6);
    expect(d.previous).toEqual({ from_day: "2025-06-07", to_day: "2025-06-08", from: Date.UTC(2025, 5, 7), to: Date.UTC(2025, 5, 9) - 1, total: 4 });
    expect(d.change).toBe(50);
    expect(d.series).toEqual([
      { bucket: "2025-06-09", clicks: 3, previous: 2 },
      { bucket: "2025-06-10", clicks: 3, previous: 2 },
    ]);
    // One visitor key on each of two UTC days; clicks without a key are not visitors.
    expect(d.visitors).toBe(2);
    // Without a start ("all time") the series starts at the first click and nothing is compared.
    const all = await dashboard(alice, { link_id: l.id, to: "2025-06-10" });
    expect(all.from_day).toBe("2025-06-06");
    expect(all.total).toBe(11);
    expect(all.previous).toBeNull();
    expect(all.change).toBeNull();
  });

  describe("every breakdown filters the series and the other breakdowns (cross-filtering)", () => {
    let linkId = "";
    const T = Date.UTC(2025, 8, 1, 12);
    beforeAll(async () => {
      linkId = (await newLink()).id;
      await store([
        click(linkId, T, { referer: "https://news.example/a" }),
        click(linkId, T + 1, { city: "Munich", device: "mobile", browser: "Mobile Safari 18", platform: "iOS", rule: "ios" }),
        click(linkId, T + 2, {
          country: "US",
          city: "Boston",
          device: "mobile",
          platform: "Android",
          referer: "https://someone@Search.example:8080/q?x=1",
          rule: "android",
        }),
        click(linkId, T + 3, { country: null, city: null, device: "tablet", browser: null, platform: null, referer: "https://news.example/b", rule: "geo" }),
      ]);
    });
    const view = (filters: Record<string, string>) => dashboard(alice, { link_id: linkId, from: "2025-09-01", to: "2025-09-01", ...filters });

    it.each([
      [{ browser: "Chrome 126" }, 2, ["DE", "US"]],
      [{ browser: "(none)" }, 1, [null]],
      [{ country: "DE" }, 2, ["DE"]],
      [{ country: "(none)" }, 1, [null]],
      [{ city: "Boston" }, 1, ["US"]],
      [{ device: "mobile" }, 2, ["DE", "US"]],
      [{ platform: "iOS" }, 1, ["DE"]],
      [{ referrer: "news.example" }, 2, ["DE", null]],
      [{ referrer: "search.example" }, 1, ["US"]],
      [{ referrer: "(none)" }, 1, ["DE"]],
      [{ rule: "geo" }, 1, [null]],
      [{ browser: "Chrome 126", country: "US" }, 1, ["US"]],
    ])("filter %j: %i clicks, countries %j", async (filters, total, countries) => {
      const d = await view(filters);
      expect(d.total).toBe(total);
      expect(d.series.reduce((s, p) => s + p.clicks, 0)).toBe(total);
      expect(d.breakdowns.country.map((r) => r.value).sort()).toEqual(countries);
      for (const rows of Object.values(d.breakdowns)) expect(rows.reduce((s, r) => s + r.clicks, 0)).toBe(total);
    });

    it("lists top values with labels: link slugs, referrer domains, cities with their country, unknowns", async () => {
      const d = await view({});
      expect(d.total).toBe(4);
      expect(d.breakdowns.link).toEqual([{ value: linkId, label: expect.any(String), clicks: 4 }]);
      expect(d.breakdowns.referrer).toEqual([
        { value: "news.example", label: "news.example", clicks: 2 },
        { value: "search.example", label: "search.example", clicks: 1 },
        { value: null, label: "Direct / none", clicks: 1 },
      ]);
      expect(d.breakdowns.city).toContainEqual({ value: "Boston", label: "Boston, US", clicks: 1 });
      expect(d.breakdowns.browser).toContainEqual({ value: null, label: "Unknown", clicks: 1 });
      expect(d.breakdowns.device[0]).toEqual({ value: "mobile", label: "mobile", clicks: 2 });
      expect(d.breakdowns.rule.map((r) => r.value).sort()).toEqual(["android", "geo", "ios", "url"]);
    });
  });

  it.each([
    [{ tz: "Mars/Olympus_Mons" }, "tz"],
    [{ tz: "+05:00" }, "tz"],
    [{ country: "de" }, "country"],
    [{ device: "fridge" }, "device"],
    [{ rule: "nope" }, "rule"],
    [{ browser: "" }, "browser"],
    [{ colour: "red" }, "colour"],
  ])("a bad zone or filter %j → 400 VALIDATION_FAILED naming the field", async (input, field) => {
    const e = await failure(api().breakdown({ by: "country", ...input } as never));
    expect(e.status).toBe(400);
    expect(e.body.error).toBe("VALIDATION_FAILED");
    expect(Object.keys(e.body.fields ?? {})).toEqual([field]);
  });

  it("another workspace's link → 404, and another workspace's clicks are never counted", async () => {
    const l = await newLink();
    await store([click(l.id, Date.UTC(2025, 10, 3, 9))]);
    const e = await failure(dashboard(bob, { link_id: l.id }));
    expect(e.status).toBe(404);
    expect(e.body.error).toBe("NOT_FOUND");
    const theirs = await dashboard(bob, { from: "2025-11-03", to: "2025-11-03" });
    expect(theirs.total).toBe(0);
    expect(Object.values(theirs.breakdowns).flat()).toEqual([]);
    expect((await dashboard(alice, { from: "2025-11-03", to: "2025-11-03" })).total).toBe(1);
  });
});
