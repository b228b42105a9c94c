import { randomInt } from "node:crypto";
import { eq, inArray } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiTokens, clicks, emailCodes, links, linktreeItems, linktrees, sessions, users, workspaces } from "../../../db/schema";
import { newId } from "../../lib/ids";
import { createTestServer, http, type TestServer } from "../../test/harness";
import { insertLink } from "../links/links.service";
import { latestCode, outbox, signIn, uniqueEmail } from "../auth/sign-in.test-helper";

let t: TestServer;
const fromAddress = () => ({ "x-forwarded-for": `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}` });
const newSession = (email = uniqueEmail()) => signIn(t, email, fromAddress());

beforeAll(async () => {
  t = await createTestServer({ TRUST_PROXY: "true" });
});
afterAll(() => t?.close());

/** Every session-only path (sign-in, tokens, sessions, account; and the reviewers' paths), with a body that would pass validation. */
const ADMIN_PATHS: [string, string, unknown?][] = [
  ["POST", "/auth/logout"],
  ["GET", "/account/tokens"],
  ["POST", "/account/tokens", { name: "x" }],
  ["DELETE", "/account/tokens/abc"],
  ["GET", "/account/sessions"],
  ["DELETE", "/account/sessions/abcdef"],
  ["POST", "/account/email", { email: "new@example.com" }],
  ["POST", "/account/email/verify", { code: "123456" }],
  ["PATCH", "/account", { name: "N" }],
  ["DELETE", "/account"],
  ["GET", "/admin/reports"],
  ["POST", "/admin/reports/abc/dismiss"],
  ["POST", "/admin/reports/abc/delete-link"],
];
const WRITE_PATHS = ADMIN_PATHS.filter(([m]) => m !== "GET");

describe("GET /account (public API)", () => {
  it("answers the Account to an API token", async () => {
    const u = await t.user({ name: "Ana" });
    const r = await http(`${t.api}/account`, { headers: u.auth });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      user: { id: u.id, email: u.email, name: "Ana", avatar_url: null, created_at: expect.any(Number) },
      workspace: { id: u.workspaceId, name: "Ana's workspace" },
    });
    expect(r.headers.get("ratelimit-limit")).toBe("100");
  });

  it("answers the Account to a session", async () => {
    const email = uniqueEmail();
    const s = await newSession(email);
    const r = await http(`${t.api}/account`, { headers: s.headers });
    expect(r.status).toBe(200);
    expect(r.json.user.email).toBe(email);
  });

  it.each([[{}], [{ authorization: "tok_notbearer" }], [{ authorization: "Bearer tok_" + "x".repeat(32) }], [{ cookie: "app_session=nonsense" }]])(
    "answers 401 UNAUTHORIZED to %j",
    async (headers) => {
      const r = await http(`${t.api}/account`, { headers });
      expect(r.status).toBe(401);
      expect(r.json).toEqual({ error: "UNAUTHORIZED" });
    },
  );

  it("is in /openapi.json with tag account, while the administration paths are not", async () => {
    const doc = (await http(`${t.api}/openapi.json`)).json;
    expect(doc.paths["/account"].get.tags).toEqual(["account"]);
    expect(Object.keys(doc.paths["/account"])).toEqual(["get"]);
    expect(doc.paths["/reports"].post).toBeDefined();
    for (const p of Object.keys(doc.paths)) expect(p).not.toMatch(/^\/(auth|account\/|admin)/);
  });
});

