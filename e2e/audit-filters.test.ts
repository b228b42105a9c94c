import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launch, newPage, shot, signIn, startServer, USER_AGENT, type Server } from "./harness";

/**
 * The audit log page's filters in Chromium: person, action and object narrow the list, the address
 * keeps them (a reload or a shared link shows the same), and the plain GET form works with
 * JavaScript off too.
 */
let server: Server;
let browser: Browser;
let ctx: BrowserContext;
let page: Page & { problems: string[] };
const stamp = Date.now().toString(36);
const email = `auditor-${stamp}@example.com`;
let first = "";
let second = "";

beforeAll(async () => {
  server = await startServer();
  browser = await launch();
  ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, userAgent: USER_AGENT });
  page = await newPage(ctx);
  await signIn(page, server, email);
  // Two links made and one changed through the REST API with the page's own session.
  const api = (method: string, p: string, data?: unknown) => page.request.fetch(`${server.appUrl}/api${p}`, { method, data });
  first = (await (await api("POST", "/links", { url: "https://example.com/first" })).json()).id;
  second = (await (await api("POST", "/links", { url: "https://example.com/second" })).json()).id;
  expect((await api("PATCH", `/links/${first}`, { url: "https://example.com/first-changed" })).status()).toBe(200);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const rows = (p: Page) => p.getByTestId("audit-row");

describe("the audit log's filters", () => {
  it("action: only the chosen action's events, and the address says so", async () => {
    await page.goto(`${server.appUrl}/settings/audit`);
    expect(await rows(page).count()).toBeGreaterThanOrEqual(3);
    await page.getByLabel("Action").selectOption("link.updated");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/action=link\.updated/);
    await expect.poll(() => rows(page).count()).toBe(1);
    expect(await rows(page).first().textContent()).toContain(first);
    await shot(page, "audit-01-action-filter");
    expect(page.problems).toEqual([]);
  });

  it("object: one link's events by its id, kept across a reload", async () => {
    await page.goto(`${server.appUrl}/settings/audit`);
    await page.getByLabel("Object type").selectOption("link");
    await page.getByLabel("Object id").fill(first);
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(new RegExp(`target_id=${first}`));
    await expect.poll(() => rows(page).count()).toBe(2);
    await page.reload();
    expect(await rows(page).count()).toBe(2);
    expect(await page.getByLabel("Object id").inputValue()).toBe(first);
    for (const text of await rows(page).allTextContents()) expect(text).toContain(first);
    expect(page.problems).toEqual([]);
  });

  it("person: the signed-in owner's events; Clear shows everything again", async () => {
    await page.goto(`${server.appUrl}/settings/audit`);
    const all = await rows(page).count();
    await page.getByLabel("Person").selectOption({ label: email });
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/actor=/);
    expect(await rows(page).count()).toBe(all);
    await page.getByRole("link", { name: "Clear" }).click();
    await page.waitForURL(/\/settings\/audit$/);
    expect(await rows(page).count()).toBe(all);
  });

  it("works with JavaScript off: the form submits as a plain GET", async () => {
    const plain = await browser.newContext({ javaScriptEnabled: false, userAgent: USER_AGENT, storageState: await ctx.storageState() });
    const p = await plain.newPage();
    await p.goto(`${server.appUrl}/settings/audit`);
    await p.getByLabel("Action").selectOption("link.created");
    await p.getByRole("button", { name: "Filter" }).click();
    await p.waitForURL(/action=link\.created/);
    const texts = await rows(p).allTextContents();
    expect(texts).toHaveLength(2);
    expect(texts.join(" ")).toContain(second);
    expect(await p.getByLabel("Action").inputValue()).toBe("link.created");
    await plain.close();
  });

  it("a malformed filter in the address marks its field instead of failing the page", async () => {
    await page.goto(`${server.appUrl}/settings/audit?target_id=${encodeURIComponent("no spaces")}`);
    expect(await page.getByLabel("Object id").getAttribute("aria-invalid")).toBe("true");
    expect(await rows(page).count()).toBe(0);
  });
});
