import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { links, users } from "../../../db/schema";
import { createUserWithWorkspace, issueToken } from "../../lib/users";
import { createTestServer, http, type TestServer } from "../../test/harness";
import { caller, invitationToken, person } from "../workspaces/teams.test-helper";
import { startOidcProvider, type OidcProvider } from "./oidc-provider.test-helper";
import { latestCode, outbox, pendingCookieOf, sessionCookieOf, uniqueEmail } from "./sign-in.test-helper";

/** An instance with sign-ups and anonymous links off (and single sign-on beside e-mail codes). */
let t: TestServer;
let provider: OidcProvider;
beforeAll(async () => {
  provider = await startOidcProvider();
  t = await createTestServer(
    {
      SIGNUPS: "off",
      ANONYMOUS_LINKS: "off",
      OIDC_ISSUER: provider.issuer,
      OIDC_CLIENT_ID: provider.clientId,
      OIDC_CLIENT_SECRET: provider.clientSecret,
    },
    { remix: true },
  );
});
afterAll(async () => {
  await t?.close();
  await provider?.close();
});

/** A pending invitation for `email` to a new team. */
async function invite(email: string) {
  const owner = await person(t);
  const ws = (await caller(() => t.api)("POST", "/workspaces", owner.cookie, { name: "Team" })).json.id;
  expect((await caller(() => t.api)("POST", `/workspaces/${ws}/invites`, owner.cookie, { email, role: "member" })).status).toBe(201);
  return ws;
}

const start = (email: string) => http(`${t.api}/auth/start`, { method: "POST", json: { email } });

describe("SIGNUPS=off", () => {
  it("an unknown, uninvited address gets no code, and the same answer as a known one", async () => {
    const known = await createUserWithWorkspace(t.app.db, { email: uniqueEmail() });
    const stranger = uniqueEmail();
    const a = await start(known.email);
    const b = await start(stranger);
    expect([a.status, a.text]).toEqual([b.status, b.text]);
    expect(b.status).toBe(204);
    expect(outbox(t, stranger)).toEqual([]);
    expect(outbox(t, known.email)).toHaveLength(1);
    expect(a.headers.getSetCookie().map((c) => c.split("=")[0])).toEqual(b.headers.getSetCookie().map((c) => c.split("=")[0]));
  });

  it("an existing user signs in as before", async () => {
    const known = await createUserWithWorkspace(t.app.db, { email: uniqueEmail() });
    const s = await start(known.email);
    const verify = await http(`${t.api}/auth/verify`, {
      method: "POST",
      json: { email: known.email, code: latestCode(t, known.email) },
      headers: { cookie: pendingCookieOf(s.headers)! },
    });
    expect(verify.status).toBe(200);
    expect(verify.json.user.id).toBe(known.id);
  });

  it("an invited address gets a code and its first sign-in makes the account", async () => {
    const email = uniqueEmail();
    await invite(email);
    const s = await start(email);
    const verify = await http(`${t.api}/auth/verify`, {
      method: "POST",
      json: { email, code: latestCode(t, email) },
      headers: { cookie: pendingCookieOf(s.headers)! },
    });
    expect(verify.status).toBe(200);
    expect(verify.json.user.email).toBe(email);
  });

  it("single sign-on of a new, uninvited address is refused and makes no account; an invited one signs in", async () => {
    const stranger = uniqueEmail();
    provider.nextUser = { sub: "x", email: stranger, email_verified: true };
    const refused = await ssoRoundTrip();
    expect(refused.location).toBe("/login?sso=refused");
    expect(await t.app.db.select().from(users).where(eq(users.email, stranger))).toEqual([]);

    const invited = uniqueEmail();
    const ws = await invite(invited);
    provider.nextUser = { sub: "y", email: invited, email_verified: true };
    const ok = await ssoRoundTrip();
    expect(ok.location).toBe("/links");
    expect(ok.session).toBeTruthy();
    // The invitation is still there to accept.
    const accept = await http(`${t.api}/invites/accept`, {
      method: "POST",
      json: { token: invitationToken(t.app, invited) },
      headers: { cookie: ok.session! },
    });
    expect(accept.status).toBe(200);
    expect(accept.json.workspace.id).toBe(ws);
  });
});

async function ssoRoundTrip() {
  const s = await http(`${t.appUrl}/auth/oidc/start`);
  const cookie = s.headers
    .getSetCookie()
    .find((c) => c.startsWith("app_oidc="))!
    .split(";")[0];
  const back = await http((await http(s.headers.get("location")!)).headers.get("location")!, { headers: { cookie } });
  return { location: back.headers.get("location"), session: sessionCookieOf(back.headers) };
}

describe("ANONYMOUS_LINKS=off", () => {
  it("POST /links without a credential answers 401 UNAUTHORIZED and creates nothing", async () => {
    const url = `https://example.com/anon-${Date.now()}`;
    const r = await http(`${t.api}/links`, { method: "POST", json: { url } });
    expect([r.status, r.json]).toEqual([401, { error: "UNAUTHORIZED" }]);
    expect(await t.app.db.select().from(links).where(eq(links.url, url))).toEqual([]);
  });

  it("with a token or a session, links are created as before", async () => {
    const user = await createUserWithWorkspace(t.app.db, { email: uniqueEmail() });
    const { token } = await issueToken(t.app.db, user.id, "t");
    const r = await http(`${t.api}/links`, { method: "POST", json: { url: "https://example.com/mine" }, headers: { authorization: `Bearer ${token}` } });
    expect(r.status).toBe(201);
  });
});
