import type { Server } from "node:http";
import Provider from "oidc-provider";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestServer, freePort, http, type TestServer } from "../server/test/harness";
import { launch, newPage, shot, USER_AGENT } from "./harness";

// Single sign-on in a real browser against a real OpenID Connect provider (the oidc-provider
// package, on loopback, with its own login and consent pages): the person clicks the button, signs
// in and consents at the provider, and comes back signed in to the dashboard.
const EMAIL = "ada.sso@example.com";
const UNVERIFIED = "unverified.sso@example.com";
const CLIENT = { client_id: "links-e2e", client_secret: "e2e-secret-0123456789abcdef" };

let t: TestServer;
let provider: Provider;
let providerServer: Server;
let browser: Browser;

beforeAll(async () => {
  // The issuer's port is chosen first, so the app knows its issuer and the provider knows the app's
  // callback; the app reads the provider's discovery only when a sign-in starts.
  const issuer = `http://127.0.0.1:${await freePort()}`;
  t = await createTestServer(
    { OIDC_ISSUER: issuer, OIDC_CLIENT_ID: CLIENT.client_id, OIDC_CLIENT_SECRET: CLIENT.client_secret, OIDC_NAME: "Sign in with Acme ID" },
    { remix: true },
  );
  provider = new Provider(issuer, {
    clients: [
      {
        ...CLIENT,
        redirect_uris: [`${t.appUrl}/auth/oidc/callback`],
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_basic",
      },
    ],
    claims: { openid: ["sub"], email: ["email", "email_verified"] },
    // The dev login page takes any login with any password; the login is the account's id.
    async findAccount(_ctx, id) {
      return {
        accountId: id,
        claims: () => ({ sub: id, email: id, email_verified: id !== UNVERIFIED }),
      };
    },
    pkce: { required: () => true },
    // Short lifetimes, stated so the provider does not warn about its defaults.
    ttl: { Interaction: 600, Session: 600, Grant: 600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
    cookies: { keys: ["e2e-cookie-key-0123456789"] },
  });
  await new Promise<void>((resolve) => {
    providerServer = provider.listen(Number(new URL(issuer).port), "127.0.0.1", resolve);
  });
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await new Promise((r) => (providerServer ? providerServer.close(r) : r(undefined)));
});

/** Clicks the button, signs in at the provider's page as `login` and consents. */
async function signInAtProvider(page: Awaited<ReturnType<typeof newPage>>, login: string) {
  await page.goto(`${t.appUrl}/login`);
  await page.getByRole("link", { name: "Sign in with Acme ID" }).click();
  await page.waitForURL((u) => u.href.startsWith(provider.issuer));
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill("anything");
  await page.getByRole("button", { name: "Sign-in" }).click();
  // The provider asks for consent to share the e-mail address with this client.
  await page.getByRole("button", { name: "Continue" }).click();
}

describe("single sign-on in Chromium with a real OpenID Connect provider", () => {
  it("clicking the button, signing in and consenting at the provider lands in the dashboard signed in as that user", async () => {
    const ctx = await browser.newContext({ userAgent: USER_AGENT });
    const page = await newPage(ctx);
    await signInAtProvider(page, EMAIL);
    await page.waitForURL(`${t.appUrl}/links`);
    await page.getByRole("heading", { level: 1, name: "Links" }).waitFor();
    // The dashboard's header names who is signed in.
    await page.getByRole("banner").getByText(EMAIL).first().waitFor();
    await shot(page, "oidc-signed-in");

    // The browser's session is the account of the provider's verified e-mail.
    const cookies = await ctx.cookies(t.appUrl);
    const session = cookies.find((c) => c.name === "app_session");
    expect(session).toBeTruthy();
    const account = await http(`${t.api}/account`, { headers: { cookie: `app_session=${session!.value}` } });
    expect(account.status).toBe(200);
    expect(account.json.user.email).toBe(EMAIL);
    expect(page.problems, page.problems.join("\n")).toEqual([]);
    await ctx.close();
  });

  it("an e-mail the provider has not verified comes back to the sign-in page with a plain message, signed out", async () => {
    const ctx = await browser.newContext({ userAgent: USER_AGENT });
    const page = await newPage(ctx);
    await signInAtProvider(page, UNVERIFIED);
    await page.waitForURL((u) => u.pathname === "/login");
    await expect(page.getByRole("alert").textContent()).resolves.toContain("did not confirm this e-mail address");
    expect((await ctx.cookies(t.appUrl)).find((c) => c.name === "app_session")).toBeUndefined();
    await ctx.close();
  });

  it("cancelling at the provider's consent page comes back to the sign-in page saying so, signed out", async () => {
    const ctx = await browser.newContext({ userAgent: USER_AGENT });
    const page = await newPage(ctx);
    await page.goto(`${t.appUrl}/login`);
    await page.getByRole("link", { name: "Sign in with Acme ID" }).click();
    await page.waitForURL((u) => u.href.startsWith(provider.issuer));
    await page.locator('input[name="login"]').fill("someone.else@example.com");
    await page.locator('input[name="password"]').fill("anything");
    await page.getByRole("button", { name: "Sign-in" }).click();
    await page.getByRole("link", { name: /Cancel/ }).click();
    await page.waitForURL((u) => u.pathname === "/login");
    await expect(page.getByRole("alert").textContent()).resolves.toContain("cancelled");
    expect((await ctx.cookies(t.appUrl)).find((c) => c.name === "app_session")).toBeUndefined();
    await ctx.close();
  });
});
