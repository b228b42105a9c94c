import nodeHttp from "node:http";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDnsServer, type TestDnsServer } from "../server/routers/domains/dns-server.test-helper";
import { launch, newPage, shot, signIn, startServer, USER_AGENT, type Server } from "./harness";

// Branded domains in Chromium: add a domain, see the TXT record, verify it against a real local
// DNS server, create a link on it with the picker, and follow the link by its Host.
let dns: TestDnsServer;
let server: Server;
let browser: Browser;
let ctx: BrowserContext;
let page: Page & { problems: string[] };
const name = `go-${Date.now().toString(36)}.brand.example`;
let linkPage = "";

beforeAll(async () => {
  dns = await startDnsServer();
  server = await startServer({ DNS_SERVERS: dns.address });
  browser = await launch();
  ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, userAgent: USER_AGENT });
  page = await newPage(ctx);
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await dns?.close();
});

/** GET on the redirect host's port with this Host header (fetch cannot set Host). */
const visit = (host: string, path: string) =>
  new Promise<{ status: number; location?: string }>((resolve, reject) => {
    const u = new URL(server.redirectUrl);
    nodeHttp
      .get({ host: u.hostname, port: u.port, path, headers: { host, "user-agent": USER_AGENT } }, (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode!, location: res.headers.location }));
      })
      .on("error", reject);
  });

describe("branded domains in Chromium", () => {
  it("adds a domain and shows the TXT record to create, with copy buttons", async () => {
    await signIn(page, server, `dom${Date.now()}@example.com`);
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Domains" }).click();
    await page.waitForURL(/\/domains$/);
    // A bad name is refused, saying why (a pasted URL is not bad: the page reduces it to its host name).
    await page.getByLabel("Domain name").fill("intranet");
    await page.getByRole("button", { name: "Add domain" }).click();
    await expect(page.getByRole("alert").first().textContent()).resolves.toContain("Some fields need attention");
    await expect(page.getByText("must have at least two labels").isVisible()).resolves.toBe(true);

    await page.getByLabel("Domain name").fill(name);
    await page.getByRole("button", { name: "Add domain" }).click();
    await page.getByText(`${name} added`).waitFor();
    const card = page.getByTestId("domain").filter({ hasText: name });
    await expect(card.getByTestId("domain-status").textContent()).resolves.toBe("Pending verification");
    await expect(card.getByTestId("txt-name").textContent()).resolves.toBe(`_links-verify.${name}`);
    await expect(card.getByTestId("txt-value").textContent()).resolves.toMatch(/^links-verify=[0-9A-Za-z]{24}$/);
    await expect(card.getByRole("button", { name: "Copy value" }).isVisible()).resolves.toBe(true);
    await shot(page, "domains-added");
  });

  it("'Verify now' says the record is missing, then verifies once it is published", async () => {
    const card = page.getByTestId("domain").filter({ hasText: name });
    await card.getByRole("button", { name: "Verify now" }).click();
    await page.getByText("The TXT record was not found yet").waitFor();
    const value = (await page.getByTestId("domain").filter({ hasText: name }).getByTestId("txt-value").textContent())!;
    dns.txt.set(`_links-verify.${name}`, [value]);
    await page.getByTestId("domain").filter({ hasText: name }).getByRole("button", { name: "Verify now" }).click();
    await page.getByText(`Verified. Links can now use ${name}.`).waitFor();
    await page
      .getByTestId("domain")
      .filter({ hasText: name })
      .getByTestId("domain-status")
      .filter({ hasText: /^Verified$/ })
      .waitFor({ timeout: 5_000 });
    await shot(page, "domains-verified");
  });

  it("sets a not-found page", async () => {
    const card = page.getByTestId("domain").filter({ hasText: name });
    await card.getByLabel("Not-found page").fill("https://www.brand.example/missing");
    await card.getByRole("button", { name: "Save not-found page" }).click();
    await page.getByText("Saved.").waitFor();
    expect((await visit(name, "/nothing-here")).location).toBe("https://www.brand.example/missing");
  });

  it("creates a link on the domain with the picker; the redirect host serves it by Host", async () => {
    await page.goto(`${server.appUrl}/links/new`);
    await page.getByLabel("Destination URL").fill("https://example.com/branded");
    await page.getByLabel("Domain", { exact: true }).selectOption(name);
    await page.getByLabel("Custom slug").fill("launch");
    await page.getByTestId("slug-status").filter({ hasText: "available" }).waitFor();
    await shot(page, "domains-link-form");
    await page.getByRole("button", { name: "Create link" }).click();
    await page.waitForURL(/\/links\/[0-9a-z]{8}\?created=1/);
    linkPage = page.url().replace(/\?.*$/, "");
    expect(await page.getByTestId("short-url").textContent()).toBe(`https://${name}/launch`);
    // The edit form keeps the domain.
    expect(await page.getByLabel("Domain", { exact: true }).inputValue()).toBe(name);

    const r = await visit(name, "/launch");
    expect(r.status).toBe(301);
    expect(r.location).toBe("https://example.com/branded");
    // Not on the default domain: its own namespace.
    expect((await visit(new URL(server.redirectUrl).host, "/launch")).status).toBe(404);
  });

  it("refuses to remove a domain with live links, and removes it after confirmation once they are gone", async () => {
    await page.goto(`${server.appUrl}/domains`);
    let card = page.getByTestId("domain").filter({ hasText: name });
    await card.locator("summary", { hasText: "Remove domain" }).click();
    await card.getByLabel(`Yes, delete ${name}`).check();
    await card.getByRole("button", { name: "Remove domain" }).click();
    await page.getByText("Links still use this domain").waitFor();
    await shot(page, "domains-in-use");

    // Delete the link, then the domain.
    await page.goto(linkPage);
    await page.locator("summary", { hasText: "Delete link" }).click();
    await page.getByLabel(/Yes, delete the link/).check();
    await page.getByRole("button", { name: "Delete link" }).click();
    await page.waitForURL(/\/links\?deleted=1/);

    await page.goto(`${server.appUrl}/domains`);
    card = page.getByTestId("domain").filter({ hasText: name });
    await card.locator("summary", { hasText: "Remove domain" }).click();
    await card.getByLabel(`Yes, delete ${name}`).check();
    await card.getByRole("button", { name: "Remove domain" }).click();
    await page.getByText(`${name} removed.`).waitFor();
    // The action's answer shows while the list reloads: wait for the list.
    await page.getByTestId("domain").filter({ hasText: name }).waitFor({ state: "detached", timeout: 5_000 });
    expect((await visit(name, "/")).status).toBe(404);
    expect(page.problems, page.problems.join("\n")).toEqual([]);
  });
});
