import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launch, newPage, shot, signIn, startServer, USER_AGENT, type Server } from "./harness";

/**
 * The expiry field is read in the browser's time zone, and saving the form unchanged
 * keeps the stored instant. Europe/Berlin is UTC+1 in winter and UTC+2 in summer, so both dates
 * below also catch an offset taken from today instead of from the date typed.
 */
let server: Server;
let browser: Browser;
let ctx: BrowserContext;
let page: Page & { problems: string[] };
let linkId = "";
const email = `tz${Date.now()}@example.com`;

const WINTER = { local: "2030-01-15T12:00", utc: Date.UTC(2030, 0, 15, 11, 0) };
const SUMMER = { local: "2030-07-15T12:00", utc: Date.UTC(2030, 6, 15, 10, 0) };

beforeAll(async () => {
  server = await startServer();
  browser = await launch();
  ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, userAgent: USER_AGENT, timezoneId: "Europe/Berlin" });
  page = await newPage(ctx);
  await signIn(page, server, email);
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

async function storedExpiry(): Promise<number | null> {
  const r = await ctx.request.get(`${server.appUrl}/api/links/${linkId}`);
  expect(r.status()).toBe(200);
  return ((await r.json()) as { expires_at: number | null }).expires_at;
}

const expiryInput = () => page.getByLabel("Expires at");

/** Waits for hydration: the hint names the browser's zone once the page's script runs. */
async function openLink() {
  await page.goto(`${server.appUrl}/links/${linkId}`);
  await page.getByText("In Europe/Berlin").waitFor();
}

async function saveUnchanged() {
  const before = await page.getByTestId("short-url").textContent();
  await page.getByRole("button", { name: "Save changes" }).click();
  await page.getByText("Saved.").waitFor();
  expect(await page.getByTestId("short-url").textContent()).toBe(before);
}

describe("link expiry in a Europe/Berlin browser", () => {
  it("stores 12:00 typed in Berlin as 12:00 Berlin time", async () => {
    await page.goto(`${server.appUrl}/links/new`);
    await page.getByText("In Europe/Berlin").waitFor();
    await page.getByLabel("Destination URL").fill("https://example.com/expiring");
    await expiryInput().fill(WINTER.local);
    await page.getByRole("button", { name: "Create link" }).click();
    await page.waitForURL(/\/links\/[0-9a-z]{8}\?created=1/);
    linkId = page.url().match(/\/links\/([0-9a-z]{8})/)![1];
    expect(await storedExpiry()).toBe(WINTER.utc);
  });

  it("shows the stored expiry as 12:00 again after a reload", async () => {
    await openLink();
    expect(await expiryInput().inputValue()).toBe(WINTER.local);
  });

  it("saving twice with nothing touched keeps the expiry exactly", async () => {
    for (let i = 0; i < 2; i++) {
      await openLink();
      await saveUnchanged();
      expect(await storedExpiry(), `after save ${i + 1}`).toBe(WINTER.utc);
      expect(await expiryInput().inputValue(), `after save ${i + 1}`).toBe(WINTER.local);
    }
    await openLink();
    expect(await expiryInput().inputValue()).toBe(WINTER.local);
  });

  it("a summer date uses the summer offset (UTC+2), and survives unchanged saves", async () => {
    await openLink();
    await expiryInput().fill(SUMMER.local);
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByText("Saved.").waitFor();
    expect(await storedExpiry()).toBe(SUMMER.utc);
    await openLink();
    expect(await expiryInput().inputValue()).toBe(SUMMER.local);
    await saveUnchanged();
    expect(await storedExpiry()).toBe(SUMMER.utc);
    await shot(page, "expiry-berlin");
    expect(page.problems).toEqual([]);
  });

  it("without JavaScript the field says it is UTC and is read as UTC", async () => {
    const plain = await browser.newContext({
      javaScriptEnabled: false,
      userAgent: USER_AGENT,
      timezoneId: "Europe/Berlin",
      storageState: await ctx.storageState(),
    });
    const p = await plain.newPage();
    await p.goto(`${server.appUrl}/links/${linkId}`);
    await p.getByText("In UTC").waitFor();
    // The server renders the stored instant in UTC, and an unchanged save keeps it.
    expect(await p.getByLabel("Expires at").inputValue()).toBe("2030-07-15T10:00");
    await p.getByRole("button", { name: "Save changes" }).click();
    await p.getByText("Saved.").waitFor();
    expect(await storedExpiry()).toBe(SUMMER.utc);
    await p.getByLabel("Expires at").fill("2030-07-15T18:30");
    await p.getByRole("button", { name: "Save changes" }).click();
    await p.getByText("Saved.").waitFor();
    expect(await storedExpiry()).toBe(Date.UTC(2030, 6, 15, 18, 30));
    await plain.close();
  });

  it("a failed save keeps the typed time, and the corrected save stores it in Berlin time", async () => {
    await openLink();
    await expiryInput().fill("2030-01-20T09:15");
    await page.getByLabel("Destination URL").fill("ftp://not-http");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByRole("alert").waitFor();
    expect(await expiryInput().inputValue()).toBe("2030-01-20T09:15");
    await page.getByLabel("Destination URL").fill("https://example.com/expiring");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByText("Saved.").waitFor();
    expect(await storedExpiry()).toBe(Date.UTC(2030, 0, 20, 8, 15));
    expect(await expiryInput().inputValue()).toBe("2030-01-20T09:15");
  });
});
