import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { launch, newPage, shot, signIn, startServer, USER_AGENT, type Server } from "./harness";

let server: Server;
let browser: Browser;
let ctx: BrowserContext;
let page: Page & { problems: string[] };

beforeAll(async () => {
  // The edge's viewer headers stand in for GeoIP, so the clicks have countries and cities.
  [server, browser] = await Promise.all([startServer({ EDGE_HEADERS: "cloudfront" }), launch()]);
  ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, userAgent: USER_AGENT, timezoneId: "Europe/Berlin" });
  page = await newPage(ctx);
  await signIn(page, server, `analytics-${Date.now()}@example.com`);
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";

async function createLink(url: string): Promise<string> {
  await page.goto(`${server.appUrl}/links/new`);
  await page.getByLabel("Destination URL").fill(url);
  await page.getByRole("button", { name: "Create link" }).click();
  await page.waitForURL(/\/links\/[0-9a-z]{8}\?created=1/);
  return (await page.getByTestId("short-url").textContent())!;
}

async function visit(shortUrl: string, userAgent: string, country: string, city: string) {
  const c = await browser.newContext({ userAgent, extraHTTPHeaders: { "cloudfront-viewer-country": country, "cloudfront-viewer-city": city } });
  const p = await c.newPage();
  await p.goto(shortUrl);
  await c.close();
}

it("the analytics page shows totals, the comparison and breakdowns in the viewer's zone; clicking a browser filters the countries", async () => {
  const a = await createLink(`${server.appUrl}/report?a`);
  const b = await createLink(`${server.appUrl}/report?b`);
  await visit(a, USER_AGENT, "DE", "Berlin");
  await visit(a, USER_AGENT, "DE", "Berlin");
  await visit(a, FIREFOX, "US", "Boston");
  await visit(b, USER_AGENT, "FR", "Paris");

  await page.goto(`${server.appUrl}/analytics?range=7d`);
  for (let i = 0; i < 40 && (await page.getByTestId("click-count").textContent()) !== "4"; i++) {
    await new Promise((r) => setTimeout(r, 250));
    await page.reload();
  }
  expect(await page.getByTestId("click-count").textContent()).toBe("4");
  // The browser's zone reached the server (cookie set by the page's script).
  expect(await page.getByTestId("time-zone").textContent()).toBe("Europe/Berlin");
  expect(await page.getByTestId("comparison").textContent()).toContain("vs. 0 in the previous period");
  const countries = page.getByTestId("breakdown-country");
  expect(await countries.textContent()).toContain("(US)");
  const germany = countries.getByRole("link", { name: /\(DE\)/ });
  expect(await germany.textContent()).toMatch(/\(DE\)\s*2/);
  expect(await page.getByTestId("breakdown-city").textContent()).toContain("Boston, US");
  await shot(page, "analytics-page-1280");
  // The CSV export covers the same range: the four clicks.
  const csv = await ctx.request.get(new URL((await page.getByTestId("export-csv").getAttribute("href"))!, server.appUrl).href);
  expect((await csv.text()).trim().split("\r\n")).toHaveLength(5);

  // Cross-filtering: Chrome only, so no US click is left anywhere on the page.
  await page
    .getByTestId("breakdown-browser")
    .getByRole("link", { name: /Chrome/ })
    .click();
  await page.waitForURL(/browser=Chrome/);
  await page.getByTestId("chip-browser").waitFor();
  expect(await page.getByTestId("click-count").textContent()).toBe("3");
  expect(await countries.textContent()).not.toContain("(US)");
  expect(await countries.textContent()).toContain("(FR)");
  await shot(page, "analytics-page-filtered-1280");

  // The filter chip removes the filter again.
  await page.getByTestId("chip-browser").click();
  await page.waitForURL((u) => !u.search.includes("browser="));
  await page.getByTestId("click-count").filter({ hasText: "4" }).waitFor();

  // A zone name that is not one is refused (400), never guessed.
  expect((await page.goto(`${server.appUrl}/analytics?tz=Mars%2FOlympus`))!.status()).toBe(400);
  await page.goto(`${server.appUrl}/analytics?range=7d`);

  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
  await shot(page, "analytics-page-390");
  expect(page.problems).toEqual([]);
});
