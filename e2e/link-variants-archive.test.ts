import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launch, newPage, shot, signIn, startServer, USER_AGENT, type Server } from "./harness";

let server: Server;
let browser: Browser;
let ctx: BrowserContext;
let page: Page & { problems: string[] };
const run = Date.now().toString(36);

beforeAll(async () => {
  [server, browser] = await Promise.all([startServer(), launch()]);
  // bypassCSP: the injected axe script has no nonce.
  ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, userAgent: USER_AGENT, bypassCSP: true });
  page = await newPage(ctx);
  await signIn(page, server, `variants-${run}@example.com`);
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** A link made through the API with the signed-in browser's session. */
async function apiLink(data: Record<string, unknown>): Promise<{ id: string; slug: string }> {
  const r = await ctx.request.post(`${server.appUrl}/api/links`, { data, headers: { Origin: server.appUrl } });
  expect(r.status(), await r.text()).toBe(201);
  return r.json();
}
const readLink = async (id: string) => (await ctx.request.get(`${server.appUrl}/api/links/${id}`)).json();

/** A visit as a person's browser makes it (so it counts), without following the redirect. */
const visit = (slug: string) => fetch(`${server.redirectUrl}/${slug}`, { redirect: "manual", headers: { "user-agent": USER_AGENT } });

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

describe("A/B variants and the archive in Chromium", () => {
  it("the link page compares the variants' clicks and visitors, and keeping one makes it the destination and ends the test", async () => {
    const a = `${server.appUrl}/report?v=a-${run}`;
    const b = `${server.appUrl}/report?v=b-${run}`;
    const link = await apiLink({
      url: a,
      slug: `ab-${run}`,
      variants: [
        { url: a, weight: 50 },
        { url: b, weight: 50 },
      ],
    });
    for (let i = 0; i < 3; i++) expect((await visit(link.slug)).status).toBe(301);
    await page.goto(`${server.appUrl}/links/${link.id}`);
    const table = page.getByTestId("variant-comparison");
    const clicks = async () => (await table.getByTestId("variant-clicks").allTextContents()).map(Number);
    // Clicks are written in batches, just after the answer: reload until they show.
    for (let i = 0; i < 40 && (await clicks()).reduce((x, y) => x + y, 0) !== 3; i++) {
      await new Promise((r) => setTimeout(r, 250));
      await page.reload();
    }
    // One browser keeps its variant for the day: three clicks, one visitor, on one of the two.
    expect((await clicks()).sort()).toEqual([0, 3]);
    expect((await table.getByTestId("variant-visitors").allTextContents()).map(Number).sort()).toEqual([0, 1]);
    expect(await table.getByTestId("variant-row").first().textContent()).toContain(a);
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, "link-variants-1280px");

    await table.getByLabel("Keep this one: variant 2").click();
    await table.getByLabel("Yes, send every visitor to variant 2 and remove the other variants.").check();
    await table.getByRole("button", { name: "Keep variant 2" }).click();
    await page.getByText(`Every visitor now goes to ${b}.`).waitFor();
    await expect.poll(() => page.getByTestId("variant-comparison").count()).toBe(0);
    const kept = await readLink(link.id);
    expect(kept.url).toBe(b);
    expect(kept.variants).toBeUndefined();
    expect((await visit(link.slug)).headers.get("location")).toBe(b);
    expect(page.problems).toEqual([]);
  });

  it("keeping a variant needs the confirmation box ticked", async () => {
    const a = `${server.appUrl}/report?v=c-${run}`;
    const b = `${server.appUrl}/report?v=d-${run}`;
    const link = await apiLink({
      url: a,
      variants: [
        { url: a, weight: 30 },
        { url: b, weight: 70 },
      ],
    });
    await page.goto(`${server.appUrl}/links/${link.id}`);
    const table = page.getByTestId("variant-comparison");
    await table.getByLabel("Keep this one: variant 1").click();
    await table.getByRole("button", { name: "Keep variant 1" }).click();
    // The browser refuses the unticked required box: nothing is sent, nothing changes.
    expect(
      await table.getByLabel("Yes, send every visitor to variant 1 and remove the other variants.").evaluate((e) => (e as HTMLInputElement).validity.valid),
    ).toBe(false);
    expect((await readLink(link.id)).variants).toHaveLength(2);
  });

  it("the links list archives a row and the selected links, and restores them from the Archived filter", async () => {
    const word = `shelf-${run}`;
    const made: { id: string; slug: string }[] = [];
    for (const n of ["one", "two", "three"]) made.push(await apiLink({ url: `${server.appUrl}/report?${word}=${n}`, slug: `${word}-${n}` }));
    await page.goto(`${server.appUrl}/links?q=${word}`);
    await row(made[0].slug)
      .getByRole("button", { name: `Archive ${made[0].slug}` })
      .click();
    await page.getByText(`Archived ${server.redirectUrl.replace(/^https?:\/\//, "")}/${made[0].slug}.`).waitFor();
    await expect.poll(() => row(made[0].slug).count()).toBe(0);
    expect((await readLink(made[0].id)).archived).toBe(true);
    expect((await visit(made[0].slug)).status).toBe(404);

    await page.getByLabel("Select all on this page").check();
    await page.getByLabel("With the selected links").selectOption("archive");
    await page.getByRole("button", { name: "Review…" }).click();
    const confirm = page.getByTestId("bulk-confirm");
    expect(await confirm.textContent()).toContain("Archive 2 links");
    await confirm.getByRole("button", { name: "Confirm for 2 links" }).click();
    await page.getByText("Archived 2 links.").waitFor();
    await page.getByText("No link matches these filters.").waitFor();
    expect((await visit(made[1].slug)).status).toBe(404);

    await page.goto(`${server.appUrl}/links?q=${word}&status=archived`);
    expect(await page.getByTestId("link-row").count()).toBe(3);
    // Under the Archived filter the bulk menu offers restoring, not archiving again.
    const ops = await page.getByLabel("With the selected links").locator("option").allTextContents();
    expect(ops).toContain("Restore from the archive");
    expect(ops).not.toContain("Archive");
    expect(await axeViolations(page)).toEqual([]);
    await row(made[2].slug)
      .getByRole("button", { name: `Restore ${made[2].slug}` })
      .click();
    await page.getByText(`Restored ${server.redirectUrl.replace(/^https?:\/\//, "")}/${made[2].slug} from the archive.`).waitFor();
    await expect.poll(() => page.getByTestId("link-row").count()).toBe(2);
    await page.getByLabel("Select all on this page").check();
    await page.getByLabel("With the selected links").selectOption("restore");
    await page.getByRole("button", { name: "Review…" }).click();
    await page.getByTestId("bulk-confirm").getByRole("button", { name: "Confirm for 2 links" }).click();
    await page.getByText("Restored 2 links from the archive.").waitFor();

    await page.goto(`${server.appUrl}/links?q=${word}`);
    expect(await page.getByTestId("link-row").count()).toBe(3);
    expect((await visit(made[0].slug)).status).toBe(301);
    expect(page.problems).toEqual([]);
  });
});
