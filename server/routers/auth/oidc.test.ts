import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { users } from "../../../db/schema";
import { createTestServer, http, type TestServer } from "../../test/harness";
import { startOidcProvider, type OidcProvider } from "./oidc-provider.test-helper";
import { sessionCookieOf, uniqueEmail } from "./sign-in.test-helper";

let provider: OidcProvider;
let t: TestServer;

beforeAll(async () => {
  provider = await startOidcProvider();
  t = await createTestServer(
    { OIDC_ISSUER: provider.issuer, OIDC_CLIENT_ID: provider.clientId, OIDC_CLIENT_SECRET: provider.clientSecret, OIDC_NAME: "Sign in with Acme" },
    { remix: true },
  );
});
afterAll(async () => {
  await t?.close();
  await provider?.close();
});

const oidcCookie = (headers: Headers) =>
  headers
    .getSetCookie()
    .find((c) => c.startsWith("app_oidc="))
    ?.split(";")[0] ?? null;

/** The whole round trip as a browser makes it; `bend` may change the provider's redirect back first. */
async function signInWithProvider(opts: { bend?: (callback: URL) => URL; cookie?: (c: string) => string | null } = {}) {
  const start = await http(`${t.appUrl}/auth/oidc/start?redirectTo=${encodeURIComponent("/links?x=1")}`);
  expect(start.status).toBe(302);
  const cookie = oidcCookie(start.headers);
  expect(cookie).toBeTruthy();
  const authorize = await http(start.headers.get("location")!);
  expect(authorize.status).toBe(302);
  let callback = new URL(authorize.headers.get("location")!);
  if (opts.bend) callback = opts.bend(callback);
  const sent = opts.cookie ? opts.cookie(cookie!) : cookie;
  const done = await http(callback.href, { headers: sent ? { cookie: sent } : {} });
  return { start, done, session: sessionCookieOf(done.headers), callback };
}

