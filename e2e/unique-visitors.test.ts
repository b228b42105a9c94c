import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { launch, newPage, shot, signIn, startServer, USER_AGENT, type Server } from "./harness";

let server: Server;
let browser: Browser;
let ctx: BrowserContext;
let page: Page & { problems: string[] };

beforeAll(async () => {
  [server, browser] = await Promise.all([startServer(), launch()]);
  ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, userAgent: USER_AGENT });
  page = await newPage(ctx);
  await signIn(page, server, `visitors-${Date.now()}@example.com`);
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const OTHER_BROWSER = USER_AGENT.replace("Chrome/126.0.0.0", "Chrome/125.0.0.0");

it("the analytics page shows clicks and unique visitors per day, and the CSV export has the visitor key", async () => {
  await page.goto(`${server.appUrl}/links/new`);
  await page.getByLabel("Destination URL").fill(`${server.appUrl}/report`);
  await page.getByRole("button", { name: "Create link" }).click();
  await page.waitForURL(/\/links\/[0-9a-z]{8}\?created=1/);
  const linkId = page.url().match(/\/links\/([0-9a-z]{8})/)![1];
  const shortUrl = (await page.getByTestId("short-url").textContent())!;
  // One person visits twice, another browser once: three clicks, two visitors.
  for (const ua of [USER_AGENT, USER_AGENT, OTHER_BROWSER]) {
    const visitor = await browser.newPage({ userAgent: ua });
    await visitor.goto(shortUrl);
    await visitor.close();
  }
  await page.goto(`${server.appUrl}/analytics?link=${linkId}`);
  for (let i = 0; i < 40 && (await page.getByTestId("click-count").textContent()) !== "3"; i++) {
    await new Promise((r) => setTimeout(r, 250));
    await page.reload();
  }
  expect(await page.getByTestId("click-count").textContent()).toBe("3");
  expect(await page.getByTestId("visitor-count").textContent()).toBe("2");
  const row = page.getByTestId("daily-table").locator("tbody tr").first();
  expect(await row.locator("td").allTextContents()).toEqual([new Date().toISOString().slice(0, 10), "3", "2"]);
  await shot(page, "analytics-unique-visitors");
  const csv = (await (await ctx.request.get(`${server.appUrl}/analytics.csv?link=${linkId}`)).text()).trim().split("\r\n");
  const header = csv[0].split(",");
  expect(header.at(-1)).toBe("visitor");
  const keys = csv.slice(1).map((l) => l.split(",").at(-1));
  expect(keys).toHaveLength(3);
  expect(new Set(keys).size).toBe(2);
  expect(page.problems).toEqual([]);
});
