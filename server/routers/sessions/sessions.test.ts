import { randomInt } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestServer, http, type TestServer } from "../../test/harness";
import { signIn, uniqueEmail } from "../auth/sign-in.test-helper";

const IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1";
const CHROME_WIN = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const CLOUDFRONT = {
  "cloudfront-viewer-country": "BR",
  "cloudfront-viewer-country-region-name": "S%C3%A3o%20Paulo",
  "cloudfront-viewer-city": "Campinas",
  "cloudfront-is-tablet-viewer": "true",
  "cloudfront-is-mobile-viewer": "false",
};
const addr = () => ({ "x-forwarded-for": `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}` });

let t: TestServer;
let edge: TestServer;
beforeAll(async () => {
  t = await createTestServer({ TRUST_PROXY: "true" });
  edge = await createTestServer({ TRUST_PROXY: "true", EDGE_HEADERS: "cloudfront" });
});
afterAll(async () => {
  await t?.close();
  await edge?.close();
});

const list = (s: TestServer, headers: Record<string, string>) => http(`${s.api}/account/sessions`, { headers });

describe("login sessions", () => {
  it("lists the Session record with id = last six characters of the token, current, times and client", async () => {
    const s = await signIn(t, uniqueEmail(), { ...addr(), "user-agent": CHROME_WIN });
    const token = s.cookie.split("=")[1];
    const r = await list(t, s.headers);
    expect(r.status).toBe(200);
    expect(r.json.sessions).toEqual([
      {
        id: token.slice(-6),
        created_at: expect.any(Number),
        expires_at: expect.any(Number),
        current: true,
        device: "desktop",
        browser: "Chrome 131",
        platform: "Windows",
        country: null,
        region_name: null,
        city: null,
      },
    ]);
  });

  it("lasts 30 days", async () => {
    const s = await signIn(t, uniqueEmail(), addr());
    const [rec] = (await list(t, s.headers)).json.sessions;
    expect(rec.expires_at - rec.created_at).toBeGreaterThan(30 * 86_400_000 - 60_000);
    expect(rec.expires_at - rec.created_at).toBeLessThan(30 * 86_400_000 + 60_000);
    expect(s.setCookie.find((c) => c.startsWith("app_session="))).toMatch(/Max-Age=2592000|Expires=/);
  });

  it("takes device from the User-Agent and ignores edge headers when EDGE_HEADERS is none", async () => {
    const s = await signIn(t, uniqueEmail(), { ...addr(), "user-agent": IPHONE, ...CLOUDFRONT });
    const [rec] = (await list(t, s.headers)).json.sessions;
    expect(rec).toMatchObject({ device: "mobile", platform: "iOS", browser: expect.stringMatching(/Safari/), country: null, region_name: null, city: null });
  });

  it("takes device hints and place from trusted CloudFront headers", async () => {
    const s = await signIn(edge, uniqueEmail(), { ...addr(), "user-agent": IPHONE, ...CLOUDFRONT });
    const [rec] = (await list(edge, s.headers)).json.sessions;
    expect(rec).toMatchObject({ device: "tablet", platform: "iOS", country: "BR", region_name: "São Paulo", city: "Campinas" });
  });

  it("records null device without a User-Agent or hint", async () => {
    const s = await signIn(t, uniqueEmail(), { ...addr(), "user-agent": "" });
    const [rec] = (await list(t, s.headers)).json.sessions;
    expect(rec.device).toBeNull();
  });

  it("marks only the caller's session as current, newest first", async () => {
    const email = uniqueEmail();
    const a = await signIn(t, email, addr());
    const b = await signIn(t, email, addr());
    const recs = (await list(t, a.headers)).json.sessions;
    expect(recs.map((x: { id: string }) => x.id)).toEqual([b.cookie.slice(-6), a.cookie.slice(-6)]);
    expect(recs.map((x: { current: boolean }) => x.current)).toEqual([false, true]);
  });

  it("ends another session by its id (204): that cookie answers 401 from then on", async () => {
    const email = uniqueEmail();
    const a = await signIn(t, email, addr());
    const b = await signIn(t, email, addr());
    const r = await http(`${t.api}/account/sessions/${b.cookie.slice(-6)}`, { method: "DELETE", headers: a.headers });
    expect(r.status).toBe(204);
    expect((await http(`${t.api}/account`, { headers: b.headers })).status).toBe(401);
    expect((await http(`${t.api}/account`, { headers: a.headers })).status).toBe(200);
    expect((await list(t, a.headers)).json.sessions).toHaveLength(1);
  });

  it("ends the current session too, clearing its cookie", async () => {
    const a = await signIn(t, uniqueEmail(), addr());
    const r = await http(`${t.api}/account/sessions/${a.cookie.slice(-6)}`, { method: "DELETE", headers: a.headers });
    expect(r.status).toBe(204);
    expect(r.headers.getSetCookie().some((c) => /^app_session=;/.test(c))).toBe(true);
    expect((await http(`${t.api}/account`, { headers: a.headers })).status).toBe(401);
  });

  it("answers 404 for another user's session or an unknown id, and leaves it alive", async () => {
    const a = await signIn(t, uniqueEmail(), addr());
    const b = await signIn(t, uniqueEmail(), addr());
    for (const id of [b.cookie.slice(-6), "zzzzzz", "x"]) {
      const r = await http(`${t.api}/account/sessions/${id}`, { method: "DELETE", headers: a.headers });
      expect(r.status).toBe(404);
      expect(r.json).toEqual({ error: "NOT_FOUND" });
    }
    expect((await http(`${t.api}/account`, { headers: b.headers })).status).toBe(200);
  });

  it("slides: a session past half its life is extended and the cookie renewed", async () => {
    const s = await signIn(t, uniqueEmail(), addr());
    const { sessions } = await import("../../../db/schema");
    const { eq } = await import("drizzle-orm");
    const id = s.cookie.split("=")[1];
    const soon = new Date(Date.now() + 10 * 86_400_000);
    await t.app.db.update(sessions).set({ expiresAt: soon }).where(eq(sessions.id, id));
    const r = await http(`${t.api}/account`, { headers: s.headers });
    expect(r.status).toBe(200);
    expect(r.headers.getSetCookie().some((c) => c.startsWith(`app_session=${id}`))).toBe(true);
    const [rec] = (await list(t, s.headers)).json.sessions;
    expect(rec.expires_at).toBeGreaterThan(Date.now() + 29 * 86_400_000);
  });
});