describe("account administration needs a real sign-in", () => {
  it.each(ADMIN_PATHS)("%s %s answers 403 SESSION_REQUIRED to an API token", async (method, path, json) => {
    const u = await t.user();
    const r = await http(`${t.api}${path}`, { method, json, headers: u.auth });
    expect(r.status).toBe(403);
    expect(r.json).toEqual({ error: "SESSION_REQUIRED" });
  });

  it.each(ADMIN_PATHS)("%s %s answers 401 UNAUTHORIZED without a credential", async (method, path, json) => {
    const r = await http(`${t.api}${path}`, { method, json });
    expect(r.status).toBe(401);
    expect(r.json).toEqual({ error: "UNAUTHORIZED" });
  });

  it.each(WRITE_PATHS)("%s %s ignores the cookie of a request from another site (401)", async (method, path, json) => {
    const s = await newSession();
    const r = await http(`${t.api}${path}`, { method, json, headers: { ...s.headers, origin: "https://evil.example" } });
    expect(r.status).toBe(401);
    const r2 = await http(`${t.api}${path}`, { method, json, headers: { ...s.headers, "sec-fetch-site": "cross-site" } });
    expect(r2.status).toBe(401);
    expect((await http(`${t.api}/account`, { headers: s.headers })).status).toBe(200); // nothing happened to the account
  });

  it("accepts the cookie of a same-origin write", async () => {
    const s = await newSession();
    const r = await http(`${t.api}/account`, { method: "PATCH", json: { name: "Same" }, headers: { ...s.headers, origin: t.appUrl } });
    expect(r.status).toBe(200);
  });

  it("sends no Access-Control-Allow-Origin on answers to cookie-carrying requests", async () => {
    const s = await newSession();
    for (const [method, path] of [
      ["GET", "/account"],
      ["GET", "/account/tokens"],
      ["GET", "/account/sessions"],
      ["OPTIONS", "/account"],
    ]) {
      const r = await http(`${t.api}${path}`, { method, headers: { ...s.headers, origin: "https://evil.example" } });
      expect(r.headers.get("access-control-allow-origin")).toBeNull();
      expect(r.headers.get("access-control-allow-credentials")).toBeNull();
    }
  });

  it("answers 403 FORBIDDEN to the reviewers' paths for a signed-in user who is not an admin", async () => {
    const s = await newSession();
    for (const [method, path] of ADMIN_PATHS.filter(([, p]) => p.startsWith("/admin"))) {
      const r = await http(`${t.api}${path}`, { method, headers: s.headers });
      expect(r.status).toBe(403);
      expect(r.json).toEqual({ error: "FORBIDDEN" });
    }
  });
});

describe("PATCH /account", () => {
  it("renames the user and answers the Account", async () => {
    const s = await newSession();
    const r = await http(`${t.api}/account`, { method: "PATCH", json: { name: "  Bea  " }, headers: s.headers });
    expect(r.status).toBe(200);
    expect(r.json.user.name).toBe("Bea");
    expect((await http(`${t.api}/account`, { method: "PATCH", json: { name: null }, headers: s.headers })).json.user.name).toBeNull();
  });

  it.each([
    [{ name: "x".repeat(101) }, "name"],
    [{}, "name"],
    [{ name: 5 }, "name"],
    [{ name: "x", email: "a@b.c" }, "email"],
  ])("answers 400 VALIDATION_FAILED to %j", async (json, field) => {
    const s = await newSession();
    const r = await http(`${t.api}/account`, { method: "PATCH", json, headers: s.headers });
    expect(r.status).toBe(400);
    expect(r.json.error).toBe("VALIDATION_FAILED");
    expect(r.json.fields[field]).toBeDefined();
  });
});

