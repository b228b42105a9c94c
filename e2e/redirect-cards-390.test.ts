import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestServer, http, type TestServer, type TestUser } from "../server/test/harness";
import { launch, newPage, shot, USER_AGENT } from "./harness";

// The redirect host's own pages (password form, not found) on a 390 px phone: the card fits the
// screen, so nothing scrolls sideways.
let t: TestServer;
let owner: TestUser;
let browser: Browser;

beforeAll(async () => {
  t = await createTestServer();
  owner = await t.user({ plan: "pro" });
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe("redirect host cards at 390 px", () => {
  it("the password and not-found cards fit a 390 px screen: no horizontal scroll", async () => {
    const r = await http(`${t.api}/links`, { method: "POST", json: { url: "https://dest.example/x", password: "open sesame" }, headers: owner.auth });
    expect(r.status, r.text).toBe(201);
    const { slug } = r.json as { slug: string };
    const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, userAgent: USER_AGENT, javaScriptEnabled: false });
    const page = await newPage(ctx);
    const fits = () =>
      page.evaluate(() => ({
        scroll: document.documentElement.scrollWidth,
        view: window.innerWidth,
        left: document.querySelector("main")!.getBoundingClientRect().left,
        right: document.querySelector("main")!.getBoundingClientRect().right,
      }));

    await page.goto(`${t.redirect}/${slug}`);
    await page.getByLabel("Password").fill("not it");
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByText("Wrong password").waitFor();
    const password = await fits();
    expect(password.scroll).toBeLessThanOrEqual(password.view);
    // The whole card on screen with its 1 rem margin each side (padding inside its width).
    expect(password.left).toBeGreaterThanOrEqual(16);
    expect(password.right).toBeLessThanOrEqual(password.view - 16);
    await shot(page, "redirect-password-390px");

    expect((await page.goto(`${t.redirect}/no-such-${Date.now().toString(36)}`))?.status()).toBe(404);
    const missing = await fits();
    expect(missing.scroll).toBeLessThanOrEqual(missing.view);
    // The whole card on screen with its 1 rem margin each side (padding inside its width).
    expect(missing.left).toBeGreaterThanOrEqual(16);
    expect(missing.right).toBeLessThanOrEqual(missing.view - 16);
    await shot(page, "redirect-not-found-390px");
    await ctx.close();
  });
});
