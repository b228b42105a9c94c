import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditEvents } from "../../db/schema";
import { createTestServer, http, type TestServer } from "../test/harness";
import { runCli } from "./cli.test-helper";
import { ADMIN_FILE, ADMIN_PATH, ADMIN_SECRET_HEADER, readAdminEndpointInfo } from "./endpoint";

/** Runs the command line with the server's environment. */
const cli = (args: string[], env: Record<string, string | undefined>) => runCli<any>(args, env, { timeoutMs: 60_000 });

let t: TestServer;
let env: Record<string, string | undefined>;
const unique = () => `cli${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}@example.com`;

beforeAll(async () => {
  t = await createTestServer();
  // The server's own variables: on PostgreSQL the test database, on PGlite its data directory
  // (whose database the running server holds, here in memory, so only the admin endpoint reaches it).
  env = { APP_URL: t.appUrl, REDIRECT_URL: t.redirect, DATA_DIR: t.app.config.dataDir, DATABASE_URL: t.app.database.url };
});
afterAll(() => t?.close());

describe(`npm run cli while the server runs (${process.env.DATABASE_URL ? "PostgreSQL" : "PGlite"})`, () => {
  it("user:create makes a user with plan and admin flag and prints it as JSON", async () => {
    const email = unique();
    const r = await cli(["user:create", "--email", email, "--name", "Op", "--plan", "pro", "--admin"], env);
    expect(r.code).toBe(0);
    expect(r.json).toEqual({
      user: { id: expect.any(String), email, name: "Op", avatar_url: null, created_at: expect.any(Number), plan: "pro", is_admin: true },
      workspace: { id: expect.any(String), name: "Op's workspace" },
    });
  });

  it("token:create prints a working token and its record", async () => {
    const email = unique();
    expect((await cli(["user:create", "--email", email], env)).code).toBe(0);
    const r = await cli(["token:create", "--email", email, "--name", "deploy"], env);
    expect(r.code).toBe(0);
    expect(r.json).toEqual({
      token: expect.stringMatching(/^tok_[0-9A-Za-z]{32}$/),
      record: expect.objectContaining({ name: "deploy", prefix: r.json.token.slice(0, 8), revoked_at: null }),
    });
    const account = await http(`${t.api}/account`, { headers: { authorization: `Bearer ${r.json.token}` } });
    expect(account.status).toBe(200);
    expect(account.json.user.email).toBe(email);
    // Free plan: a second live token is refused with the API's code, and a sentence a person can act on.
    const again = await cli(["token:create", "--email", email], env);
    expect(again.code).toBe(1);
    expect(again.json.error).toBe("TOKEN_LIMIT_REACHED");
    expect(again.json.message).toMatch(/one live token.*Revoke/);
  }, 60_000);

  it("token:create and token:revoke are in the workspace's audit log as the token's owner's doing", async () => {
    const email = unique();
    const user = (await cli(["user:create", "--email", email], env)).json;
    const made = await cli(["token:create", "--email", email, "--name", "logged"], env);
    expect(made.code).toBe(0);
    const id = made.json.record.id;
    expect((await cli(["token:revoke", "--id", id], env)).code).toBe(0);
    expect((await cli(["token:revoke", "--id", id], env)).code).toBe(0); // again: nothing more to log
    const events = await t.app.db
      .select({ action: auditEvents.action, actor: auditEvents.actorUserId, workspace: auditEvents.workspaceId, changes: auditEvents.changes })
      .from(auditEvents)
      .where(eq(auditEvents.targetId, id))
      .orderBy(asc(auditEvents.at));
    expect(events).toEqual([
      { action: "token.created", actor: user.user.id, workspace: user.workspace.id, changes: ["name"] },
      { action: "token.deleted", actor: user.user.id, workspace: user.workspace.id, changes: [] },
    ]);
  }, 60_000);

  it("token:create --scopes makes a token limited to those scopes; absent, the token has every scope", async () => {
    const email = unique();
    expect((await cli(["user:create", "--email", email, "--plan", "pro"], env)).code).toBe(0);
    const r = await cli(["token:create", "--email", email, "--scopes", "links:read, analytics:read,links:read"], env);
    expect(r.code).toBe(0);
    expect(r.json.record.scopes).toEqual(["links:read", "analytics:read"]);
    const auth = { authorization: `Bearer ${r.json.token}` };
    expect((await http(`${t.api}/links`, { headers: auth })).status).toBe(200);
    const write = await http(`${t.api}/links`, { method: "POST", json: { url: "https://example.com/scoped" }, headers: auth });
    expect([write.status, write.json.error]).toEqual([403, "INSUFFICIENT_SCOPE"]);
    const all = await cli(["token:create", "--email", email], env);
    expect(all.json.record.scopes).toEqual([
      "links:read",
      "links:write",
      "analytics:read",
      "linktrees:read",
      "linktrees:write",
      "domains:read",
      "domains:write",
      "webhooks:read",
      "webhooks:write",
    ]);
  }, 60_000);

  it("token:create refuses an unknown scope as a usage error and makes no token", async () => {
    const email = unique();
    expect((await cli(["user:create", "--email", email], env)).code).toBe(0);
    const bad = await cli(["token:create", "--email", email, "--scopes", "links:read,links:delete"], env);
    expect([bad.code, bad.json.error]).toEqual([2, "USAGE"]);
    expect(bad.json.message).toContain('"links:delete"');
    // Free plan: the one live token is still free, so nothing was made.
    expect((await cli(["token:create", "--email", email], env)).code).toBe(0);
  }, 60_000);

  it("reports:list prints the stored reports", async () => {
    const u = await t.user();
    const link = await http(`${t.api}/links`, { method: "POST", json: { url: "https://example.com/bad" }, headers: u.auth });
    await http(`${t.api}/reports`, { method: "POST", json: { url: link.json.short_url, reason: "phishing", detail: "from cli test" } });
    const r = await cli(["reports:list"], env);
    expect(r.code).toBe(0);
    expect(r.json.reports.find((x: { link_id: string }) => x.link_id === link.json.id)).toMatchObject({
      reason: "phishing",
      detail: "from cli test",
      status: "open",
    });
  });

  it("fails with a JSON error and a non-zero exit for bad usage, an unknown user or a taken e-mail", async () => {
    const usage = await cli(["nope"], env);
    expect(usage.code).toBe(2);
    expect(usage.json.error).toBe("USAGE");
    expect((await cli(["user:create", "--email", "not-mail"], env)).json.error).toBe("USAGE");
    expect((await cli(["user:create", "--email", unique(), "--plan", "gold"], env)).json.error).toBe("USAGE");
    const missing = await cli(["token:create", "--email", unique()], env);
    expect([missing.code, missing.json.error]).toEqual([1, "NOT_FOUND"]);
    const email = unique();
    await cli(["user:create", "--email", email], env);
    expect((await cli(["user:create", "--email", email], env)).json.error).toBe("EMAIL_IN_USE");
  }, 60_000);
});