describe("account.setAvatar", () => {
  it("sets and clears the avatar_url for a session, and refuses a token", async () => {
    const s = await newSession();
    const caller = t.caller(s.headers);
    expect((await caller.account.setAvatar({ avatar_url: "https://cdn.example/a.png" })).user.avatar_url).toBe("https://cdn.example/a.png");
    expect((await http(`${t.api}/account`, { headers: s.headers })).json.user.avatar_url).toBe("https://cdn.example/a.png");
    expect((await caller.account.setAvatar({ avatar_url: null })).user.avatar_url).toBeNull();
    await expect(caller.account.setAvatar({ avatar_url: "javascript:alert(1)" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    const u = await t.user();
    await expect(t.caller(u.auth).account.setAvatar({ avatar_url: null })).rejects.toMatchObject({ publicCode: "SESSION_REQUIRED" });
  });
});

describe("e-mail change", () => {
  it("mails a code to the new address (202) and applies it on verify", async () => {
    const oldEmail = uniqueEmail();
    const s = await newSession(oldEmail);
    const newEmail = uniqueEmail("new");
    const r = await http(`${t.api}/account/email`, { method: "POST", json: { email: newEmail }, headers: s.headers });
    expect(r.status).toBe(202);
    expect(r.text).toBe("");
    expect(outbox(t, newEmail)).toHaveLength(1);
    expect((await http(`${t.api}/account`, { headers: s.headers })).json.user.email).toBe(oldEmail); // not yet
    const v = await http(`${t.api}/account/email/verify`, { method: "POST", json: { code: latestCode(t, newEmail) }, headers: s.headers });
    expect(v.status).toBe(200);
    expect(v.json.user.email).toBe(newEmail);
    expect(v.json.user.id).toBe(s.account.user.id);
    // The new address now signs in to this account.
    expect((await newSession(newEmail)).account.user.id).toBe(s.account.user.id);
  });

  it("accepts the code with surrounding spaces, as pasted from the e-mail", async () => {
    const s = await newSession();
    const newEmail = uniqueEmail("new");
    await http(`${t.api}/account/email`, { method: "POST", json: { email: newEmail }, headers: s.headers });
    const v = await http(`${t.api}/account/email/verify`, { method: "POST", json: { code: ` ${latestCode(t, newEmail)} ` }, headers: s.headers });
    expect(v.status).toBe(200);
    expect(v.json.user.email).toBe(newEmail);
  });

  it("refuses a wrong code with 400 INVALID_CODE and a sign-in code for the new address", async () => {
    const s = await newSession();
    const newEmail = uniqueEmail("new");
    await http(`${t.api}/account/email`, { method: "POST", json: { email: newEmail }, headers: s.headers });
    const code = latestCode(t, newEmail);
    const wrong = await http(`${t.api}/account/email/verify`, { method: "POST", json: { code: code === "000000" ? "000001" : "000000" }, headers: s.headers });
    expect(wrong.status).toBe(400);
    expect(wrong.json).toEqual({ error: "INVALID_CODE", fields: { code: expect.any(Array) } });
    // A code for the same address from the sign-in flow is not an e-mail change code.
    const other = await newSession();
    const stolen = await http(`${t.api}/account/email/verify`, { method: "POST", json: { code }, headers: other.headers });
    expect(stolen.json.error).toBe("INVALID_CODE");
  });

  it("answers 409 EMAIL_IN_USE when the new address belongs to another user", async () => {
    const taken = uniqueEmail();
    await newSession(taken);
    const s = await newSession();
    expect((await http(`${t.api}/account/email`, { method: "POST", json: { email: taken }, headers: s.headers })).status).toBe(202);
    const r = await http(`${t.api}/account/email/verify`, { method: "POST", json: { code: latestCode(t, taken) }, headers: s.headers });
    expect(r.status).toBe(409);
    expect(r.json).toEqual({ error: "EMAIL_IN_USE" });
    expect((await http(`${t.api}/account`, { headers: s.headers })).json.user.email).toBe(s.account.user.email);
  });

  it("validates the new address", async () => {
    const s = await newSession();
    const r = await http(`${t.api}/account/email`, { method: "POST", json: { email: "nope" }, headers: s.headers });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ error: "VALIDATION_FAILED", fields: { email: expect.any(Array) } });
  });
});

describe("DELETE /account", () => {
  it("removes user, workspace, tokens, sessions, codes and links in one go, frees slugs, keeps click events", async () => {
    const email = uniqueEmail();
    const s = await newSession(email);
    const { workspace, user } = s.account;
    // A token, links, a linktree with an item, and clicks.
    const tok = await http(`${t.api}/account/tokens`, { method: "POST", json: { name: "ci" }, headers: s.headers });
    expect(tok.status).toBe(201);
    const slug = `del-${newId()}`;
    const link = await http(`${t.api}/links`, {
      method: "POST",
      json: { url: "https://example.com/", slug },
      headers: { authorization: `Bearer ${tok.json.token}` },
    });
    expect(link.status).toBe(201);
    const page = await insertLink(t.app.db, { workspaceId: workspace.id, url: "https://example.com/page", kind: "linktree", slug: `tree-${newId()}` });
    const item = await insertLink(t.app.db, { workspaceId: workspace.id, url: "https://example.com/item", kind: "linktree_item" });
    const treeId = newId();
    await t.app.db.insert(linktrees).values({ id: treeId, workspaceId: workspace.id, linkId: page.id, title: "T", createdAt: 1, updatedAt: 1 });
    await t.app.db.insert(linktreeItems).values({ id: newId(), linktreeId: treeId, linkId: item.id, title: "I", position: 0, createdAt: 1, updatedAt: 1 });
    await t.app.db
      .insert(clicks)
      .values({ linkId: link.json.id, ts: `${Date.now()}#abc`, workspaceId: workspace.id, timestamp: Date.now(), device: "desktop", rule: "url" });
    await http(`${t.api}/account/email`, { method: "POST", json: { email: uniqueEmail("pending") }, headers: s.headers });
    const second = await newSession(email); // another session of the same user

    const r = await http(`${t.api}/account`, { method: "DELETE", headers: s.headers });
    expect(r.status).toBe(204);
    expect(r.text).toBe("");
    expect(r.headers.getSetCookie().some((c) => /^app_session=;/.test(c))).toBe(true);

    const db = t.app.db;
    expect(await db.select().from(users).where(eq(users.id, user.id))).toHaveLength(0);
    expect(await db.select().from(workspaces).where(eq(workspaces.id, workspace.id))).toHaveLength(0);
    expect(await db.select().from(apiTokens).where(eq(apiTokens.userId, user.id))).toHaveLength(0);
    expect(await db.select().from(sessions).where(eq(sessions.userId, user.id))).toHaveLength(0);
    expect(await db.select().from(emailCodes).where(eq(emailCodes.userId, user.id))).toHaveLength(0);
    expect(await db.select().from(emailCodes).where(eq(emailCodes.email, email))).toHaveLength(0);
    expect(await db.select().from(links).where(eq(links.workspaceId, workspace.id))).toHaveLength(0);
    expect(await db.select().from(linktrees).where(eq(linktrees.id, treeId))).toHaveLength(0);
    expect(
      await db
        .select()
        .from(links)
        .where(inArray(links.id, [page.id, item.id])),
    ).toHaveLength(0);
    expect(await db.select().from(clicks).where(eq(clicks.linkId, link.json.id))).toHaveLength(1);

    // Credentials stop working; the slug is free for anyone.
    expect((await http(`${t.api}/account`, { headers: { authorization: `Bearer ${tok.json.token}` } })).status).toBe(401);
    expect((await http(`${t.api}/account`, { headers: second.headers })).status).toBe(401);
    const other = await t.user();
    expect((await http(`${t.api}/links`, { method: "POST", json: { url: "https://example.org/", slug }, headers: other.auth })).status).toBe(201);
    expect((await http(`${t.redirect}/${slug}`)).headers.get("location")).toBe("https://example.org/");
    // Signing in again with the address makes a new account.
    const again = await newSession(email);
    expect(again.account.user.id).not.toBe(user.id);
  });

  it("leaves other accounts untouched", async () => {
    const keep = await t.user();
    const keepLink = await http(`${t.api}/links`, { method: "POST", json: { url: "https://example.com/keep" }, headers: keep.auth });
    const s = await newSession();
    expect((await http(`${t.api}/account`, { method: "DELETE", headers: s.headers })).status).toBe(204);
    expect((await http(`${t.api}/links/${keepLink.json.id}`, { headers: keep.auth })).status).toBe(200);
    expect((await http(`${t.api}/account`, { headers: keep.auth })).status).toBe(200);
  });
});
