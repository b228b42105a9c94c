import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { apiTokens } from "../../db/schema";
import { createTestServer, http, type TestServer } from "../test/harness";

// Every id the API shows is 8 characters of [0-9a-z]: links, users, workspaces, tokens, linktrees and
// their items, domains, webhooks (import jobs: server/routers/imports/cli-import.test.ts).
const ID = /^[0-9a-z]{8}$/;

let t: TestServer;
beforeAll(async () => {
  t = await createTestServer({ WEBHOOK_ALLOW_PRIVATE: "true" });
});
afterAll(() => t?.close());

describe("ids the API shows", () => {
  it("are 8 characters of [0-9a-z] for every kind of record", async () => {
    const u = await t.user({ plan: "pro" });
    const call = async (method: string, path: string, json?: unknown) => {
      const r = await http(`${t.api}${path}`, { method, json, headers: u.auth });
      expect(r.status, `${method} ${path}: ${r.text}`).toBeLessThan(300);
      return r.json;
    };
    const account = await call("GET", "/account");
    // Token records are listed to sessions only: the one the test user was given, as stored.
    const [token] = await t.app.db.select({ id: apiTokens.id }).from(apiTokens).where(eq(apiTokens.userId, u.id));
    const link = await call("POST", "/links", { url: "https://example.com/ids" });
    const tree = await call("POST", "/linktrees", { slug: `ids-${Date.now().toString(36)}`, title: "Ids" });
    const item = await call("POST", `/linktrees/${tree.id}/items`, { title: "One", url: "https://example.com/one" });
    const domain = await call("POST", "/domains", { name: `ids-${Date.now().toString(36)}.example.com` });
    const hook = await call("POST", "/webhooks", { url: "https://example.com/hook", events: ["link.created"] });
    const ids = {
      user: account.user.id,
      workspace: account.workspace.id,
      token: token.id,
      link: link.id,
      linktree: tree.id,
      item: item.id,
      domain: domain.id,
      webhook: hook.id,
    };
    for (const [kind, id] of Object.entries(ids)) expect(id, kind).toMatch(ID);
  });
});
