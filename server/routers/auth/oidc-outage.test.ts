import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestServer, freePort, http, type TestServer } from "../../test/harness";
import { startOidcProvider, type OidcProvider } from "./oidc-provider.test-helper";
import { sessionCookieOf, uniqueEmail } from "./sign-in.test-helper";

// When the identity provider is down, answers garbage or sends the person back with an error, the
// browser lands on the sign-in page with a message in plain words: never a 500, never a session.

const NOT_REACHABLE = "Single sign-on is not reachable right now";

const flowCookie = (headers: Headers) =>
  headers
    .getSetCookie()
    .find((c) => c.startsWith("app_oidc="))
    ?.split(";")[0] ?? null;

/** An issuer on a loopback port nothing listens on. */
async function deadIssuer() {
  return `http://127.0.0.1:${await freePort()}`;
}

describe("a provider that refuses connections", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await createTestServer({ OIDC_ISSUER: await deadIssuer(), OIDC_CLIENT_ID: "links", OIDC_CLIENT_SECRET: "secret" }, { remix: true });
  });
  afterAll(() => t?.close());

  it("the button leads back to the sign-in page saying single sign-on is not reachable, with e-mail sign-in still offered", async () => {
    const start = await http(`${t.appUrl}/auth/oidc/start?redirectTo=${encodeURIComponent("/links")}`);
    expect(start.status).toBe(302);
    expect(start.headers.get("location")).toBe("/login?sso=unavailable&redirectTo=%2Flinks");
    expect(flowCookie(start.headers)).toBeNull();
    const page = await http(`${t.appUrl}${start.headers.get("location")}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(NOT_REACHABLE);
    expect(page.text).toContain("You can still sign in with a code by e-mail below.");
    expect(page.text).toContain('name="email"');
  });
});

describe("a provider whose discovery answers garbage", () => {
  let t: TestServer;
  let junk: Server;
  let discoveryAnswer = "<html><body>Welcome to nginx!</body></html>";
  beforeAll(async () => {
    junk = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end(discoveryAnswer));
    const port = await freePort();
    await new Promise<void>((r) => junk.listen(port, "127.0.0.1", r));
    t = await createTestServer({ OIDC_ISSUER: `http://127.0.0.1:${port}`, OIDC_CLIENT_ID: "links", OIDC_CLIENT_SECRET: "secret" }, { remix: true });
  });
  afterAll(async () => {
    await t?.close();
    await new Promise((r) => junk?.close(r));
  });

  it("an HTML page instead of the provider's configuration gives the not-reachable page, not a 500", async () => {
    const start = await http(`${t.appUrl}/auth/oidc/start`);
    expect(start.status).toBe(302);
    expect(start.headers.get("location")).toMatch(/^\/login\?sso=unavailable/);
    expect((await http(`${t.appUrl}${start.headers.get("location")}`)).text).toContain(NOT_REACHABLE);
  });

  it("a configuration naming another issuer gives the same page", async () => {
    discoveryAnswer = JSON.stringify({ issuer: "https://elsewhere.example", authorization_endpoint: "https://elsewhere.example/authorize" });
    const start = await http(`${t.appUrl}/auth/oidc/start`);
    expect(start.headers.get("location")).toMatch(/^\/login\?sso=unavailable/);
  });
});

describe("a provider that sends the person back with an error, or fails the code exchange", () => {
  let provider: OidcProvider;
  let t: TestServer;
  beforeAll(async () => {
    provider = await startOidcProvider();
    t = await createTestServer({ OIDC_ISSUER: provider.issuer, OIDC_CLIENT_ID: provider.clientId, OIDC_CLIENT_SECRET: provider.clientSecret }, { remix: true });
  });
  afterAll(async () => {
    await t?.close();
    await provider?.close();
  });

  /** Start, the provider's answer, and the callback with the flow's cookie, as a browser goes. */
  async function roundTrip() {
    const start = await http(`${t.appUrl}/auth/oidc/start`);
    const cookie = flowCookie(start.headers)!;
    const authorize = await http(start.headers.get("location")!);
    const callback = authorize.headers.get("location")!;
    const done = await http(callback, { headers: { cookie } });
    return { callback: new URL(callback), done };
  }

  it("error=access_denied (the person cancelled at the provider) comes back to the sign-in page saying it was cancelled, signed out", async () => {
    provider.tamper = { authorizeError: "access_denied" };
    try {
      const { callback, done } = await roundTrip();
      expect(callback.searchParams.get("error")).toBe("access_denied");
      expect(done.status).toBe(302);
      expect(done.headers.get("location")).toBe("/login?sso=denied");
      expect(sessionCookieOf(done.headers)).toBeNull();
      // The flow's cookie is spent all the same.
      expect(done.headers.getSetCookie().find((c) => c.startsWith("app_oidc="))).toMatch(/Max-Age=0/i);
      const page = await http(`${t.appUrl}/login?sso=denied`);
      expect(page.status).toBe(200);
      expect(page.text).toContain("Sign-in was cancelled at your identity provider");
    } finally {
      provider.tamper = {};
    }
  });

  it("error=temporarily_unavailable from the provider says single sign-on is not reachable", async () => {
    provider.tamper = { authorizeError: "temporarily_unavailable" };
    try {
      expect((await roundTrip()).done.headers.get("location")).toBe("/login?sso=unavailable");
    } finally {
      provider.tamper = {};
    }
  });

  it("another error from the provider (invalid_scope) says the provider turned the request down", async () => {
    provider.tamper = { authorizeError: "invalid_scope" };
    try {
      expect((await roundTrip()).done.headers.get("location")).toBe("/login?sso=rejected");
      expect((await http(`${t.appUrl}/login?sso=rejected`)).text).toContain("turned down the sign-in request");
    } finally {
      provider.tamper = {};
    }
  });

  it("a code exchange answered with a 502 HTML page says single sign-on is not reachable, not a 500", async () => {
    provider.nextUser = { sub: "g1", email: uniqueEmail(), email_verified: true };
    provider.tamper = { token: "garbage" };
    try {
      const { done } = await roundTrip();
      expect(done.status).toBe(302);
      expect(done.headers.get("location")).toBe("/login?sso=unavailable");
      expect(sessionCookieOf(done.headers)).toBeNull();
    } finally {
      provider.tamper = {};
    }
  });

  it("an unknown reason in the sign-in page's address shows no message", async () => {
    const page = await http(`${t.appUrl}/login?sso=constructor`);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('role="alert"');
  });
});
