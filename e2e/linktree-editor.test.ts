import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launch, newPage, shot, signIn, startServer, USER_AGENT, type Server } from "./harness";

// The linktree editor in Chromium: theme and colours with their preview, button style, social
// profiles, headings, text and a scheduled button; the public page shows what was chosen.
const AXE = path.resolve("node_modules/axe-core/axe.min.js");
let server: Server;
let browser: Browser;
let ctx: BrowserContext;
let page: Page & { problems: string[] };
const email = `tree-editor-${Date.now()}@example.com`;
const slug = `editor-${Date.now().toString(36)}`;

beforeAll(async () => {
  server = await startServer();
  browser = await launch();
  // bypassCSP: the axe script is injected into the page.
  ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, userAgent: USER_AGENT, bypassCSP: true });
  page = await newPage(ctx);
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** axe-core's serious and critical violations on the page as it is now. */
async function axeViolations(p: Page): Promise<string[]> {
  await p.addScriptTag({ path: AXE });
  const found = await p.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: { run(ctx: Document, o: object): Promise<{ violations: { id: string; impact: string | null; nodes: { target: string[] }[] }[] }> };
      }
    ).axe;
    const r = await axe.run(document, { resultTypes: ["violations"] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" ")) }));
  });
  return found.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id}: ${v.nodes.join(", ")}`);
}

describe("linktree editor", () => {
  it("picks a theme, colours, button style, profiles, a heading, text and a button, and the public page shows them", async () => {
    await page.goto(`${server.appUrl}/linktrees`);
    await page.waitForURL(/\/login/);
    await signIn(page, server, email);
    await page.goto(`${server.appUrl}/linktrees`);
    await page.getByLabel("Title").fill("Maria Silva");
    await page.getByLabel("Slug").fill(slug);
    await page.getByRole("button", { name: "Create linktree" }).click();
    await page.waitForURL(/\/linktrees\/.+/);

    // Theme and button style: the preview follows before saving.
    await page.getByRole("radio", { name: "Dark", exact: true }).check();
    await page.getByRole("radio", { name: "Pill", exact: true }).check();
    await expect(page.getByTestId("preview").evaluate((el) => getComputedStyle(el).backgroundColor)).resolves.toBe("rgb(15, 23, 42)");

    // A text colour too close to the background is refused, naming the colours.
    await page.getByRole("checkbox", { name: "Text", exact: true }).check();
    await page.getByLabel("Text colour", { exact: true }).fill("#1e293b");
    await expect(page.getByText(/Text on background: contrast .* \(too low/).isVisible()).resolves.toBe(true);
    await page.getByRole("button", { name: "Save look" }).click();
    await page.getByRole("alert").first().waitFor();
    await expect(
      page
        .getByText(/has a contrast ratio of/)
        .first()
        .isVisible(),
    ).resolves.toBe(true);
    // A readable one is saved.
    await page.getByLabel("Text colour", { exact: true }).fill("#fde68a");
    await page.getByRole("button", { name: "Save look" }).click();
    await page.getByText("Look saved.").waitFor();
    await page.waitForFunction(() => document.querySelector<HTMLInputElement>('input[name="theme"][value="dark"]')?.checked === true, undefined, {
      timeout: 5_000,
    });

    // Social profiles. A wrong one is named at its row, with the reason.
    await page.getByRole("button", { name: "Add a profile" }).click();
    await page.getByRole("combobox", { name: "Profile 1", exact: true }).selectOption("email");
    await page.getByLabel("Address (mailto:)").fill("https://x.example");
    await page.getByRole("button", { name: "Save profiles" }).click();
    await page
      .locator("#social-url-0-error")
      .getByText(/mailto/)
      .waitFor();
    expect(await page.getByLabel("Address (mailto:)").getAttribute("aria-invalid")).toBe("true");
    await page.getByRole("combobox", { name: "Profile 1", exact: true }).selectOption("github");
    await page.getByLabel("Profile URL").fill("https://github.com/maria");
    await page.getByRole("button", { name: "Save profiles" }).click();
    await page.getByText("Profiles saved.").waitFor();

    // A heading, a text and a button.
    await page.getByRole("radio", { name: "Heading", exact: true }).check();
    await page.getByRole("textbox", { name: "Heading", exact: true }).fill("Work");
    await page.getByRole("button", { name: "Add heading" }).click();
    await page.getByTestId("item-row").filter({ hasText: "Work" }).waitFor();
    await page.getByRole("radio", { name: "Text", exact: true }).check();
    await page.getByRole("textbox", { name: "Text", exact: true }).fill("Prints ship within three days.");
    await page.getByRole("button", { name: "Add text" }).click();
    await page.getByTestId("item-row").filter({ hasText: "Prints ship" }).waitFor();
    await page.getByRole("radio", { name: "Button", exact: true }).check();
    await page.getByLabel("Button title").fill("Portfolio");
    await page.getByLabel("Button URL").fill("https://example.com/portfolio");
    await page.getByRole("button", { name: "Add button" }).click();
    await page.getByTestId("item-row").filter({ hasText: "Portfolio" }).waitFor();
    expect(await page.getByTestId("preview").textContent()).toMatch(/Work.*Prints ship.*Portfolio/);

    await page.getByRole("button", { name: "Publish" }).click();
    await page.getByRole("button", { name: "Unpublish" }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, "linktree-editor-1280px");
    expect(page.problems).toEqual([]);

    const visitor = await browser.newPage({ userAgent: USER_AGENT });
    await visitor.goto(`${server.redirectUrl}/${slug}`);
    expect(await visitor.locator("body").getAttribute("class")).toBe("theme-dark buttons-pill");
    await expect(visitor.getByRole("heading", { level: 2, name: "Work" }).isVisible()).resolves.toBe(true);
    await expect(visitor.getByRole("link", { name: "GitHub" }).getAttribute("href")).resolves.toBe("https://github.com/maria");
    await expect(visitor.getByRole("link", { name: "Portfolio" }).isVisible()).resolves.toBe(true);
    await expect(visitor.locator("h1").evaluate((el) => getComputedStyle(el).color)).resolves.toBe("rgb(253, 230, 138)");
    await visitor.close();
  });

  it("is axe-clean at phone width", async () => {
    const phone = await browser.newContext({
      viewport: { width: 390, height: 844 },
      userAgent: USER_AGENT,
      bypassCSP: true,
      storageState: await ctx.storageState(),
    });
    const p = await phone.newPage();
    await p.goto(`${server.appUrl}/linktrees`);
    await p
      .getByRole("link", { name: /Maria Silva/ })
      .first()
      .click();
    await p.waitForURL(/\/linktrees\/.+/);
    expect(await axeViolations(p)).toEqual([]);
    await shot(p, "linktree-editor-390px");
    await phone.close();
  });
});
