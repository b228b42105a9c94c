import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launch, newPage, shot, signIn, startServer, USER_AGENT, type Server } from "./harness";

let server: Server;
let browser: Browser;
let ctx: BrowserContext;
let page: Page & { problems: string[] };
const run = Date.now().toString(36);
const slugs = { busy: `busy-${run}`, quiet: `quiet-${run}`, locked: `locked-${run}` };
const ids: Record<string, string> = {};

beforeAll(async () => {
  [server, browser] = await Promise.all([startServer(), launch()]);
  // bypassCSP: the injected axe script has no nonce.
  ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, userAgent: USER_AGENT, bypassCSP: true });
  page = await newPage(ctx);
  await signIn(page, server, `list-${run}@example.com`);
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

async function createLink(slug: string, fill: (p: Page) => Promise<void> = async () => {}) {
  await page.goto(`${server.appUrl}/links/new`);
  await page.getByLabel("Destination URL").fill(`${server.appUrl}/report?from=${slug}`);
  await page.getByLabel("Custom slug").fill(slug);
  await fill(page);
  await page.getByRole("button", { name: "Create link" }).click();
  await page.waitForURL(/\/links\/[0-9a-z]{8}\?created=1/);
  ids[slug] = page.url().match(/\/links\/([0-9a-z]{8})/)![1];
}

/** Visits a short link as a person would (a browser's User-Agent), so the click counts. */
async function visit(slug: string, times: number) {
  for (let i = 0; i < times; i++) {
    const v = await browser.newPage({ userAgent: USER_AGENT });
    await v.goto(`${server.redirectUrl}/${slug}`);
    await v.close();
  }
}

/** axe-core's serious and critical violations on the page as it is now (e2e/accessibility.test.ts audits every screen). */
async function axeViolations(p: Page): Promise<string[]> {
  await p.addScriptTag({ path: path.resolve("node_modules/axe-core/axe.min.js") });
  return p.evaluate(async () => {
    const axe = (
      window as unknown as { axe: { run(d: Document): Promise<{ violations: { id: string; impact: string | null; nodes: { target: string[] }[] }[] }> } }
    ).axe;
    const r = await axe.run(document);
    return r.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  });
}

const row = (slug: string) => page.getByTestId("link-row").filter({ hasText: slug });
const rowSlugs = async () => (await page.getByTestId("link-row").locator("a.font-mono").allTextContents()).map((t) => t.split("/").pop());