describe("the admin endpoint", () => {
  it("is announced in DATA_DIR with the app port and a secret, readable by the owner only", async () => {
    const info = readAdminEndpointInfo(t.app.config.dataDir)!;
    expect(info).toMatchObject({ pid: process.pid, port: Number(new URL(t.appUrl).port), secret: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const { statSync } = await import("node:fs");
    expect(statSync(path.join(t.app.config.dataDir, ADMIN_FILE)).mode & 0o077).toBe(0);
  });

  it("answers 404 without the secret, with a wrong one, through a proxy, or to GET", async () => {
    const info = readAdminEndpointInfo(t.app.config.dataDir)!;
    const url = `${t.appUrl}${ADMIN_PATH}`;
    const json = { args: ["reports:list"] };
    expect((await http(url, { method: "POST", json })).status).toBe(404);
    expect((await http(url, { method: "POST", json, headers: { [ADMIN_SECRET_HEADER]: "0".repeat(64) } })).status).toBe(404);
    expect((await http(url, { method: "POST", json, headers: { [ADMIN_SECRET_HEADER]: info.secret, "x-forwarded-for": "203.0.113.9" } })).status).toBe(404);
    expect((await http(url, { headers: { [ADMIN_SECRET_HEADER]: info.secret } })).status).toBe(404);
    const ok = await http(url, { method: "POST", json, headers: { [ADMIN_SECRET_HEADER]: info.secret } });
    expect(ok.status).toBe(200);
    expect(Array.isArray(ok.json.output.reports)).toBe(true);
  });
});

describe.skipIf(!!process.env.DATABASE_URL)("npm run cli with no server running (PGlite)", () => {
  it("opens the data directory itself, also past a stale announcement of a stopped server", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "linkshort-cli-"));
    writeFileSync(path.join(dataDir, ADMIN_FILE), JSON.stringify({ pid: 2 ** 22 + 12345, port: 1, host: "x", secret: "y" }));
    const local = { DATA_DIR: dataDir };
    const email = unique();
    const created = await cli(["user:create", "--email", email, "--admin"], local);
    expect(created.code).toBe(0);
    expect(created.json.user.is_admin).toBe(true);
    const tok = await cli(["token:create", "--email", email], local);
    expect(tok.code).toBe(0);
    expect(tok.json.token).toMatch(/^tok_/);
  }, 120_000);
});
