import { createServer, type Server } from "node:http";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestServer, http, type TestServer, type TestUser } from "../server/test/harness";
import { launch, newPage, shot, USER_AGENT } from "./harness";

// A password link in a real browser: the form's POST answers a 302 to another origin, which the
// page's own CSP (form-action) must not block.
let t: TestServer;
let owner: TestUser;
let browser: Browser;
/** Stands in for the destination site, so nothing leaves the machine. */
let dest: Server;
let destUrl = "";

beforeAll(async () => {
  t = await createTestServer();
  owner = await t.user({ plan: "pro" });
  dest = createServer((req, res) => res.writeHead(200, { "content-type": "text/html" }).end(`<title>Arrived</title><h1>Arrived at ${req.url}</h1>`));
  await new Promise<void>((r) => dest.listen(0, "127.0.0.1", r));
  destUrl = `http://127.0.0.1:${(dest.address() as { port: number }).port}`;
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  dest?.close();
});

describe("password link in Chromium", () => {
  it("a wrong password shows the form again; the right one lands on the destination, counted once", async () => {
    const r = await http(`${t.api}/links`, { method: "POST", json: { url: `${destUrl}/secret?x=1`, password: "open sesame" }, headers: owner.auth });
    expect(r.status, r.text).toBe(201);
    const link = r.json as { id: string; slug: string };

    const ctx = await browser.newContext({ userAgent: USER_AGENT, javaScriptEnabled: false });
    const page = await newPage(ctx);
    expect((await page.goto(`${t.redirect}/${link.slug}`))?.status()).toBe(200);

    await page.getByLabel("Password").fill("not it");
    const wrong = await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Continue" }).click()]);
    expect(wrong[0]?.status()).toBe(401);
    await expect(page.getByRole("alert").textContent()).resolves.toContain("Wrong password");
    expect(page.url()).toBe(`${t.redirect}/${link.slug}`);

    await page.getByLabel("Password").fill("open sesame");
    await Promise.all([page.waitForURL(`${destUrl}/secret?x=1`, { timeout: 10_000 }), page.getByRole("button", { name: "Continue" }).click()]);
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Arrived at /secret?x=1");
    await shot(page, "password-link-arrived");
    expect(page.problems, page.problems.join("\n")).toEqual([]);
    await ctx.close();

    await t.app.clicks?.flush();
    const stats = await http(`${t.api}/links/${link.id}/analytics`, { headers: owner.auth });
    expect((stats.json as { count: number }).count).toBe(1);
  });
});
