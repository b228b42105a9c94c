import { mkdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import path from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestServer, http, type TestServer, type TestUser } from "../server/test/harness";

// The public linktree page in a real browser: rendered without JavaScript, and its buttons lead
// through the items' short links (which count the click) to the destinations.
const SCREENSHOTS = path.resolve("e2e/screenshots");
let t: TestServer;
let owner: TestUser;
let browser: Browser;
/** Stands in for the destination sites (a redirect target cannot be intercepted by route()). */
let dest: Server;
let destUrl = "";

beforeAll(async () => {
  t = await createTestServer({}, { remix: true });
  owner = await t.user({ plan: "pro" });
  dest = createServer((req, res) => res.writeHead(200, { "content-type": "text/html" }).end(`<title>Arrived</title><h1>Arrived at ${req.url}</h1>`));
  await new Promise<void>((r) => dest.listen(0, "127.0.0.1", r));
  destUrl = `http://127.0.0.1:${(dest.address() as { port: number }).port}`;
  mkdirSync(SCREENSHOTS, { recursive: true });
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  dest?.close();
});

const api = async (method: string, p: string, json?: unknown) => {
  const r = await http(`${t.api}${p}`, { method, json, headers: owner.auth });
  expect(r.status, `${method} ${p}: ${r.text}`).toBeLessThan(300);
  return r.json;
};

describe("linktree public page in Chromium", () => {
  it("renders on a phone without JavaScript and its buttons go through the short links", async () => {
    const tree = await api("POST", "/linktrees", {
      slug: `e2e-tree-${Date.now().toString(36)}`,
      title: "Maria Silva",
      bio: "Designer & photographer in Lisbon.",
    });
    const shop = await api("POST", `/linktrees/${tree.id}/items`, { title: "Shop", url: `${destUrl}/shop?utm_source=tree` });
    await api("POST", `/linktrees/${tree.id}/items`, { title: "Portfolio", url: `${destUrl}/portfolio` });
    await api("PATCH", `/linktrees/${tree.id}`, { published: true });

    // JavaScript off: the page must work as plain HTML.
    // A phone's user agent: headless Chromium's own says "HeadlessChrome", a bot, never counted.
    const userAgent = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36";
    const ctx = await browser.newContext({ viewport: { width: 360, height: 740 }, javaScriptEnabled: false, isMobile: true, userAgent });
    const page = await ctx.newPage();
    const problems: string[] = [];
    page.on("console", (m) => m.type() === "error" && problems.push(m.text()));

    const res = await page.goto(`${t.redirect}/${tree.slug}`);
    expect(res?.status()).toBe(200);
    await expect(page.getByRole("heading", { level: 1, name: "Maria Silva" }).isVisible()).resolves.toBe(true);
    const buttons = page.getByRole("navigation", { name: "Links of Maria Silva" }).getByRole("link");
    expect(await buttons.allTextContents()).toEqual(["Shop", "Portfolio"]);
    // Touch-sized buttons that fit the narrow screen.
    const box = await buttons.first().boundingBox();
    expect(box!.height).toBeGreaterThanOrEqual(44);
    expect(box!.x + box!.width).toBeLessThanOrEqual(360);
    await page.screenshot({ path: path.join(SCREENSHOTS, "linktree-page-360px.png"), fullPage: true });

    // Keyboard: the first Tab reaches the first button.
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Shop");

    await Promise.all([page.waitForURL(`${destUrl}/shop?utm_source=tree`), buttons.first().click()]);
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Arrived at /shop?utm_source=tree");
    expect(problems, problems.join("\n")).toEqual([]);
    await ctx.close();

    // The page view and the item click were counted (written in batches).
    await t.app.clicks?.flush();
    const stats = await api("GET", `/linktrees/${tree.id}/analytics`);
    expect(stats, JSON.stringify(stats)).toMatchObject({ views: 1, clicks: 1, items: [{ id: shop.id, count: 1 }, { count: 0 }] });
  });

  it("shows a not-found page while unpublished", async () => {
    const tree = await api("POST", "/linktrees", { slug: `e2e-draft-${Date.now().toString(36)}`, title: "Draft" });
    const ctx = await browser.newContext({ viewport: { width: 360, height: 740 } });
    const page = await ctx.newPage();
    const res = await page.goto(`${t.redirect}/${tree.slug}`);
    expect(res?.status()).toBe(404);
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Page not found");
    await ctx.close();
  });
});