describe("single sign-on with OpenID Connect", () => {
  it("the sign-in page shows a button labelled OIDC_NAME that starts the flow", async () => {
    const page = await http(`${t.appUrl}/login`);
    expect(page.status).toBe(200);
    expect(page.text).toContain("Sign in with Acme");
    expect(page.text).toContain('href="/auth/oidc/start?redirectTo=');
    // E-mail sign-in stays on beside it.
    expect(page.text).toContain('name="email"');
  });

  it("the authorization request uses the code flow with PKCE (S256), state, nonce and the callback under APP_URL", async () => {
    const start = await http(`${t.appUrl}/auth/oidc/start`);
    const url = new URL(start.headers.get("location")!);
    expect(url.origin + url.pathname).toBe(`${provider.issuer}/authorize`);
    const q = url.searchParams;
    expect(q.get("response_type")).toBe("code");
    expect(q.get("client_id")).toBe(provider.clientId);
    expect(q.get("redirect_uri")).toBe(`${t.appUrl}/auth/oidc/callback`);
    expect(q.get("scope")).toContain("openid");
    expect(q.get("code_challenge_method")).toBe("S256");
    expect(q.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get("state")).toBeTruthy();
    expect(q.get("nonce")).toBeTruthy();
    expect(start.headers.getSetCookie().find((c) => c.startsWith("app_oidc="))).toMatch(/HttpOnly/i);
  });

  it("a first sign-in with a verified e-mail creates the account; the next one signs in to the same account", async () => {
    const email = uniqueEmail();
    provider.nextUser = { sub: "a1", email: email.toUpperCase(), email_verified: true };
    const first = await signInWithProvider();
    expect(first.done.status).toBe(302);
    expect(first.done.headers.get("location")).toBe("/links?x=1");
    expect(first.session).toBeTruthy();
    expect(provider.lastToken?.get("code_verifier")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const account = await http(`${t.api}/account`, { headers: { cookie: first.session! } });
    expect(account.json.user.email).toBe(email);
    const second = await signInWithProvider();
    const again = await http(`${t.api}/account`, { headers: { cookie: second.session! } });
    expect(again.json.user.id).toBe(account.json.user.id);
  });

  it("an e-mail the provider has not verified is refused, and no account is made", async () => {
    const email = uniqueEmail();
    provider.nextUser = { sub: "u1", email, email_verified: false };
    const r = await signInWithProvider();
    expect(r.done.status).toBe(302);
    expect(r.done.headers.get("location")).toBe("/login?sso=refused");
    expect(r.session).toBeNull();
    expect(await t.app.db.select().from(users).where(eq(users.email, email))).toEqual([]);
    const page = await http(`${t.appUrl}/login?sso=refused`);
    expect(page.text).toContain("did not confirm this e-mail address");
  });

  it("without email_verified, Entra's xms_edov: true (the tenant owns the address's domain) counts as verified", async () => {
    const email = uniqueEmail();
    provider.nextUser = { sub: "e1", email, xms_edov: true };
    const r = await signInWithProvider();
    expect(r.done.headers.get("location")).toBe("/links?x=1");
    expect((await http(`${t.api}/account`, { headers: { cookie: r.session! } })).json.user.email).toBe(email);
  });

  it("without email_verified, xms_edov: false is refused, and email_verified: false wins over xms_edov: true", async () => {
    provider.nextUser = { sub: "e2", email: uniqueEmail(), xms_edov: false };
    expect((await signInWithProvider()).done.headers.get("location")).toBe("/login?sso=refused");
    const email = uniqueEmail();
    provider.nextUser = { sub: "e3", email, email_verified: false, xms_edov: true };
    expect((await signInWithProvider()).done.headers.get("location")).toBe("/login?sso=refused");
    expect(await t.app.db.select().from(users).where(eq(users.email, email))).toEqual([]);
  });

  it("a callback whose state is not the browser's is refused", async () => {
    provider.nextUser = { sub: "s1", email: uniqueEmail(), email_verified: true };
    const r = await signInWithProvider({
      bend: (u) => {
        u.searchParams.set("state", "forged");
        return u;
      },
    });
    expect(r.done.headers.get("location")).toBe("/login?sso=failed");
    expect(r.session).toBeNull();
  });

  it("a callback without the flow's cookie (another browser) is refused", async () => {
    provider.nextUser = { sub: "s2", email: uniqueEmail(), email_verified: true };
    const r = await signInWithProvider({ cookie: () => null });
    expect(r.done.headers.get("location")).toBe("/login?sso=failed");
    expect(r.session).toBeNull();
  });

  it("a forged flow cookie is refused", async () => {
    provider.nextUser = { sub: "s3", email: uniqueEmail(), email_verified: true };
    const r = await signInWithProvider({ cookie: (c) => `${c.slice(0, -4)}AAAA` });
    expect(r.done.headers.get("location")).toBe("/login?sso=failed");
  });

  it("an ID token whose nonce is not the flow's is refused", async () => {
    provider.nextUser = { sub: "n1", email: uniqueEmail(), email_verified: true };
    provider.tamper = { nonce: "replayed" };
    try {
      const r = await signInWithProvider();
      expect(r.done.headers.get("location")).toBe("/login?sso=failed");
      expect(r.session).toBeNull();
    } finally {
      provider.tamper = {};
    }
  });

  it("an ID token for another client is refused", async () => {
    provider.nextUser = { sub: "n2", email: uniqueEmail(), email_verified: true };
    provider.tamper = { audience: "someone-else" };
    try {
      expect((await signInWithProvider()).done.headers.get("location")).toBe("/login?sso=failed");
    } finally {
      provider.tamper = {};
    }
  });
});

describe("a provider that takes client_secret_post only", () => {
  let postOnly: OidcProvider;
  let s: TestServer;
  beforeAll(async () => {
    postOnly = await startOidcProvider({ onlyPost: true });
    s = await createTestServer({ OIDC_ISSUER: postOnly.issuer, OIDC_CLIENT_ID: postOnly.clientId, OIDC_CLIENT_SECRET: postOnly.clientSecret }, { remix: true });
  });
  afterAll(async () => {
    await s?.close();
    await postOnly?.close();
  });

  it("gets the client's credentials in the token request's form", async () => {
    postOnly.nextUser = { sub: "p1", email: uniqueEmail(), email_verified: true };
    const start = await http(`${s.appUrl}/auth/oidc/start`);
    const cookie = oidcCookie(start.headers)!;
    const back = await http((await http(start.headers.get("location")!)).headers.get("location")!, { headers: { cookie } });
    expect(back.headers.get("location")).toBe("/links");
    expect(sessionCookieOf(back.headers)).toBeTruthy();
    expect(postOnly.lastToken?.get("client_secret")).toBe(postOnly.clientSecret);
  });
});

describe("EMAIL_SIGNIN=off", () => {
  let only: TestServer;
  beforeAll(async () => {
    only = await createTestServer(
      { OIDC_ISSUER: provider.issuer, OIDC_CLIENT_ID: provider.clientId, OIDC_CLIENT_SECRET: provider.clientSecret, EMAIL_SIGNIN: "off" },
      { remix: true },
    );
  });
  afterAll(() => only?.close());

  it("leaves only single sign-on: the code paths answer 404 and the page shows only the button", async () => {
    const start = await http(`${only.api}/auth/start`, { method: "POST", json: { email: uniqueEmail() } });
    expect([start.status, start.json]).toEqual([404, { error: "NOT_FOUND" }]);
    const verify = await http(`${only.api}/auth/verify`, { method: "POST", json: { email: uniqueEmail(), code: "123456" } });
    expect([verify.status, verify.json]).toEqual([404, { error: "NOT_FOUND" }]);
    const page = await http(`${only.appUrl}/login`);
    expect(page.text).toContain("Single sign-on");
    expect(page.text).not.toContain('name="email"');
  });
});

describe("without OIDC_ISSUER", () => {
  let plain: TestServer;
  beforeAll(async () => {
    plain = await createTestServer({}, { remix: true });
  });
  afterAll(() => plain?.close());

  it("there is no single sign-on: its paths answer 404 and the page has no button", async () => {
    expect((await http(`${plain.appUrl}/auth/oidc/start`)).status).toBe(404);
    expect((await http(`${plain.appUrl}/auth/oidc/callback?code=x&state=y`)).status).toBe(404);
    expect((await http(`${plain.appUrl}/login`)).text).not.toContain("/auth/oidc/start");
  });
});
