import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signedInDashboard } from "../test/dashboard-session";
import { http, type TestServer } from "../test/harness";

// Needs the Remix build (`npm run build`): the pages are Remix routes.
describe.skipIf(!existsSync("build/index.js"))("the dashboard's error pages", () => {
  let t: TestServer;
  let cookie: string;
  beforeAll(async () => void ({ t, cookie } = await signedInDashboard()));
  afterAll(() => t?.close());

  it("a page refusing its filters keeps the signed-in menu and the footer, so the way back is there", async () => {
    const r = await http(`${t.appUrl}/links?status=bogus`, { headers: { cookie } });
    expect(r.status).toBe(400);
    expect(r.text).toMatch(/<nav aria-label="Main"[^>]*>[\s\S]*href="\/links"/);
    expect(r.text).toContain('aria-label="Footer"');
  });

  it("an unknown page keeps a menu and the footer", async () => {
    const r = await http(`${t.appUrl}/no-such-page`, { headers: { cookie, accept: "text/html,*/*;q=0.8" } });
    expect(r.status).toBe(404);
    expect(r.text).toContain('<nav aria-label="Main"');
    expect(r.text).toContain('aria-label="Footer"');
  });

  it("an unknown page is the service's 404 body for a client that does not ask for HTML", async () => {
    for (const accept of ["*/*", "application/json"]) {
      const r = await http(`${t.appUrl}/no-such-page`, { headers: { cookie, accept } });
      expect(r.status, accept).toBe(404);
      expect(r.json, accept).toEqual({ error: "NOT_FOUND" });
    }
  });
});
