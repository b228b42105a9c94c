import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launch, newPage, signIn, startServer, USER_AGENT, type Server } from "./harness";

let server: Server;
let browser: Browser;
let page: Page & { problems: string[] };

beforeAll(async () => {
  server = await startServer();
  browser = await launch();
  page = await newPage(await browser.newContext({ viewport: { width: 1280, height: 900 }, userAgent: USER_AGENT }));
  await signIn(page, server, `form${Date.now()}@example.com`);
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe("link form normalisation in Chromium", () => {
  it("normalises tags as a person types them and adds https:// to an address without a scheme, showing the result", async () => {
    await page.goto(`${server.appUrl}/links/new`);
    await page.getByLabel("Destination URL").fill("example.com/x");
    await page.getByLabel("Tags").fill("Campaign, Q4 Push, Café Crème");
    await page.getByLabel("Title", { exact: true }).fill("Autumn campaign");
    await page.getByLabel("Fallback URL after expiry").click();
    // Shown as they will be saved as soon as the fields are left.
    expect(await page.getByLabel("Destination URL").inputValue()).toBe("https://example.com/x");
    expect(await page.getByLabel("Tags").inputValue()).toBe("campaign, q4-push, cafe-creme");
    await page.getByRole("button", { name: "Create link" }).click();
    await page.waitForURL(/\/links\/[0-9a-z]{8}\?created=1/);
    // What was saved, read from the server: the page just navigated to may still hold the form's
    // typed fields for a moment while it hydrates.
    await page.reload();
    expect(await page.getByLabel("Destination URL").inputValue()).toBe("https://example.com/x");
    expect(await page.getByLabel("Tags").inputValue()).toBe("cafe-creme, campaign, q4-push");
    expect(await page.getByLabel("Title", { exact: true }).inputValue()).toBe("Autumn campaign");
    // The list shows the title and finds the link by it.
    await page.goto(`${server.appUrl}/links?q=autumn`);
    expect(await page.getByTestId("link-title").allTextContents()).toEqual(["Autumn campaign"]);
    expect(page.problems).toEqual([]);
  });

  it("normalises on the server too (a form sent without JavaScript), and a tag still refused is named", async () => {
    const noJs = await newPage(
      await browser.newContext({ javaScriptEnabled: false, userAgent: USER_AGENT, storageState: await page.context().storageState() }),
    );
    await noJs.goto(`${server.appUrl}/links/new`);
    await noJs.getByLabel("Destination URL").fill("example.org/no-js");
    await noJs.getByLabel("Tags").fill(`Spring Sale, ${"Very Long Tag ".repeat(3)}`);
    await noJs.getByRole("button", { name: "Create link" }).click();
    await noJs.getByRole("alert").waitFor();
    // The form comes back as it would be saved, and the error names the tag, not its index.
    expect(await noJs.getByLabel("Destination URL").inputValue()).toBe("https://example.org/no-js");
    expect(await noJs.getByLabel("Tags").inputValue()).toBe("spring-sale, very-long-tag-very-long-tag-very-long-tag");
    const text = await noJs.locator("form[aria-describedby=link-form-errors]").textContent();
    expect(text).toContain('"very-long-tag-very-long-tag-very-long-tag" is not a tag');
    expect(text).not.toMatch(/\b0: /);
  });
});
