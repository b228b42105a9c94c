import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { launch, newPage, shot, signIn, startServer, USER_AGENT, type Server } from "./harness";

// The analytics page's link picker (a combobox asking the server) and its range form's errors.

const AXE = path.resolve("node_modules/axe-core/axe.min.js");
let server: Server;
let browser: Browser;
let ctx: BrowserContext;
let page: Page & { problems: string[] };
const email = `picker-${Date.now()}@example.com`;
const stamp = Date.now().toString(36);
const made: { id: string; slug: string }[] = [];

beforeAll(async () => {
  [server, browser] = await Promise.all([startServer(), launch()]);
  // bypassCSP: the axe script is injected into the page.
  ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, userAgent: USER_AGENT, bypassCSP: true });
  page = await newPage(ctx);
  await signIn(page, server, email);
  // 40 links: more than the picker ever shows at once.
  for (let i = 0; i < 40; i++) {
    const slug = i === 0 ? `shop-${stamp}` : i === 1 ? `shop-${stamp}-old` : `p${i}-${stamp}`;
    const r = await ctx.request.post(`${server.appUrl}/api/links`, {
      data: { url: `https://example.com/${slug}`, slug },
      headers: { Origin: server.appUrl },
    });
    expect(r.status()).toBe(201);
    made.push(await r.json());
  }
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

async function axeViolations(p: Page): Promise<string[]> {
  await p.addScriptTag({ path: AXE });
  return p.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: { run(ctx: Document, o: object): Promise<{ violations: { id: string; impact: string | null; nodes: { target: string[] }[] }[] }> };
      }
    ).axe;
    const r = await axe.run(document, { resultTypes: ["violations"] });
    // The rule and where it fails, so a failure says what to fix.
    return r.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  });
}

it("the analytics page embeds no list of links: the Link picker asks the server as one types, by keyboard, and is axe-clean", async () => {
  const res = await page.goto(`${server.appUrl}/analytics`);
  const html = await res!.text();
  for (const l of made) expect(html).not.toContain(l.slug);

  const box = page.getByRole("combobox", { name: "Link" });
  await box.click();
  await box.pressSequentially(`shop-${stamp}`);
  const options = page.getByRole("listbox").getByRole("option");
  await options.filter({ hasText: `shop-${stamp}-old` }).waitFor();
  // "All links", the exact slug first, then the other match.
  expect(await options.allTextContents()).toEqual(["All links", expect.stringContaining(`shop-${stamp}`), expect.stringContaining(`shop-${stamp}-old`)]);
  expect(await box.getAttribute("aria-expanded")).toBe("true");
  expect(await axeViolations(page)).toEqual([]);
  await shot(page, "analytics-picker-open");

  // Arrow keys move the active option (aria-activedescendant) to the exact slug.
  const activeText = async () => {
    const id = await box.getAttribute("aria-activedescendant");
    return id ? ((await page.locator(`[id="${id}"]`).textContent()) ?? "") : "";
  };
  for (let i = 0; i < 5 && !(await activeText()).startsWith(`shop-${stamp}https:`); i++) await box.press("ArrowDown");
  expect(await activeText()).toMatch(new RegExp(`^shop-${stamp}https:`));
  await box.press("Enter");
  expect(await box.inputValue()).toBe(`shop-${stamp}`);
  await page.getByRole("button", { name: "Apply" }).click();
  await page.waitForURL((u) => u.searchParams.get("link") === made[0].id && !u.searchParams.has("link_q"));
  await page.getByRole("heading", { level: 1, name: `Analytics · shop-${stamp}`, exact: true }).waitFor();

  // Emptied, the field means every link again.
  await box.fill("");
  await page.getByRole("button", { name: "Apply" }).click();
  await page.waitForURL((u) => !u.searchParams.get("link"));
  // The address changes before React has drawn the new view: wait for the heading itself.
  await page.getByRole("heading", { level: 1, name: "Analytics", exact: true }).waitFor();
  expect(page.problems).toEqual([]);
});

it("the Link picker works without JavaScript: a typed slug is resolved by the server, several matches are offered", async () => {
  const noJs = await browser.newContext({ userAgent: USER_AGENT, javaScriptEnabled: false, storageState: await ctx.storageState() });
  const p = await noJs.newPage();
  await p.goto(`${server.appUrl}/analytics`);
  // No script, no list that could open: a plain text field is the one thing named "Link".
  expect(await p.locator("#link-q").getAttribute("role")).toBeNull();
  expect(await p.locator("#link-options").getAttribute("role")).toBeNull();
  expect(await p.getByRole("textbox", { name: "Link", exact: true }).count()).toBe(1);
  await p.getByLabel("Link", { exact: true }).fill(`shop-${stamp}-old`);
  await p.getByRole("button", { name: "Apply" }).click();
  await p.waitForURL((u) => u.searchParams.get("link") === made[1].id);
  expect(await p.getByRole("heading", { level: 1 }).textContent()).toContain(`shop-${stamp}-old`);

  // "p1" is part of p1-…, p10-…, p11-…: the page stays and offers them.
  await p.getByLabel("Link", { exact: true }).fill(`p1`);
  await p.getByRole("button", { name: "Apply" }).click();
  await p.getByTestId("link-choices").waitFor();
  expect(await p.getByLabel("Link", { exact: true }).getAttribute("aria-invalid")).toBe("true");
  await p
    .getByTestId("link-choices")
    .getByRole("link", { name: `p12-${stamp}` })
    .click();
  await p.waitForURL((u) => u.searchParams.get("link") === made[12].id);
  await noJs.close();
});

it("a reversed range or a from that is no day keeps the page: the field is named and marked", async () => {
  const bad = await page.goto(`${server.appUrl}/analytics?from=abc`);
  expect(bad!.status()).toBe(200);
  await page.getByRole("alert").filter({ hasText: "Some fields need attention" }).waitFor();
  expect(await page.locator("#from").getAttribute("aria-invalid")).toBe("true");
  expect(await page.locator("#from-err").textContent()).toContain("must be a day");
  // The rest of the page is there: the default view.
  await page.getByTestId("click-count").waitFor();

  const reversed = await page.goto(`${server.appUrl}/analytics?from=2026-03-10&to=2026-03-01`);
  expect(reversed!.status()).toBe(200);
  expect(await page.locator("#to").getAttribute("aria-invalid")).toBe("true");
  expect(await page.locator("#to-err").textContent()).toContain("must not be before from");
  expect(await page.locator("#to").inputValue()).toBe("2026-03-01");
  expect(await page.locator("#from").getAttribute("aria-invalid")).toBeNull();
  expect(await axeViolations(page)).toEqual([]);
  await shot(page, "analytics-range-error");
});
