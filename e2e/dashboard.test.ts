import { writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, launch, USER_AGENT, newPage, shot, signIn, startServer, type Server } from "./harness";

let server: Server;
let browser: Browser;
let ctx: BrowserContext;
let page: Page & { problems: string[] };
const email = `owner${Date.now()}@example.com`;
const slug = `e2e-${Date.now().toString(36)}`;
let linkId = "";

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

/** Reloads until `check` passes: clicks are written in batches, off the request path. */
async function eventually(p: Page, check: () => Promise<boolean>, tries = 40) {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 250));
    await p.reload();
  }
  throw new Error("condition not met");
}

describe("dashboard in Chromium", () => {
  it("shortens a URL anonymously on the landing page", async () => {
    const anon = await newPage(await browser.newContext({ viewport: { width: 360, height: 740 }, userAgent: USER_AGENT }));
    await anon.goto(server.appUrl);
    await anon.getByLabel("Long URL").fill("https://example.com/landing");
    await anon.getByRole("button", { name: "Shorten" }).click();
    const short = await anon.getByTestId("short-url").textContent();
    expect(short).toMatch(new RegExp(`^${server.redirectUrl}/[0-9a-z]{4}$`));
    await shot(anon, "01-landing-360px");
    await anon.emulateMedia({ colorScheme: "dark" });
    await shot(anon, "01b-landing-360px-dark");
    expect(anon.problems).toEqual([]);
  });

  it("sends a signed-out visitor of a protected page to sign-in and back after the e-mailed code", async () => {
    await page.goto(`${server.appUrl}/settings/tokens`);
    await page.waitForURL(/\/login\?redirectTo=/);
    await signIn(page, server, email);
    await page.goto(`${server.appUrl}/links`);
    await expect(page.getByRole("heading", { name: "Links" }).first().isVisible()).resolves.toBe(true);
    await shot(page, "02-signed-in-links");
  });

  it("creates a link with slug, tags, UTM, targeting, expiry and share card; slug availability shows while typing", async () => {
    await page.goto(`${server.appUrl}/links/new`);
    await page.getByLabel("Destination URL").fill(`${server.appUrl}/report`);
    await page.getByLabel("Custom slug").fill(slug);
    // Hydrated and allowed by the CSP: the availability check runs through @trpc/client.
    await page.getByTestId("slug-status").filter({ hasText: "available" }).waitFor();
    await page.getByLabel("Tags").fill("launch, e2e");
    await page.getByText("UTM builder").click();
    await page.getByLabel("utm source").fill("newsletter");
    await page.getByRole("button", { name: "Apply to URL" }).click();
    expect(await page.getByLabel("Destination URL").inputValue()).toContain("utm_source=newsletter");
    await page.getByLabel("Country 1", { exact: true }).selectOption("BR");
    await page.getByLabel("Destination for country 1").fill("https://example.com/br");
    await page.getByLabel("Card title").fill("Launch day");
    await page.getByLabel("Description").fill("Everything about the launch");
    await shot(page, "03-link-form");
    await page.getByRole("button", { name: "Create link" }).click();
    await page.waitForURL(/\/links\/[0-9a-z]{8}\?created=1/);
    linkId = page.url().match(/\/links\/([0-9a-z]{8})/)![1];
    expect(await page.getByTestId("short-url").textContent()).toBe(`${server.redirectUrl}/${slug}`);
    // The share card preview shows the generated image once the title is saved.
    expect(await page.getByTestId("og-image").getAttribute("src")).toContain(`/_/og/${linkId}.png`);
    const qr = await ctx.request.get(`${server.appUrl}/links/${linkId}/qr?format=png`);
    expect(qr.headers()["content-type"]).toBe("image/png");
    await shot(page, "04-link-created");
    expect(page.problems).toEqual([]);
  });

  it("shows every API validation error next to its field", async () => {
    await page.goto(`${server.appUrl}/links/new`);
    await page.getByLabel("Destination URL").fill(`${server.redirectUrl}/loop`);
    await page.getByLabel("Custom slug").fill(slug);
    await page.getByRole("button", { name: "Create link" }).click();
    await page.getByRole("alert").waitFor();
    await shot(page, "05-link-errors");
    expect(await page.locator("#link-form-errors").textContent()).toMatch(/slug is already taken|Some fields|redirect domain/);
    expect(await page.getByText("must not point at the redirect domain").count()).toBeGreaterThan(0);
  });

  it("visits the short link and sees the click in analytics, then exports CSV", async () => {
    const visitor = await browser.newPage({ userAgent: USER_AGENT });
    await visitor.goto(`${server.redirectUrl}/${slug}`);
    expect(visitor.url()).toContain(`${server.appUrl}/report?utm_source=newsletter`);
    await visitor.close();
    await page.goto(`${server.appUrl}/analytics?link=${linkId}`);
    await eventually(page, async () => (await page.getByTestId("click-count").textContent()) === "1");
    await shot(page, "06-analytics");
    const csv = await ctx.request.get(`${server.appUrl}/analytics.csv?link=${linkId}`);
    expect(csv.headers()["content-type"]).toContain("text/csv");
    const lines = (await csv.text()).trim().split("\r\n");
    expect(lines[0]).toContain("timestamp_iso,timestamp,ts,link_id");
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(linkId);
  });

  it("finds the link by search and tag", async () => {
    await page.goto(`${server.appUrl}/links?q=${slug}`);
    expect(await page.getByTestId("link-row").count()).toBe(1);
    await page.goto(`${server.appUrl}/links?tag=e2e`);
    expect(await page.getByTestId("link-row").count()).toBe(1);
    await shot(page, "07-links-search");
  });

  it("builds and publishes a linktree, and a visitor follows one of its buttons", async () => {
    await page.goto(`${server.appUrl}/linktrees`);
    await page.getByLabel("Title").fill("Ana's links");
    await page.getByLabel("Slug").fill(`tree-${slug}`);
    await page.getByRole("button", { name: "Create linktree" }).click();
    await page.waitForURL(/\/linktrees\/.+/);
    for (const [title, url] of [
      ["Docs", `${server.appUrl}/docs`],
      ["Report", `${server.appUrl}/report?from=tree`],
    ]) {
      await page.getByLabel("Button title").fill(title);
      await page.getByLabel("Button URL").fill(url);
      await page.getByRole("button", { name: "Add button" }).click();
      await page.getByTestId("item-row").filter({ hasText: title }).waitFor();
    }
    // Keyboard-reachable reorder: move "Report" above "Docs".
    await page.getByRole("button", { name: "Move Report up" }).click();
    await page.getByTestId("item-row").first().filter({ hasText: "Report" }).waitFor();
    expect(await page.getByTestId("preview").textContent()).toMatch(/Report.*Docs/);
    await page.getByRole("button", { name: "Publish" }).click();
    await page.getByRole("button", { name: "Unpublish" }).waitFor();
    await shot(page, "08-linktree-editor");
    const visitor = await browser.newPage({ userAgent: USER_AGENT });
    await visitor.goto(`${server.redirectUrl}/tree-${slug}`);
    await shot(visitor, "09-linktree-public");
    await visitor.getByRole("link", { name: "Report" }).click();
    await visitor.waitForURL(/\/report\?from=tree/);
    await visitor.close();
  });

  it("creates a token shown once, explains the free plan's rule, and revokes it", async () => {
    await page.goto(`${server.appUrl}/settings/tokens`);
    await page.getByLabel("Name").fill("ci");
    await page.getByRole("button", { name: "Create token" }).click();
    const token = await page.getByTestId("new-token").textContent();
    expect(token).toMatch(/^tok_[0-9A-Za-z]{32}$/);
    expect(await page.getByTestId("plan-rule").textContent()).toContain("one live token");
    await shot(page, "10-token-created");
    const r = await fetch(`${server.appUrl}/api/links`, { headers: { authorization: `Bearer ${token}` } });
    expect(r.status).toBe(200);
    await page.getByRole("button", { name: "Revoke ci" }).click();
    await page.getByText("Token revoked").waitFor();
    expect((await fetch(`${server.appUrl}/api/links`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
    expect(await page.getByTestId("new-token").count()).toBe(0);
  });

  it("revokes another browser's session", async () => {
    const other = await browser.newContext({ userAgent: USER_AGENT });
    const otherPage = await newPage(other);
    await signIn(otherPage, server, email);
    await page.goto(`${server.appUrl}/settings/sessions`);
    expect(await page.getByTestId("session-row").count()).toBe(2);
    await shot(page, "11-sessions");
    await page.getByRole("button", { name: /^Revoke session/ }).click();
    await page.getByText("Session ended").waitFor();
    await shot(page, "11b-session-revoked");
    expect(await page.getByTestId("session-row").count()).toBe(1);
    await otherPage.goto(`${server.appUrl}/links`);
    await otherPage.waitForURL(/\/login/);
    await other.close();
  });

  it("uploads an avatar, resized and served from DATA_DIR/uploads", async () => {
    const file = path.join(os.tmpdir(), `avatar-${Date.now()}.png`);
    writeFileSync(
      file,
      await sharp({ create: { width: 800, height: 600, channels: 3, background: { r: 79, g: 70, b: 229 } } })
        .png()
        .toBuffer(),
    );
    await page.goto(`${server.appUrl}/settings`);
    await page.getByLabel("Upload an image").setInputFiles(file);
    await page.getByRole("button", { name: "Upload avatar" }).click();
    await page.getByText("Avatar updated").waitFor();
    const src = await page.getByTestId("avatar").getAttribute("src");
    expect(src).toMatch(/\/uploads\/avatars\/[0-9a-z]{24}\.webp$/);
    const img = await ctx.request.get(src!);
    expect(img.headers()["content-type"]).toBe("image/webp");
    expect((await sharp(await img.body()).metadata()).width).toBe(256);
    await shot(page, "12-account");
  });

  it("sends an abuse report without JavaScript, and an admin deletes the link from the queue", async () => {
    const noJs = await browser.newContext({ javaScriptEnabled: false, userAgent: USER_AGENT });
    const reporter = await noJs.newPage();
    await reporter.goto(`${server.appUrl}/report`);
    await reporter.getByLabel("Short link").fill(`${server.redirectUrl}/${slug}`);
    await reporter.getByLabel("Reason").selectOption("phishing");
    await reporter.getByLabel("Details (optional)").fill("Asks for my bank password");
    await reporter.getByRole("button", { name: "Send report" }).click();
    await reporter.waitForLoadState();
    await shot(reporter, "13-report-sent");
    await reporter.getByText("your report was received").waitFor();
    await reporter.goto(`${server.appUrl}/report`);
    await reporter.getByLabel("Short link").fill("https://elsewhere.example/abc");
    await reporter.getByLabel("Reason").selectOption("spam");
    await reporter.getByRole("button", { name: "Send report" }).click();
    await reporter.getByText("not a short link").first().waitFor();
    await noJs.close();

    const adminEmail = `admin${Date.now()}@example.com`;
    await cli(server, "user:create", "--email", adminEmail, "--admin");
    const adminCtx = await browser.newContext({ userAgent: USER_AGENT });
    const admin = await newPage(adminCtx);
    await signIn(admin, server, adminEmail);
    await admin.goto(`${server.appUrl}/admin/reports`);
    const row = admin.getByTestId("report-row").filter({ hasText: slug });
    await row.waitFor();
    await shot(admin, "14-admin-queue");
    await row.getByLabel("Confirm").check();
    await row.getByRole("button", { name: "Delete link" }).click();
    await admin.getByText("Link deleted and report closed").waitFor();
    const gone = await fetch(`${server.redirectUrl}/${slug}`, { redirect: "manual" });
    expect(gone.status).toBe(404);
    expect(admin.problems).toEqual([]);
    await adminCtx.close();
  });

  it("renders the API reference from /openapi.json", async () => {
    await page.goto(`${server.appUrl}/docs`);
    await page.locator(".swagger-ui .info").waitFor({ timeout: 20_000 });
    await page.getByText("/links").first().waitFor();
    await shot(page, "15-api-reference");
    expect(page.problems).toEqual([]);
  });

  it("signs out", async () => {
    await page.goto(`${server.appUrl}/links`);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/login/);
    await page.goto(`${server.appUrl}/links`);
    await page.waitForURL(/\/login/);
  });
});
