import { randomBytes } from "node:crypto";
import type { Browser, BrowserContext, Page } from "playwright-core";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launch, newPage, signIn, startServer, USER_AGENT, type Server } from "./harness";

// The linktree editor's avatar upload in Chromium: the image shows in the live preview once
// uploaded, and a file over 2 MB is stopped before sending with a message saying so.
let server: Server;
let browser: Browser;
let ctx: BrowserContext;
let page: Page & { problems: string[] };
const email = `tree-avatar-${Date.now()}@example.com`;

beforeAll(async () => {
  server = await startServer();
  browser = await launch();
  ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, userAgent: USER_AGENT });
  page = await newPage(ctx);
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe("linktree avatar upload", () => {
  it("an uploaded image shows in the live preview; over 2 MB is stopped with a message", async () => {
    await page.goto(`${server.appUrl}/linktrees`);
    await page.waitForURL(/\/login/);
    await signIn(page, server, email);
    await page.goto(`${server.appUrl}/linktrees`);
    await page.getByLabel("Title").fill("Avatar page");
    await page.getByLabel("Slug").fill(`avatar-${Date.now().toString(36)}`);
    await page.getByRole("button", { name: "Create linktree" }).click();
    await page.waitForURL(/\/linktrees\/.+/);

    const png = await sharp({ create: { width: 800, height: 600, channels: 3, background: "#0a6" } })
      .png()
      .toBuffer();
    await page.getByLabel("Upload an image").setInputFiles({ name: "me.png", mimeType: "image/png", buffer: png });
    await page.getByRole("button", { name: "Upload avatar" }).click();
    await page.getByText("Avatar uploaded.").waitFor();
    const src = await page.getByTestId("preview").locator("img.avatar").getAttribute("src");
    expect(src).toMatch(/\/uploads\/avatars\/[0-9a-z]{24}\.webp$/);

    const big = await sharp(randomBytes(900 * 900 * 3), { raw: { width: 900, height: 900, channels: 3 } })
      .png({ compressionLevel: 0 })
      .toBuffer();
    const input = page.getByLabel("Upload an image");
    await input.setInputFiles({ name: "big.png", mimeType: "image/png", buffer: big });
    await expect(input.evaluate((el: HTMLInputElement) => el.validationMessage)).resolves.toBe("The image must be at most 2 MB.");
    expect(page.problems).toEqual([]);
  });
});
