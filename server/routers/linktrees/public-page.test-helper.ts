import { expect } from "vitest";
import { createTestServer, http, type TestServer, type TestUser } from "../../test/harness";

export const BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";
export const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
export const BOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";

/** A test server with the Remix build, which renders the public page (`npm run build` first), and alice, a pro user. */
export async function pageServer() {
  const t = await createTestServer({}, { remix: true });
  return { t, alice: await t.user({ plan: "pro" }) };
}

/**
 * Shorthands as alice on the file's server (`s()`, once its beforeAll made it): her API, a visit of
 * a page, a new page (slug `<slugPrefix>-…`) and a new item on a page.
 */
export function pageTools(s: () => { t: TestServer; alice: TestUser }, slugPrefix: string) {
  let seq = 0;
  const api = (method: string, path: string, json?: unknown) => http(`${s().t.api}${path}`, { method, json, headers: s().alice.auth });
  /** A visit as a browser sends it (asking for HTML by name), unless `accept` says otherwise. */
  const visit = (slug: string, opts: { ua?: string; method?: string; accept?: string } = {}) =>
    http(`${s().t.redirect}/${slug}`, { method: opts.method ?? "GET", headers: { "user-agent": opts.ua ?? BROWSER, accept: opts.accept ?? BROWSER_ACCEPT } });
  async function tree(json: Record<string, unknown> = {}) {
    const r = await api("POST", "/linktrees", { slug: `${slugPrefix}-${Date.now().toString(36)}-${seq++}`, title: "Ana", ...json });
    expect(r.status).toBe(201);
    return r.json as { id: string; slug: string };
  }
  async function item(id: string, json: Record<string, unknown>) {
    const r = await api("POST", `/linktrees/${id}/items`, { url: "https://example.com/", ...json });
    expect(r.status).toBe(201);
    return r.json as { id: string; short_url: string };
  }
  return { api, visit, tree, item };
}
