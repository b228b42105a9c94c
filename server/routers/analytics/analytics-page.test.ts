import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClickRecord } from "../../core/clicks";
import { clickRecord } from "../../test/click-records";
import { signedInDashboard } from "../../test/dashboard-session";
import { http, type TestServer, type TestUser } from "../../test/harness";

describe.skipIf(!existsSync("build/index.js"))("analytics page (Remix, no JavaScript)", () => {
  let t: TestServer;
  let u: TestUser;
  let cookie: string;
  beforeAll(async () => void ({ t, u, cookie } = await signedInDashboard({ plan: "pro" })));
  afterAll(() => t?.close());

  const click = (linkId: string, timestamp: number, over: Partial<ClickRecord> = {}) =>
    clickRecord(linkId, u.workspaceId, timestamp, { country: "US", city: "Boston", platform: "Windows", browser: "Chrome 126", visitor: "a", ...over });
  const page = (query: string) => http(`${t.appUrl}/analytics?${query}`, { headers: { cookie } });
  const testId = (html: string, id: string) => new RegExp(`data-testid="${id}"[^>]*>([^<]*)<`).exec(html)?.[1];

  it("the page's totals, visitors and breakdowns are the breakdown procedure's numbers for the same range and filters", async () => {
    const link = await t.caller(u.auth).link.create({ url: "https://dest.example/" });
    const day = Date.UTC(2025, 4, 6, 12);
    for (const r of [
      click(link.id, day, { visitor: "a" }),
      click(link.id, day + 1, { visitor: "a", browser: "Firefox 128" }),
      click(link.id, day + 2, { visitor: "b", country: "DE", city: "Berlin", referer: "https://news.example/x" }),
      click(link.id, day + 86_400_000, { visitor: "a", trigger: "qr" }),
    ])
      t.app.clicks!.record(r);
    await t.app.clicks!.flush();

    const view = "from=2025-05-06&to=2025-05-07&tz=UTC";
    const html = (await page(view)).text;
    const api = await http(`${t.api}/analytics/breakdown?by=day&from=${Date.UTC(2025, 4, 6)}&to=${Date.UTC(2025, 4, 8) - 1}`, { headers: u.auth });
    expect(api.json.total).toEqual({ clicks: 4, visitors: 3 });
    expect(testId(html, "click-count")).toBe(String(api.json.total.clicks));
    expect(testId(html, "visitor-count")).toBe(String(api.json.total.visitors));
    expect(html).toContain("Boston, US");
    expect(html).toContain("news.example");
    // Scans of the QR code are told apart from visits through the link.
    const trigger = /data-testid="breakdown-trigger"[\s\S]*?<\/section>/.exec(html)?.[0] ?? "";
    expect(trigger).toContain("QR code");
    const qrOnly = (await page(`${view}&trigger=qr`)).text;
    expect(testId(qrOnly, "click-count")).toBe("1");

    const filtered = (await page(`${view}&browser=Chrome%20126`)).text;
    const apiFiltered = await http(`${t.api}/analytics/breakdown?by=country&browser=Chrome%20126&from=${Date.UTC(2025, 4, 6)}&to=${Date.UTC(2025, 4, 8) - 1}`, {
      headers: u.auth,
    });
    expect(testId(filtered, "click-count")).toBe(String(apiFiltered.json.total.clicks));
    expect(apiFiltered.json.total.clicks).toBe(3);
  });

  it("a day that is not a day marks the From field and still shows the default view", async () => {
    const r = await page("from=2025-02-30");
    expect(r.status).toBe(200);
    expect(r.text).toContain('id="from-err"');
    expect(r.text).toContain("must be a day YYYY-MM-DD");
  });
});