describe("links list in Chromium", () => {
  it("shows each link's clicks (all time and 7 days), created time, tags and badges", async () => {
    await createLink(slugs.busy, (p) => p.getByLabel("Tags").fill("launch"));
    await createLink(slugs.quiet, (p) => p.getByLabel("Card title").fill("Quiet card"));
    await createLink(slugs.locked, (p) => p.locator('input[name="password"]').fill("open sesame"));
    await visit(slugs.busy, 3);
    await visit(slugs.quiet, 1);
    await page.goto(`${server.appUrl}/links`);
    // Clicks are written in batches, off the request path: reload until they show.
    for (let i = 0; i < 40 && (await row(slugs.busy).getByTestId("clicks-total").textContent()) !== "3"; i++) {
      await new Promise((r) => setTimeout(r, 250));
      await page.reload();
    }
    expect(await row(slugs.busy).getByTestId("clicks-total").textContent()).toBe("3");
    expect(await row(slugs.busy).getByTestId("clicks-7d").textContent()).toBe("3");
    expect(await row(slugs.quiet).getByTestId("clicks-total").textContent()).toBe("1");
    expect(await row(slugs.locked).getByTestId("clicks-total").textContent()).toBe("0");
    expect(
      await row(slugs.busy)
        .getByRole("img", { name: /^Clicks per day, last 14 days: (0, ){13}3$/ })
        .count(),
    ).toBe(1);
    const created = row(slugs.busy).locator("time");
    expect(await created.textContent()).toMatch(/just now|minute/);
    expect(await created.getAttribute("title")).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
    expect(
      await row(slugs.busy)
        .getByRole("link", { name: /^Tag launch/ })
        .count(),
    ).toBe(1);
    expect(await row(slugs.locked).getByText("password", { exact: true }).count()).toBe(1);
    expect(await row(slugs.quiet).getByText("share card", { exact: true }).count()).toBe(1);
    await shot(page, "links-list-1280px");
  });

  it("sorts by most clicks, and keeps the choice in the URL", async () => {
    await page.goto(`${server.appUrl}/links`);
    expect(await rowSlugs()).toEqual([slugs.locked, slugs.quiet, slugs.busy]);
    await page.getByLabel("Sort").selectOption("clicks");
    await page.waitForURL(/sort=clicks/);
    await page.getByTestId("link-row").first().filter({ hasText: slugs.busy }).waitFor();
    expect(await rowSlugs()).toEqual([slugs.busy, slugs.quiet, slugs.locked]);
    await page.goBack();
    await page.waitForURL((u) => !u.search.includes("sort=clicks"));
    await page.getByTestId("link-row").first().filter({ hasText: slugs.locked }).waitFor();
    expect(await page.getByLabel("Sort").inputValue()).toBe("newest");
  });

  it("filters by status and by tag", async () => {
    await page.goto(`${server.appUrl}/links`);
    await page.getByLabel("Status").selectOption("password");
    await page.waitForURL(/status=password/);
    await page.getByTestId("list-summary").filter({ hasText: "of 1 link" }).waitFor();
    expect(await rowSlugs()).toEqual([slugs.locked]);
    await page.goto(`${server.appUrl}/links?tag=launch`);
    expect(await rowSlugs()).toEqual([slugs.busy]);
  });

  it("adds a tag to the selected links after a confirmation step", async () => {
    await page.goto(`${server.appUrl}/links`);
    await row(slugs.quiet).getByRole("checkbox").check();
    await row(slugs.locked).getByRole("checkbox").check();
    await page.getByTestId("selected-count").filter({ hasText: "2 selected" }).waitFor();
    await page.getByLabel("With the selected links").selectOption("add_tag");
    await page.getByLabel("Tag to add or remove").fill("promo");
    await page.getByRole("button", { name: "Review…" }).click();
    const confirm = page.getByTestId("bulk-confirm");
    await confirm.waitFor();
    expect(await confirm.textContent()).toContain("Add the tag #promo to 2 links");
    // Nothing is written before the confirmation.
    expect(await page.getByRole("link", { name: /^Tag promo/ }).count()).toBe(0);
    await shot(page, "links-list-bulk-confirm-1280px");
    expect(await axeViolations(page)).toEqual([]);
    await confirm.getByRole("button", { name: "Confirm for 2 links" }).click();
    await page.getByText("Tagged 2 links #promo.").waitFor();
    await row(slugs.quiet)
      .getByRole("link", { name: /^Tag promo/ })
      .waitFor();
    await shot(page, "links-list-bulk-done-1280px");
    expect(
      await row(slugs.quiet)
        .getByRole("link", { name: /^Tag promo/ })
        .count(),
    ).toBe(1);
    expect(
      await row(slugs.locked)
        .getByRole("link", { name: /^Tag promo/ })
        .count(),
    ).toBe(1);
    expect(
      await row(slugs.busy)
        .getByRole("link", { name: /^Tag promo/ })
        .count(),
    ).toBe(0);
    expect(page.problems).toEqual([]);
  });

  it("selects a row and opens the bulk review with the keyboard alone", async () => {
    await page.goto(`${server.appUrl}/links`);
    await page.getByLabel("Search").focus();
    const active = () => page.evaluate(() => (document.activeElement as HTMLElement | null)?.getAttribute("aria-label") ?? document.activeElement?.id ?? "");
    for (let i = 0; i < 30 && !(await active()).startsWith("Select "); i++) await page.keyboard.press("Tab");
    expect(await active()).toMatch(/^Select .*locked-/);
    await page.keyboard.press("Space");
    await page.getByTestId("selected-count").filter({ hasText: "1 selected" }).waitFor();
    // Back up to the bulk toolbar above the rows, choose an action with the arrow keys, then on to Review.
    const activeId = () => page.evaluate(() => document.activeElement?.id ?? "");
    for (let i = 0; i < 30 && (await activeId()) !== "bulk-op"; i++) await page.keyboard.press("Shift+Tab");
    for (let i = 0; i < 4; i++) await page.keyboard.press("ArrowDown");
    expect(await page.getByLabel("With the selected links").inputValue()).toBe("clear_expiry");
    const activeText = () => page.evaluate(() => document.activeElement?.textContent ?? "");
    for (let i = 0; i < 10 && (await activeText()) !== "Review…"; i++) await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await page.getByTestId("bulk-confirm").waitFor();
    // The confirmation takes the focus, so a screen reader announces it.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("bulk-confirm-title");
  });

  it("reads, filters and bulk-edits without JavaScript", async () => {
    const plain = await browser.newContext({ storageState: await ctx.storageState(), javaScriptEnabled: false, userAgent: USER_AGENT });
    const p = await plain.newPage();
    await p.goto(`${server.appUrl}/links`);
    await p.getByLabel("Sort").selectOption("clicks");
    await p.getByRole("button", { name: "Apply" }).click();
    await p.waitForURL(/sort=clicks/);
    expect((await p.getByTestId("link-row").locator("a.font-mono").allTextContents()).map((t) => t.split("/").pop())).toEqual([
      slugs.busy,
      slugs.quiet,
      slugs.locked,
    ]);
    await p.getByLabel("Select all on this page").check();
    await p.getByLabel("With the selected links").selectOption("remove_tag");
    await p.getByLabel("Tag to add or remove").fill("promo");
    await p.getByRole("button", { name: "Review…" }).click();
    await p.getByTestId("bulk-confirm").getByRole("button", { name: "Confirm for 3 links" }).click();
    await p.getByText("Removed #promo from 2 links.").waitFor();
    expect(await p.getByRole("link", { name: /^Tag promo/ }).count()).toBe(0);
    expect(p.url()).toContain("sort=clicks");
    await plain.close();
  });

  it("fits a phone's width, and a link's page too", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${server.appUrl}/links`);
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await shot(page, "links-list-390px");
    expect(await axeViolations(page)).toEqual([]);
    await page.goto(`${server.appUrl}/links/${ids[slugs.busy]}`);
    await shot(page, "link-page-390px");
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.reload();
    await shot(page, "link-page-1280px");
    expect(page.problems).toEqual([]);
  });

  it("compact table view: a row per link, chosen once and remembered, actions in a menu, axe-clean", async () => {
    const links = Array.from({ length: 55 }, (_, i) => ({ url: `https://example.com/camp-${run}/${i}` }));
    const made = await ctx.request.post(`${server.appUrl}/api/links/bulk`, { data: { links }, headers: { Origin: server.appUrl } });
    expect(made.status()).toBe(200);
    // The newest 50 are the new links: search the busy one.
    await page.goto(`${server.appUrl}/links?q=${slugs.busy}`);
    const cardHeight = (await row(slugs.busy).boundingBox())!.height;
    await page.getByTestId("view-table").click();
    await page.waitForURL((u) => u.pathname === "/links" && !u.searchParams.has("view") && u.searchParams.get("q") === slugs.busy);
    await page.getByRole("table", { name: "Links" }).waitFor();
    const tableHeight = (await row(slugs.busy).boundingBox())!.height;
    // At least twice as many links on a screen as the cards show.
    expect(tableHeight * 2).toBeLessThan(cardHeight);
    expect(await page.getByRole("columnheader").allTextContents()).toEqual(["Select", "Short link", "Destination", "Clicks", "Tags", "Created", "Actions"]);
    expect(await row(slugs.busy).getByTestId("clicks-total").textContent()).toBe("3");
    // Remembered: the list opens as a table again.
    await page.goto(`${server.appUrl}/links?sort=clicks`);
    await page.getByRole("table", { name: "Links" }).waitFor();
    await row(slugs.busy).getByLabel(`Actions for ${slugs.busy}`).click();
    await row(slugs.busy)
      .getByRole("link", { name: `Edit ${slugs.busy}` })
      .waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, "links-list-table-1280px");
    await row(slugs.busy)
      .getByRole("link", { name: `Edit ${slugs.busy}` })
      .click();
    await page.waitForURL(new RegExp(`/links/${ids[slugs.busy]}$`));
    expect(page.problems).toEqual([]);
  });

  it("select all N matching: a bulk action reaches every link the filters match, beyond the page", async () => {
    await page.goto(`${server.appUrl}/links?q=camp-${run}`);
    expect(await page.getByTestId("list-summary").textContent()).toContain("of 55 links");
    await page.getByLabel("Select all 55 matching links").check();
    await page.getByTestId("selected-count").filter({ hasText: "All 55 matching selected" }).waitFor();
    await page.getByLabel("With the selected links").selectOption("add_tag");
    await page.getByLabel("Tag to add or remove").fill("spring");
    await page.getByRole("button", { name: "Review…" }).click();
    const confirm = page.getByTestId("bulk-confirm");
    expect(await confirm.textContent()).toContain(`Add the tag #spring to 55 links matching the filters`);
    expect(await confirm.textContent()).toContain(`search “camp-${run}”`);
    await confirm.getByRole("button", { name: "Confirm for 55 links matching the filters" }).click();
    await page.getByText("Tagged 55 links #spring.").waitFor();
    await page.goto(`${server.appUrl}/links?tag=spring`);
    expect(await page.getByTestId("list-summary").textContent()).toContain("of 55 links");

    // Without JavaScript too, and the view goes back to cards by a plain link.
    const plain = await browser.newContext({ storageState: await ctx.storageState(), javaScriptEnabled: false, userAgent: USER_AGENT });
    const p = await plain.newPage();
    await p.goto(`${server.appUrl}/links?tag=spring`);
    await p.getByLabel("Select all 55 matching links").check();
    await p.getByLabel("With the selected links").selectOption("remove_tag");
    await p.getByLabel("Tag to add or remove").fill("spring");
    await p.getByRole("button", { name: "Review…" }).click();
    await p.getByTestId("bulk-confirm").getByRole("button", { name: "Confirm for 55 links matching the filters" }).click();
    await p.getByText("Removed #spring from 55 links.").waitFor();
    // No link has the tag now, so there is no list to view: the table chosen above shows on a search.
    await p.goto(`${server.appUrl}/links?q=camp-${run}`);
    await p.getByRole("table", { name: "Links" }).waitFor();
    await p.getByTestId("view-cards").click();
    await p.waitForURL((u) => u.pathname === "/links" && !u.searchParams.has("view"));
    await p.getByRole("list", { name: "Links" }).waitFor();
    await plain.close();
  });
});
