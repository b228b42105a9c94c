// The redirect host's errors are the service's errors: every 404 is {"error":"NOT_FOUND"}, a wrong
// method on a known path 405 METHOD_NOT_ALLOWED, a body too large 413 PAYLOAD_TOO_LARGE; a browser,
// which asks for HTML by name, gets a readable page with the same status instead.
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { links } from "../../db/schema";
import { pageServer } from "../routers/linktrees/public-page.test-helper";
import { http, type TestServer, type TestUser } from "../test/harness";
import { PEOPLE } from "./ua-fixtures";

let t: TestServer;
let alice: TestUser;

beforeAll(async () => void ({ t, alice } = await pageServer()));
afterAll(() => t?.close());

const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";
const api = async (method: string, path: string, json?: unknown) => http(`${t.api}${path}`, { method, json, headers: alice.auth });
const at = (path: string, headers: Record<string, string> = {}, method = "GET") =>
  http(`${t.redirect}${path}`, { method, headers: { "user-agent": PEOPLE.windowsChrome, ...headers } });

const expectJsonError = (r: Awaited<ReturnType<typeof http>>, status: number, body: unknown) => {
  expect(r.status).toBe(status);
  expect(r.headers.get("content-type")).toMatch(/^application\/json/);
  expect(r.json).toEqual(body);
};

describe('redirect host: every 404 is {"error":"NOT_FOUND"}', () => {
  it("an unknown slug, a path that is no slug, and /", async () => {
    for (const path of ["/no-such-slug-here", "/not/a/slug", "/", "/_/nothing"]) expectJsonError(await at(path), 404, { error: "NOT_FOUND" });
  });

  it("an expired link without expiration_url (still counted)", async () => {
    const l = (await api("POST", "/links", { url: "https://dest.example/", expires_at: Date.now() + 60_000 })).json;
    await t.app.db
      .update(links)
      .set({ expiresAt: Date.now() - 1 })
      .where(eq(links.id, l.id));
    await t.app.invalidateSlugs([l.slug]);
    expectJsonError(await at(`/${l.slug}`), 404, { error: "NOT_FOUND" });
    await t.app.clicks!.flush();
    expect((await api("GET", `/links/${l.id}/analytics`)).json.clicks.map((c: { rule: string }) => c.rule)).toEqual(["expired_404"]);
  });

  it("an unpublished linktree's page", async () => {
    const tree = (await api("POST", "/linktrees", { slug: `tree-${Date.now().toString(36)}`, title: "Tree" })).json;
    expectJsonError(await at(`/${tree.slug}`), 404, { error: "NOT_FOUND" });
    const page = await at(`/${tree.slug}`, { accept: BROWSER_ACCEPT });
    expect(page.status).toBe(404);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
  });

  it("the share-card image of no link", async () => {
    expectJsonError(await at("/_/og/zzzzzzzz.png"), 404, { error: "NOT_FOUND" });
  });

  it("HEAD answers the same status without a body", async () => {
    const r = await at("/no-such-slug-here", {}, "HEAD");
    expect(r.status).toBe(404);
    expect(r.text).toBe("");
  });
});

describe("redirect host: a browser gets a page", () => {
  it("an unknown slug is an HTML page with status 404 for a request that asks for text/html", async () => {
    const r = await at("/no-such-slug-here", { accept: BROWSER_ACCEPT });
    expect(r.status).toBe(404);
    expect(r.headers.get("content-type")).toMatch(/^text\/html/);
    expect(r.text).toContain("Link not found");
  });

  it("text/html refused with q=0 is no request for HTML", async () => {
    expectJsonError(await at("/no-such-slug-here", { accept: "text/html;q=0, application/json" }), 404, { error: "NOT_FOUND" });
  });
});

describe("redirect host: wrong methods and bodies", () => {
  it("a wrong method on /{slug} answers 405 METHOD_NOT_ALLOWED with Allow, and counts nothing", async () => {
    const l = (await api("POST", "/links", { url: "https://dest.example/" })).json;
    for (const method of ["PUT", "PATCH", "DELETE"]) {
      const r = await at(`/${l.slug}`, {}, method);
      expectJsonError(r, 405, { error: "METHOD_NOT_ALLOWED" });
      expect(r.headers.get("allow")).toBe("GET, HEAD, POST");
    }
    await t.app.clicks!.flush();
    expect((await api("GET", `/links/${l.id}/analytics`)).json.count).toBe(0);
  });

  it("a wrong method on the service's own paths answers 405", async () => {
    for (const path of ["/_/health", "/_/tls/ask"]) {
      const r = await at(path, {}, "POST");
      expectJsonError(r, 405, { error: "METHOD_NOT_ALLOWED" });
      expect(r.headers.get("allow")).toBe("GET, HEAD");
    }
  });

  it("a password form over its size answers 413 PAYLOAD_TOO_LARGE", async () => {
    const l = (await api("POST", "/links", { url: "https://dest.example/", password: "right-one" })).json;
    const r = await http(`${t.redirect}/${l.slug}`, {
      method: "POST",
      body: `password=${"x".repeat(20_000)}`,
      headers: { "content-type": "application/x-www-form-urlencoded", "user-agent": PEOPLE.windowsChrome },
    });
    expectJsonError(r, 413, { error: "PAYLOAD_TOO_LARGE" });
  });
});
