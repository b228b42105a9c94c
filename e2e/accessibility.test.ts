import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, codeFor, hydrated, invitationLink, launch, newPage, shot, signIn, startServer, USER_AGENT, type Server } from "./harness";

// Every screen of the dashboard through axe-core, signed out and signed in, with an empty account
// and with a full one, at desktop and at phone width: a serious or critical violation fails.
// Plus the keyboard alone: sign in by e-mail code, create a link, open the phone menu.

const AXE = path.resolve("node_modules/axe-core/axe.min.js");
const VIEWPORTS = [
  ["desktop", { width: 1280, height: 900 }],
  ["phone", { width: 390, height: 844 }],
] as const;
/** The full account is also audited in the dark colour scheme (contrast differs). */
const DARK = ["desktop-dark", { width: 1280, height: 900 }] as const;

let server: Server;
let browser: Browser;
const adminEmail = `a11y-admin-${Date.now()}@example.com`;
const emptyEmail = `a11y-empty-${Date.now()}@example.com`;
const keysEmail = `a11y-keys-${Date.now()}@example.com`;
/** What the full account holds, for the pages that show one thing. */
const full = { linkId: "", treeId: "", treeSlug: "", workspaceId: "", inviteUrl: "" };

beforeAll(async () => {
  [server, browser] = await Promise.all([startServer(), launch()]);
  await cli(server, "user:create", "--email", adminEmail, "--admin", "--plan", "pro");
  await cli(server, "user:create", "--email", emptyEmail);
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** A context whose pages accept the injected axe script (the app's CSP allows only its own nonce). */
const context = (viewport: { width: number; height: number }, colorScheme: "light" | "dark" = "light") =>
  browser.newContext({ viewport, userAgent: USER_AGENT, bypassCSP: true, colorScheme });

type Found = { id: string; impact: string | null; help: string; nodes: string[] };

/** axe-core's serious and critical violations on the page as it is now, one readable line each. */
async function audit(page: Page, label: string): Promise<string[]> {
  await page.addScriptTag({ path: AXE });
  const found = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: Document, o: object): Promise<{ violations: unknown[] }> } }).axe;
    const r = await axe.run(document, { resultTypes: ["violations"] });
    return (r.violations as { id: string; impact: string | null; help: string; nodes: { target: string[]; failureSummary?: string }[] }[]).map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 5).map((n) => `${n.target.join(" ")} — ${(n.failureSummary ?? "").split("\n").slice(1, 2).join("").trim()}`),
    }));
  });
  return (found as Found[])
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${label}: [${v.impact}] ${v.id}: ${v.help}\n      ${v.nodes.join("\n      ")}`);
}

/** Visits each path and audits it; a page answering an error status other than the expected 404 is a failure too. */
async function auditAll(page: Page, label: string, paths: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of paths) {
    const url = p.startsWith("http") ? p : `${server.appUrl}${p}`;
    const res = await page.goto(url);
    const status = res?.status() ?? 0;
    if (status >= 400 && !p.startsWith("/this-page-does-not-exist") && !p.startsWith("/invites/0000")) out.push(`${label} ${p}: HTTP ${status}`);
    if (new URL(page.url()).pathname === "/login" && !p.startsWith("/login")) out.push(`${label} ${p}: sent to sign-in, not audited`);
    if (p === "/docs") await page.locator(".swagger-ui .info").waitFor({ timeout: 20_000 });
    out.push(...(await audit(page, `${label} ${p}`)));
    // On a phone only a table's own box may scroll sideways, never the whole page.
    const widths = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    if ((page.viewportSize()?.width ?? 9999) <= 400 && widths[0] > widths[1] + 1)
      out.push(`${label} ${p}: the page is ${widths[0]} px wide at ${widths[1]} px`);
  }
  return out;
}

const report = (violations: string[]) => {
  if (violations.length) console.log(`axe violations:\n  ${violations.join("\n  ")}`);
  return violations;
};

const SIGNED_OUT = ["/", "/login", "/report", "/terms", "/docs", "/invites/00000000000000000000000000000000", "/this-page-does-not-exist"];
const signedIn = (admin: boolean, withData: boolean) => [
  "/",
  "/links",
  ...(withData ? ["/links?view=table"] : []),
  "/links/new",
  ...(withData ? [`/links/${full.linkId}`] : []),
  "/links/import",
  "/analytics",
  "/linktrees",
  ...(withData ? [`/linktrees/${full.treeId}`] : []),
  "/domains",
  "/workspaces",
  ...(withData ? [`/workspaces/${full.workspaceId}`] : []),
  "/settings",
  "/settings/tokens",
  "/settings/sessions",
  "/settings/audit",
  ...(admin ? ["/admin/reports"] : []),
  "/this-page-does-not-exist",
];

describe("keyboard alone", () => {
  it("signs in by e-mail code, creates a link and opens the phone menu without a pointer", async () => {
    const ctx = await context({ width: 390, height: 844 });
    const page = await newPage(ctx);
    const tabTo = async (check: () => Promise<boolean>, what: string) => {
      for (let i = 0; i < 40; i++) {
        if (await check()) return;
        await page.keyboard.press("Tab");
      }
      throw new Error(`Tab never reached ${what}`);
    };
    const focused = (sel: string) => page.evaluate((s) => document.activeElement?.matches(s) ?? false, sel);

    // Hydrated first (React committed, not merely the router created): an Enter pressed before goes
    // to the browser's own submission, and the step the test then types into can be replaced by it.
    // Every POST and its answer is kept for the failure message.
    const posts: string[] = [];
    page.on("response", (r) => {
      if (r.request().method() === "POST") posts.push(`${r.status()} ${r.url()} (${r.request().resourceType()})`);
    });
    await page.goto(`${server.appUrl}/login`);
    await hydrated(page);
    const started = Date.now();
    await tabTo(() => focused("input[type=email]"), "the e-mail field");
    await page.keyboard.type(keysEmail);
    await page.keyboard.press("Enter");
    await page.getByLabel("Code").waitFor();
    await hydrated(page);
    await tabTo(() => focused("input[name=code]"), "the code field");
    const code = await codeFor(server.dataDir, keysEmail, started);
    // Keys typed while the step is still settling (focus moving to the autofocused field) can be
    // lost, and the field's pattern then blocks the submit silently (failed 1 CI run in 3): check
    // the field, and select all and type again, still by keyboard, if it does not hold the code.
    const codeField = page.locator("input[name=code]");
    for (let i = 0; i < 3 && (await codeField.inputValue()) !== code; i++) {
      await tabTo(() => focused("input[name=code]"), "the code field");
      await page.keyboard.press("ControlOrMeta+A");
      await page.keyboard.type(code);
    }
    expect(await codeField.inputValue()).toBe(code);
    // The button is disabled while a navigation is pending, and Enter then submits nothing.
    await page.getByRole("button", { name: "Sign in", exact: true }).and(page.locator(":enabled")).waitFor();
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/links/).catch(async (e) => {
      throw new Error(
        `${String(e)}\n${await page.locator("main").textContent()}\nPOSTs: ${posts.join("; ")}; focus on ${await page.evaluate(() => document.activeElement?.outerHTML.slice(0, 120))}`,
      );
    });

    // The phone menu: Tab to its button, Enter opens it (aria-expanded), Tab reaches its links.
    const menu = page.getByTestId("phone-menu").locator("summary");
    await tabTo(() => focused("[data-testid=phone-menu] summary"), "the menu button");
    expect(await menu.getAttribute("aria-expanded")).toBe("false");
    await page.keyboard.press("Enter");
    expect(await page.getByTestId("phone-menu").evaluate((d) => (d as HTMLDetailsElement).open)).toBe(true);
    await page.waitForFunction(() => document.querySelector("[data-testid=phone-menu] summary")?.getAttribute("aria-expanded") === "true");
    await shot(page, "phone-menu-open-390");
    await tabTo(() => page.evaluate(() => document.activeElement?.textContent?.trim() === "Analytics"), "the menu's Analytics link");
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/analytics/);

    // A new link: the form filled and sent with keys only.
    await page.goto(`${server.appUrl}/links/new`);
    await hydrated(page);
    await tabTo(
      () => page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.labels?.[0]?.textContent?.includes("Destination URL") ?? false),
      "Destination URL",
    );
    await page.keyboard.type("https://example.com/keyboard");
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/links\/[0-9a-z]{8}\?created=1/);
    expect(page.problems).toEqual([]);
    await ctx.close();
  });
});

it("the phone menu opens without JavaScript (a <details> disclosure)", async () => {
  const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, userAgent: USER_AGENT, javaScriptEnabled: false });
  const page = await ctx.newPage();
  await page.goto(`${server.appUrl}/login`);
  const nav = page.getByRole("navigation", { name: "Main" });
  expect(await nav.isVisible()).toBe(false);
  await page.getByTestId("phone-menu").locator("summary").click();
  expect(await nav.getByRole("link", { name: "Report abuse" }).isVisible()).toBe(true);
  await ctx.close();
});

/**
 * The full account (links with clicks, a published linktree, a domain, a team with an invitation, a
 * report), made once by whichever test needs it first: neither test depends on the other's order.
 */
let fullReady: Promise<void> | undefined;
const ensureFullAccount = () => (fullReady ??= makeFullAccount());
async function makeFullAccount() {
  const ctx = await context({ width: 1280, height: 900 });
  const page = await newPage(ctx);
  await signIn(page, server, adminEmail);
  const { token } = (await cli(server, "token:create", "--email", adminEmail)) as { token: string };
  const api = async (method: string, p: string, json?: unknown) => {
    const r = await fetch(`${server.appUrl}/api${p}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    const body = (await r.json()) as Record<string, string>;
    if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(body)}`);
    return body;
  };
  const link = await api("POST", "/links", { url: `${server.appUrl}/report?spring-sale`, tags: ["sale", "spring"] });
  await api("POST", "/links", { url: "https://example.com/blog" });
  full.linkId = link.id;
  for (const ua of [USER_AGENT, USER_AGENT.replace("Chrome/126", "Chrome/125")]) {
    const v = await browser.newContext({ userAgent: ua });
    // The destination is the app's own page: the visit ends somewhere real.
    await (await v.newPage()).goto(`${server.redirectUrl}/${link.slug}`);
    await v.close();
  }
  full.treeSlug = `a11y-tree-${Date.now().toString(36)}`;
  const tree = await api("POST", "/linktrees", { slug: full.treeSlug, title: "Maria Silva", bio: "Designer & photographer in Lisbon." });
  full.treeId = tree.id;
  await api("POST", `/linktrees/${tree.id}/items`, { title: "Shop", url: "https://example.com/shop" });
  await api("PATCH", `/linktrees/${tree.id}`, { published: true });
  await api("POST", "/reports", { url: `${server.redirectUrl}/${link.slug}`, reason: "spam" }).catch(() => undefined);

  await page.goto(`${server.appUrl}/domains`);
  await page.getByLabel("Domain name").fill(`a11y-${Date.now().toString(36)}.example.com`);
  await page.getByRole("button", { name: "Add domain" }).click();
  await page.getByRole("button", { name: "Verify now" }).first().waitFor();

  await page.goto(`${server.appUrl}/workspaces`);
  await page.getByLabel("Name").fill("Acme Marketing");
  await page.getByRole("button", { name: "Create workspace" }).click();
  await page.waitForURL(/\/workspaces\/[0-9a-z]{8}\?created=1/);
  full.workspaceId = page.url().match(/\/workspaces\/([0-9a-z]{8})/)![1];
  await page.getByLabel("E-mail").fill(emptyEmail);
  await page.getByLabel("Role", { exact: true }).selectOption("member");
  await page.getByRole("button", { name: "Send invitation" }).click();
  await page.getByText(`Invitation sent to ${emptyEmail}`).waitFor();
  full.inviteUrl = await invitationLink(server.dataDir, emptyEmail);
  await ctx.close();
}

describe("axe-core finds no serious or critical violation", () => {
  it("on every page of an empty account, signed in, at desktop and phone width", async () => {
    const violations: string[] = [];
    for (const [name, viewport] of VIEWPORTS) {
      const ctx = await context(viewport);
      const page = await newPage(ctx);
      await signIn(page, server, emptyEmail);
      violations.push(...(await auditAll(page, `empty/${name}`, signedIn(false, false))));
      if (name === "phone") {
        await page.goto(`${server.appUrl}/links`);
        await page.getByTestId("phone-menu").locator("summary").click();
        violations.push(...(await audit(page, `empty/${name} phone menu open`)));
      }
      await ctx.close();
    }
    expect(report(violations)).toEqual([]);
  }, 240_000);

  it("on every page of a full account (links, clicks, a linktree, a domain, a team, a report), signed in, at desktop and phone width", async () => {
    await ensureFullAccount();

    const violations: string[] = [];
    for (const [name, viewport] of [...VIEWPORTS, DARK]) {
      const c = await context(viewport, name === DARK[0] ? "dark" : "light");
      const p = await newPage(c);
      await signIn(p, server, adminEmail);
      violations.push(...(await auditAll(p, `full/${name}`, signedIn(true, true))));
      // The breakdowns with a filter on, and the invitation as its addressee would open it (here: signed in as someone else).
      violations.push(...(await auditAll(p, `full/${name}`, [`/analytics?browser=Chrome%20126&range=7d`, full.inviteUrl])));
      await c.close();
    }
    expect(report(violations)).toEqual([]);
  }, 240_000);

  it("on every public page, signed out, at desktop and phone width (the linktree and invitation of the full account included)", async () => {
    await ensureFullAccount();
    const violations: string[] = [];
    for (const [name, viewport] of [...VIEWPORTS, DARK]) {
      const ctx = await context(viewport, name === DARK[0] ? "dark" : "light");
      const page = await newPage(ctx);
      const extra = [...(full.treeSlug ? [`${server.redirectUrl}/${full.treeSlug}`] : []), ...(full.inviteUrl ? [full.inviteUrl] : [])];
      violations.push(...(await auditAll(page, `signed-out/${name}`, [...SIGNED_OUT, ...extra])));
      // The second step of sign-in: the code form.
      await page.goto(`${server.appUrl}/login`);
      await page.getByLabel("E-mail").fill(`nobody-${Date.now()}@example.com`);
      await page.getByRole("button", { name: "Send code" }).click();
      await page.getByLabel("Code").waitFor();
      violations.push(...(await audit(page, `signed-out/${name} /login (code step)`)));
      await ctx.close();
    }
    expect(full.treeSlug).not.toBe("");
    expect(report(violations)).toEqual([]);
  }, 240_000);
});
