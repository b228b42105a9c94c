import nodeHttp from "node:http";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiTokens, clicks, domains, importJobs, links, linktrees, memberships, sessions, users, workspaceInvites, workspaces } from "../../../db/schema";
import { sha256 } from "../../lib/crypto";
import { newId } from "../../lib/ids";
import { restOperations } from "../../http/openapi";
import { createTestServer, http, pollUntil, type TestServer } from "../../test/harness";
import { caller, invitationToken, mailsTo, person, type Person } from "./teams.test-helper";
import { INVITE_TTL_MS } from "./workspaces.service";

let t: TestServer;
let call: ReturnType<typeof caller>;
beforeAll(async () => {
  t = await createTestServer();
  call = caller(() => t.api);
});
afterAll(() => t?.close());

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const uniq = () => newId().slice(0, 8);

/** Status of a GET to the redirect host with this Host header (fetch cannot set Host). */
function visitHost(host: string, path: string): Promise<number> {
  const u = new URL(t.redirect);
  return new Promise((resolve, reject) => {
    const req = nodeHttp.request({ host: u.hostname, port: u.port, path, headers: { host } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode!));
    });
    req.on("error", reject);
    req.end();
  });
}

/** A shared workspace owned by `owner`. */
async function team(owner: Person, name = `Team ${uniq()}`): Promise<string> {
  const r = await call("POST", "/workspaces", owner.cookie, { name });
  expect(r.status).toBe(201);
  return r.json.id;
}

/** `who` joins `ws` through a mailed invitation, as `role`. */
async function join(owner: Person, ws: string, who: Person, role: "owner" | "member" = "member") {
  const inv = await call("POST", `/workspaces/${ws}/invites`, owner.cookie, { email: who.email, role });
  expect(inv.status).toBe(201);
  const acc = await call("POST", "/invites/accept", who.cookie, { token: invitationToken(t.app, who.email) });
  expect(acc.status).toBe(200);
}

/** A token of `who` bound to `ws` (made while the session is in `ws`). */
async function tokenIn(who: Person, ws: string): Promise<string> {
  expect((await call("POST", `/workspaces/${ws}/switch`, who.cookie)).status).toBe(200);
  const r = await call("POST", "/account/tokens", who.cookie, { name: `in-${ws}` });
  expect(r.status).toBe(201);
  return r.json.token;
}

describe("workspaces", () => {
  it("GET /workspaces lists the personal workspace first, then shared ones by name, with role, current and member count", async () => {
    const a = await person(t);
    const b = await person(t);
    const zed = await team(b, "zed team");
    const alpha = await team(a, "Alpha");
    const beta = await team(a, "beta");
    await join(b, zed, a);
    const r = await call("GET", "/workspaces", a.cookie);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      workspaces: [
        { id: a.workspaceId, name: null, role: "owner", personal: true, current: true, members: 1 },
        { id: alpha, name: "Alpha", role: "owner", personal: false, current: false, members: 1 },
        { id: beta, name: "beta", role: "owner", personal: false, current: false, members: 1 },
        { id: zed, name: "zed team", role: "member", personal: false, current: false, members: 2 },
      ],
    });
  });

  it("POST /workspaces creates a shared workspace with the caller as its owner (201, not current, 1 member)", async () => {
    const a = await person(t);
    const r = await call("POST", "/workspaces", a.cookie, { name: "  Marketing  " });
    expect(r.status).toBe(201);
    expect(r.json).toEqual({ id: expect.stringMatching(/^[0-9a-z]{8}$/), name: "Marketing", role: "owner", personal: false, current: false, members: 1 });
    expect((await call("GET", "/account", a.cookie)).json.workspace.id).toBe(a.workspaceId); // still in the personal one
  });

  it.each([[{}], [{ name: "" }], [{ name: "   " }], [{ name: "x".repeat(101) }], [{ name: 5 }], [{ name: "ok", extra: 1 }]])(
    "POST /workspaces answers 400 VALIDATION_FAILED with fields to %j",
    async (json) => {
      const a = await person(t);
      const r = await call("POST", "/workspaces", a.cookie, json);
      expect(r.status).toBe(400);
      expect(r.json.error).toBe("VALIDATION_FAILED");
      expect(Object.keys(r.json.fields)).toEqual(["extra" in json ? "extra" : "name"]);
    },
  );

  it("POST /workspaces/{id}/switch answers the Account in that workspace, for this session only", async () => {
    const a = await person(t);
    const ws = await team(a, "Switched");
    const other = await t.app.lucia.createSession(a.id, { createdAt: Date.now() });
    const r = await call("POST", `/workspaces/${ws}/switch`, a.cookie);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ user: expect.objectContaining({ id: a.id, email: a.email }), workspace: { id: ws, name: "Switched" } });
    expect((await call("GET", "/account", a.cookie)).json.workspace).toEqual({ id: ws, name: "Switched" });
    expect((await call("GET", "/account", { cookie: `app_session=${other.id}` })).json.workspace.id).toBe(a.workspaceId);
    expect((await call("GET", "/workspaces", a.cookie)).json.workspaces.find((w: { current: boolean }) => w.current).id).toBe(ws);
    const extra = await call("POST", `/workspaces/${ws}/switch`, a.cookie, { workspace: "x" });
    expect(extra.status).toBe(400);
    expect(extra.json).toEqual({ error: "VALIDATION_FAILED", fields: { workspace: expect.any(Array) } });
    // Back to the personal workspace.
    expect((await call("POST", `/workspaces/${a.workspaceId}/switch`, a.cookie)).json.workspace.id).toBe(a.workspaceId);
    const [row] = await t.app.db.select({ ws: sessions.workspaceId }).from(sessions).where(eq(sessions.id, a.sessionId));
    expect(row.ws).toBeNull();
  });

  it("every public endpoint acts in the session's current workspace", async () => {
    const a = await person(t);
    const ws = await team(a);
    const mine = await call("POST", "/links", a.cookie, { url: "https://example.com/personal" });
    await call("POST", `/workspaces/${ws}/switch`, a.cookie);
    const shared = await call("POST", "/links", a.cookie, { url: "https://example.com/shared" });
    const [row] = await t.app.db.select({ ws: links.workspaceId }).from(links).where(eq(links.id, shared.json.id));
    expect(row.ws).toBe(ws);
    expect((await call("GET", "/links", a.cookie)).json.links.map((l: { id: string }) => l.id)).toEqual([shared.json.id]);
    expect((await call("GET", `/links/${mine.json.id}`, a.cookie)).status).toBe(404);
    // The personal token still acts in the personal workspace.
    expect((await call("GET", "/links", bearer(a.token))).json.links.map((l: { id: string }) => l.id)).toEqual([mine.json.id]);
  });

  it("a token is bound to the workspace that was current when it was created; GET /account answers it", async () => {
    const a = await person(t);
    const ws = await team(a, "Bound");
    const token = await tokenIn(a, ws);
    await call("POST", `/workspaces/${a.workspaceId}/switch`, a.cookie); // the session moves on; the token does not
    const acc = await call("GET", "/account", bearer(token));
    expect(acc.json.workspace).toEqual({ id: ws, name: "Bound" });
    const [row] = await t.app.db
      .select({ ws: apiTokens.workspaceId })
      .from(apiTokens)
      .where(eq(apiTokens.tokenHash, sha256(token)));
    expect(row.ws).toBe(ws);
    const link = await call("POST", "/links", bearer(token), { url: "https://example.com/t" });
    expect((await call("GET", "/links", a.cookie)).json.links.some((l: { id: string }) => l.id === link.json.id)).toBe(false);
  });

  it("the free plan allows 1 live token per user over all workspaces (409 TOKEN_LIMIT_REACHED)", async () => {
    const a = await person(t, { plan: "free" }); // has its personal token already
    const ws = await team(a);
    await call("POST", `/workspaces/${ws}/switch`, a.cookie);
    const r = await call("POST", "/account/tokens", a.cookie, { name: "second" });
    expect(r.status).toBe(409);
    expect(r.json).toEqual({ error: "TOKEN_LIMIT_REACHED" });
    const [personal] = (await call("GET", "/account/tokens", a.cookie)).json.tokens;
    await call("DELETE", `/account/tokens/${personal.id}`, a.cookie);
    expect((await call("POST", "/account/tokens", a.cookie, { name: "second" })).status).toBe(201);
  });

  it("PATCH /workspaces/{id} renames for an owner; 403 FORBIDDEN for a member; 404 for a non-member", async () => {
    const [o, m, x] = [await person(t), await person(t), await person(t)];
    const ws = await team(o, "Old");
    await join(o, ws, m);
    const r = await call("PATCH", `/workspaces/${ws}`, o.cookie, { name: "New" });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ id: ws, name: "New", role: "owner", personal: false, current: false, members: 2 });
    expect((await call("PATCH", `/workspaces/${ws}`, m.cookie, { name: "Mine" })).json).toEqual({ error: "FORBIDDEN" });
    expect((await call("PATCH", `/workspaces/${ws}`, m.cookie, { name: "Mine" })).status).toBe(403);
    expect((await call("PATCH", `/workspaces/${ws}`, x.cookie, { name: "Mine" })).status).toBe(404);
    const bad = await call("PATCH", `/workspaces/${ws}`, o.cookie, {});
    expect(bad.status).toBe(400);
    expect(bad.json.fields.name).toBeDefined();
  });

  it("DELETE /workspaces/{id} of a personal workspace answers 409 PERSONAL_WORKSPACE", async () => {
    const a = await person(t);
    const r = await call("DELETE", `/workspaces/${a.workspaceId}`, a.cookie);
    expect(r.status).toBe(409);
    expect(r.json).toEqual({ error: "PERSONAL_WORKSPACE" });
    expect((await call("GET", "/account", bearer(a.token))).status).toBe(200);
  });

  it("DELETE /workspaces/{id}: links and linktrees deleted (slugs freed), tokens revoked, domains removed, click events kept, sessions back in their personal workspace", async () => {
    const [o, m] = [await person(t), await person(t)];
    const ws = await team(o);
    await join(o, ws, m);
    const oToken = await tokenIn(o, ws);
    const mToken = await tokenIn(m, ws);
    const slug = `gone-${uniq()}`;
    const link = await call("POST", "/links", bearer(mToken), { url: "https://example.com/x", slug });
    const tree = await call("POST", "/linktrees", bearer(oToken), { slug: `tree-${uniq()}`, title: "T" });
    await call("POST", `/linktrees/${tree.json.id}/items`, bearer(oToken), { title: "I", url: "https://example.com/i" });
    // A verified branded domain with a link on it, served by the redirect host (and so cached there).
    const host = `${uniq()}.brand.example`;
    await t.app.db.insert(domains).values({
      id: newId(),
      workspaceId: ws,
      name: host,
      verificationValue: "v",
      verified: true,
      verifiedAt: 1,
      notFoundUrl: "https://example.com/nf",
      createdAt: 1,
    });
    const branded = await call("POST", "/links", bearer(mToken), { url: "https://example.com/branded", slug, domain: host });
    expect(branded.status).toBe(201);
    await t.app.db
      .insert(clicks)
      .values({ linkId: link.json.id, ts: `${Date.now()}#x`, workspaceId: ws, timestamp: Date.now(), device: "desktop", rule: "url" });
    expect((await http(`${t.redirect}/${slug}`)).status).toBe(301);
    expect(await visitHost(host, `/${slug}`)).toBe(301);
    expect(await visitHost(host, "/")).toBe(302); // to its not_found_url

    expect((await call("DELETE", `/workspaces/${ws}`, m.cookie)).status).toBe(403);
    const r = await call("DELETE", `/workspaces/${ws}`, o.cookie);
    expect(r.status).toBe(204);
    expect(r.text).toBe("");

    const db = t.app.db;
    expect(await db.select().from(workspaces).where(eq(workspaces.id, ws))).toEqual([]);
    expect(await db.select().from(links).where(eq(links.workspaceId, ws))).toEqual([]);
    expect(await db.select().from(linktrees).where(eq(linktrees.workspaceId, ws))).toEqual([]);
    expect(await db.select().from(domains).where(eq(domains.workspaceId, ws))).toEqual([]);
    expect(await db.select().from(memberships).where(eq(memberships.workspaceId, ws))).toEqual([]);
    expect(await db.select().from(clicks).where(eq(clicks.linkId, link.json.id))).toHaveLength(1);
    const tokens = await db.select({ revokedAt: apiTokens.revokedAt }).from(apiTokens).where(eq(apiTokens.workspaceId, ws));
    expect(tokens).toHaveLength(2);
    expect(tokens.every((x) => x.revokedAt !== null)).toBe(true);
    expect((await call("GET", "/links", bearer(mToken))).status).toBe(401);
    expect((await http(`${t.redirect}/${slug}`)).status).toBe(404);
    // The domain is no longer served, here nor (NOTIFY) on other instances: no not_found_url either.
    expect(await visitHost(host, `/${slug}`)).toBe(404);
    expect(await visitHost(host, "/")).toBe(404);
    // The slug is free again, for anyone.
    expect((await call("POST", "/links", bearer(o.token), { url: "https://example.com/again", slug })).status).toBe(201);
    for (const p of [o, m]) expect((await call("GET", "/account", p.cookie)).json.workspace.id).toBe(p.workspaceId);
    // The personal token slot is free again (revoked tokens do not count).
    expect((await call("GET", "/workspaces", m.cookie)).json.workspaces.map((w: { id: string }) => w.id)).toEqual([m.workspaceId]);
  });
});

describe("members and invitations", () => {
  it("GET /workspaces/{id}/members lists members and pending invitations only, to any member", async () => {
    const [o, m] = [await person(t, { name: "Olga" }), await person(t)];
    const ws = await team(o);
    await join(o, ws, m);
    const pending = `p${uniq()}@example.com`;
    await call("POST", `/workspaces/${ws}/invites`, o.cookie, { email: pending, role: "owner" });
    const revoked = (await call("POST", `/workspaces/${ws}/invites`, o.cookie, { email: `r${uniq()}@example.com`, role: "member" })).json;
    await call("DELETE", `/workspaces/${ws}/invites/${revoked.id}`, o.cookie);
    const expired = (await call("POST", `/workspaces/${ws}/invites`, o.cookie, { email: `e${uniq()}@example.com`, role: "member" })).json;
    await t.app.db
      .update(workspaceInvites)
      .set({ expiresAt: Date.now() - 1 })
      .where(eq(workspaceInvites.id, expired.id));
    for (const who of [o, m]) {
      const r = await call("GET", `/workspaces/${ws}/members`, who.cookie);
      expect(r.status).toBe(200);
      expect(r.json).toEqual({
        members: [
          { user_id: o.id, email: o.email, name: "Olga", role: "owner", joined_at: expect.any(Number) },
          { user_id: m.id, email: m.email, name: null, role: "member", joined_at: expect.any(Number) },
        ],
        invites: [
          { id: expect.stringMatching(/^[0-9a-z]{8}$/), email: pending, role: "owner", created_at: expect.any(Number), expires_at: expect.any(Number) },
        ],
      });
    }
  });

  it("POST /workspaces/{id}/invites mails ${APP_URL}/invites/{token}: 32 base62 characters, only its SHA-256 stored, valid 7 days, the only /invites/ URL of the mail", async () => {
    const o = await person(t, { name: "Olga" });
    const ws = await team(o, "Acme");
    const email = `new${uniq()}@example.com`;
    const before = Date.now();
    const r = await call("POST", `/workspaces/${ws}/invites`, o.cookie, { email: email.toUpperCase(), role: "member" });
    expect(r.status).toBe(201);
    expect(r.json).toEqual({
      id: expect.stringMatching(/^[0-9a-z]{8}$/),
      email,
      role: "member",
      created_at: expect.any(Number),
      expires_at: r.json.created_at + INVITE_TTL_MS,
    });
    expect(r.json.created_at).toBeGreaterThanOrEqual(before);
    const [mail] = mailsTo(t.app, email);
    expect(mail.subject).toBe("You are invited to a workspace on Links");
    expect(mail.text).toContain("“Olga” invited you to join the workspace “Acme”");
    const urls = [...`${mail.text}\n${mail.html}`.matchAll(/https?:\/\/[^\s"<>]*\/invites\/[^\s"<>]*/g)].map((m) => m[0]);
    const token = invitationToken(t.app, email);
    expect(token).toMatch(/^[0-9A-Za-z]{32}$/);
    expect(new Set(urls)).toEqual(new Set([`${t.appUrl}/invites/${token}`]));
    expect(mail.text).not.toMatch(/\b\d{6}\b/);
    const [row] = await t.app.db.select().from(workspaceInvites).where(eq(workspaceInvites.id, r.json.id));
    expect(row.tokenHash).toBe(sha256(token));
    expect(JSON.stringify(row)).not.toContain(token);
  });

  it("a pending invitation for the same address is replaced: the old link stops working", async () => {
    const [o, m] = [await person(t), await person(t)];
    const ws = await team(o);
    const first = (await call("POST", `/workspaces/${ws}/invites`, o.cookie, { email: m.email, role: "owner" })).json;
    const oldToken = invitationToken(t.app, m.email);
    const second = (await call("POST", `/workspaces/${ws}/invites`, o.cookie, { email: m.email, role: "member" })).json;
    expect(second.id).not.toBe(first.id);
    const { invites } = (await call("GET", `/workspaces/${ws}/members`, o.cookie)).json;
    expect(invites.map((i: { id: string }) => i.id)).toEqual([second.id]);
    expect((await call("POST", "/invites/accept", m.cookie, { token: oldToken })).status).toBe(404);
    const ok = await call("POST", "/invites/accept", m.cookie, { token: invitationToken(t.app, m.email) });
    expect(ok.json.workspace.role).toBe("member");
  });

  it("inviting a member already answers 409 ALREADY_MEMBER, whatever the address's case", async () => {
    const [o, m] = [await person(t), await person(t)];
    const ws = await team(o);
    await join(o, ws, m);
    const r = await call("POST", `/workspaces/${ws}/invites`, o.cookie, { email: m.email.toUpperCase(), role: "owner" });
    expect(r.status).toBe(409);
    expect(r.json).toEqual({ error: "ALREADY_MEMBER" });
    expect((await call("POST", `/workspaces/${ws}/invites`, o.cookie, { email: o.email, role: "owner" })).json.error).toBe("ALREADY_MEMBER");
  });

  it("a personal workspace cannot be shared: inviting into it answers 409 PERSONAL_WORKSPACE", async () => {
    const o = await person(t);
    const r = await call("POST", `/workspaces/${o.workspaceId}/invites`, o.cookie, { email: `x${uniq()}@example.com`, role: "member" });
    expect(r.status).toBe(409);
    expect(r.json).toEqual({ error: "PERSONAL_WORKSPACE" });
    expect(await t.app.db.select().from(workspaceInvites).where(eq(workspaceInvites.workspaceId, o.workspaceId))).toEqual([]);
  });

  it.each(["admin", "Owner", "", 1, null])("a role other than owner, member or viewer (%j) answers 400 VALIDATION_FAILED naming role", async (role) => {
    const [o, m] = [await person(t), await person(t)];
    const ws = await team(o);
    await join(o, ws, m);
    for (const [method, p, json] of [
      ["POST", `/workspaces/${ws}/invites`, { email: `x${uniq()}@example.com`, role }],
      ["PATCH", `/workspaces/${ws}/members/${m.id}`, { role }],
    ] as const) {
      const r = await call(method, p, o.cookie, json);
      expect(r.status).toBe(400);
      expect(r.json).toEqual({ error: "VALIDATION_FAILED", fields: { role: expect.any(Array) } });
    }
    expect(await t.app.db.select().from(workspaceInvites).where(eq(workspaceInvites.workspaceId, ws))).toHaveLength(1);
  });

  it("POST /workspaces/{id}/invites validates the address (400 naming email)", async () => {
    const o = await person(t);
    const ws = await team(o);
    const r = await call("POST", `/workspaces/${ws}/invites`, o.cookie, { email: "nope", role: "member" });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ error: "VALIDATION_FAILED", fields: { email: expect.any(Array) } });
  });

  it("POST /invites/accept makes the invited address a member with the invitation's role; the e-mail compares case-insensitively", async () => {
    const [o, m] = [await person(t), await person(t)];
    const ws = await team(o, "Joinable");
    await call("POST", `/workspaces/${ws}/invites`, o.cookie, { email: m.email.toUpperCase(), role: "owner" });
    const r = await call("POST", "/invites/accept", m.cookie, { token: invitationToken(t.app, m.email) });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ workspace: { id: ws, name: "Joinable", role: "owner", personal: false, current: false, members: 2 } });
    const listed = (await call("GET", "/workspaces", m.cookie)).json.workspaces;
    expect(listed.map((w: { id: string; role: string }) => [w.id, w.role])).toEqual([
      [m.workspaceId, "owner"],
      [ws, "owner"],
    ]);
    expect((await call("GET", `/workspaces/${ws}/members`, m.cookie)).json.invites).toEqual([]);
  });

  it("accepting while signed in as another address answers 403 INVITE_EMAIL_MISMATCH and changes nothing", async () => {
    const [o, m, x] = [await person(t), await person(t), await person(t)];
    const ws = await team(o);
    await call("POST", `/workspaces/${ws}/invites`, o.cookie, { email: m.email, role: "member" });
    const token = invitationToken(t.app, m.email);
    const r = await call("POST", "/invites/accept", x.cookie, { token });
    expect(r.status).toBe(403);
    expect(r.json).toEqual({ error: "INVITE_EMAIL_MISMATCH" });
    expect(await t.app.db.select().from(memberships).where(eq(memberships.userId, x.id))).toHaveLength(1);
    expect((await call("POST", "/invites/accept", m.cookie, { token })).status).toBe(200); // still valid for the right person
  });

  it("unknown, used, revoked or expired invitations answer 404 NOT_FOUND", async () => {
    const [o, m, n, p] = [await person(t), await person(t), await person(t), await person(t)];
    const ws = await team(o);
    const accept = (who: Person, token: string) => call("POST", "/invites/accept", who.cookie, { token });
    for (const token of ["x".repeat(32), "nope", "a".repeat(200), "../../etc"]) expect((await accept(m, token)).json).toEqual({ error: "NOT_FOUND" });
    // used
    await call("POST", `/workspaces/${ws}/invites`, o.cookie, { email: m.email, role: "member" });
    const used = invitationToken(t.app, m.email);
    expect((await accept(m, used)).status).toBe(200);
    await call("DELETE", `/workspaces/${ws}/members/${m.id}`, m.cookie); // left again: the used link still does not work
    expect((await accept(m, used)).status).toBe(404);
    // revoked
    const inv = (await call("POST", `/workspaces/${ws}/invites`, o.cookie, { email: n.email, role: "member" })).json;
    const revokedToken = invitationToken(t.app, n.email);
    expect((await call("DELETE", `/workspaces/${ws}/invites/${inv.id}`, o.cookie)).status).toBe(204);
    expect((await accept(n, revokedToken)).status).toBe(404);
    // expired: after 7 days
    const inv2 = (await call("POST", `/workspaces/${ws}/invites`, o.cookie, { email: p.email, role: "member" })).json;
    await t.app.db
      .update(workspaceInvites)
      .set({ expiresAt: Date.now() - 1 })
      .where(eq(workspaceInvites.id, inv2.id));
    const r = await accept(p, invitationToken(t.app, p.email));
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ error: "NOT_FOUND" });
    // an invitation of a deleted workspace
    const ws2 = await team(o);
    await call("POST", `/workspaces/${ws2}/invites`, o.cookie, { email: p.email, role: "member" });
    const orphan = invitationToken(t.app, p.email);
    await call("DELETE", `/workspaces/${ws2}`, o.cookie);
    expect((await accept(p, orphan)).status).toBe(404);
  });

  it("POST /invites/accept answers 400 VALIDATION_FAILED without a token", async () => {
    const m = await person(t);
    for (const json of [{}, { token: "" }, { token: 5 }]) {
      const r = await call("POST", "/invites/accept", m.cookie, json);
      expect(r.status).toBe(400);
      expect(r.json).toEqual({ error: "VALIDATION_FAILED", fields: { token: expect.any(Array) } });
    }
  });

  it("DELETE /workspaces/{id}: its import jobs go with it, so an import in progress adds nothing to a deleted workspace", async () => {
    const o = await person(t);
    const ws = await team(o);
    const job = { workspaceId: ws, userId: o.id, format: "generic", sourcePath: "imports/none.csv", createdAt: 1, updatedAt: 1 };
    await t.app.db.insert(importJobs).values([
      { ...job, id: newId(), status: "queued" },
      { ...job, id: newId(), status: "running", leaseOwner: "elsewhere", leaseUntil: Date.now() + 60_000 },
    ]);
    expect((await call("DELETE", `/workspaces/${ws}`, o.cookie)).status).toBe(204);
    expect(await t.app.db.select().from(importJobs).where(eq(importJobs.workspaceId, ws))).toEqual([]);
  });

  it("POST /workspaces/{id}/invites: at most 50 invitation mails an hour per workspace, then 429 RATE_LIMITED with Retry-After", async () => {
    const [o, o2] = [await person(t), await person(t)];
    const ws = await team(o);
    await join(o, ws, o2, "owner"); // 1 mail
    for (let i = 0; i < 25; i++)
      expect((await call("POST", `/workspaces/${ws}/invites`, o.cookie, { email: `x${i}-${uniq()}@example.com`, role: "member" })).status).toBe(201);
    // A second owner shares the workspace's 50.
    for (let i = 0; i < 24; i++)
      expect((await call("POST", `/workspaces/${ws}/invites`, o2.cookie, { email: `z${i}-${uniq()}@example.com`, role: "member" })).status).toBe(201);
    const r = await call("POST", `/workspaces/${ws}/invites`, o2.cookie, { email: `over-${uniq()}@example.com`, role: "member" });
    expect(r.status).toBe(429);
    expect(r.json).toEqual({ error: "RATE_LIMITED" });
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("invitations are limited per inviting account over all its workspaces: 50 mails an hour, then 429 in every workspace, nothing stored or mailed", async () => {
    const o = await person(t);
    const spaces = [await team(o), await team(o), await team(o)];
    for (let i = 0; i < 50; i++) {
      const ws = spaces[i % spaces.length];
      expect((await call("POST", `/workspaces/${ws}/invites`, o.cookie, { email: `r${i}-${uniq()}@example.com`, role: "member" })).status).toBe(201);
    }
    const fresh = await team(o);
    for (const ws of [...spaces, fresh]) {
      const email = `relay-${uniq()}@example.com`;
      const r = await call("POST", `/workspaces/${ws}/invites`, o.cookie, { email, role: "member" });
      expect(r.status).toBe(429);
      expect(r.json).toEqual({ error: "RATE_LIMITED" });
      expect(mailsTo(t.app, email)).toEqual([]);
      expect(await t.app.db.select().from(workspaceInvites).where(eq(workspaceInvites.email, email))).toEqual([]);
    }
    // Another owner of the same workspaces is not held back by this account's count.
    const o2 = await person(t);
    expect((await call("POST", `/workspaces/${await team(o2)}/invites`, o2.cookie, { email: `y-${uniq()}@example.com`, role: "member" })).status).toBe(201);
  });

  it("creating workspaces is limited: 10 a day per account, then 429 RATE_LIMITED with Retry-After, nothing created", async () => {
    const o = await person(t);
    for (let i = 0; i < 10; i++) await team(o);
    const r = await call("POST", "/workspaces", o.cookie, { name: "One too many" });
    expect(r.status).toBe(429);
    expect(r.json).toEqual({ error: "RATE_LIMITED" });
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await call("GET", "/workspaces", o.cookie)).json.workspaces).toHaveLength(11); // personal + 10
    expect((await call("POST", "/workspaces", (await person(t)).cookie, { name: "Someone else's" })).status).toBe(201);
  });

  it("invitation mail: no user-chosen text in the subject; names quoted and escaped in the HTML part; nothing in them a mail client turns into a link", async () => {
    const evil = `Win! https://evil.example/login <b>now</b> www.evil.example me@evil.example\r\nBcc: x@evil.example`;
    const o = await person(t, { name: `Olga http://olga.example` });
    const ws = await team(o, evil.slice(0, 100));
    const email = `victim${uniq()}@example.com`;
    expect((await call("POST", `/workspaces/${ws}/invites`, o.cookie, { email, role: "member" })).status).toBe(201);
    const [mail] = mailsTo(t.app, email);
    expect(mail.subject).toBe("You are invited to a workspace on Links");
    const token = invitationToken(t.app, email);
    const accept = `${t.appUrl}/invites/${token}`;
    for (const part of [mail.text, mail.html]) {
      const rest = part.split(accept).join("").split(email).join("");
      expect(rest).not.toMatch(/evil\.example|olga\.example|https?:|www\.|@/);
      expect(rest).toContain("evil[.]example");
      expect(rest).not.toMatch(/\r|Bcc: x@/);
    }
    expect(mail.text).toContain("“Olga http[://]olga[.]example” invited you to join the workspace “Win! https[://]evil[.]example/login <b>now</b>");
    expect(mail.html).not.toContain("<b>");
    expect(mail.html).toContain("&#60;b&#62;now&#60;/b&#62;");
  });

  it("DELETE /workspaces/{id}/invites/{inviteId}: 204 for an owner (the link stops working), 403 for a member, 404 for an unknown id", async () => {
    const [o, m, x] = [await person(t), await person(t), await person(t)];
    const ws = await team(o);
    await join(o, ws, m);
    const inv = (await call("POST", `/workspaces/${ws}/invites`, o.cookie, { email: x.email, role: "member" })).json;
    expect((await call("DELETE", `/workspaces/${ws}/invites/${inv.id}`, m.cookie)).status).toBe(403);
    expect((await call("DELETE", `/workspaces/${ws}/invites/nope`, o.cookie)).status).toBe(404);
    const r = await call("DELETE", `/workspaces/${ws}/invites/${inv.id}`, o.cookie);
    expect(r.status).toBe(204);
    expect(r.text).toBe("");
    expect((await call("DELETE", `/workspaces/${ws}/invites/${inv.id}`, o.cookie)).status).toBe(204);
    expect((await call("POST", "/invites/accept", x.cookie, { token: invitationToken(t.app, x.email) })).status).toBe(404);
  });

  it("PATCH /workspaces/{id}/members/{userId} changes a role (owner only); demoting the last owner answers 409 LAST_OWNER", async () => {
    const [o, m] = [await person(t), await person(t)];
    const ws = await team(o);
    await join(o, ws, m);
    expect((await call("PATCH", `/workspaces/${ws}/members/${o.id}`, m.cookie, { role: "member" })).status).toBe(403);
    const last = await call("PATCH", `/workspaces/${ws}/members/${o.id}`, o.cookie, { role: "member" });
    expect(last.status).toBe(409);
    expect(last.json).toEqual({ error: "LAST_OWNER" });
    const up = await call("PATCH", `/workspaces/${ws}/members/${m.id}`, o.cookie, { role: "owner" });
    expect(up.status).toBe(200);
    expect(up.json).toEqual({ user_id: m.id, email: m.email, name: null, role: "owner", joined_at: expect.any(Number) });
    // Two owners now: the first may step down, and then the second is the last one.
    expect((await call("PATCH", `/workspaces/${ws}/members/${o.id}`, o.cookie, { role: "member" })).json.role).toBe("member");
    expect((await call("PATCH", `/workspaces/${ws}/members/${m.id}`, m.cookie, { role: "member" })).json).toEqual({ error: "LAST_OWNER" });
    expect((await call("PATCH", `/workspaces/${ws}/members/nobody`, m.cookie, { role: "member" })).status).toBe(404);
    // The personal workspace's only owner cannot step down either.
    expect((await call("PATCH", `/workspaces/${o.workspaceId}/members/${o.id}`, o.cookie, { role: "member" })).json).toEqual({ error: "LAST_OWNER" });
  });

  it("two owners demoting each other at once leave one owner (the second is refused)", async () => {
    const [o, m] = [await person(t), await person(t)];
    const ws = await team(o);
    await join(o, ws, m, "owner");
    const [a, b] = await Promise.all([
      call("PATCH", `/workspaces/${ws}/members/${m.id}`, o.cookie, { role: "member" }),
      call("PATCH", `/workspaces/${ws}/members/${o.id}`, m.cookie, { role: "member" }),
    ]);
    // The second one waits for the first: no longer an owner (403), or demoting the last one (409).
    expect([a.status, b.status].filter((s) => s === 200)).toHaveLength(1);
    expect([a.status, b.status].every((s) => s === 200 || s === 403 || s === 409)).toBe(true);
    const owners = (await t.app.db.select().from(memberships).where(eq(memberships.workspaceId, ws))).filter((x) => x.role === "owner");
    expect(owners).toHaveLength(1);
  });

  it("DELETE /workspaces/{id}/members/{userId}: an owner removes a member, a member leaves, a member cannot remove another (403), the last owner cannot leave (409 LAST_OWNER)", async () => {
    const [o, m, n] = [await person(t), await person(t), await person(t)];
    const ws = await team(o);
    await join(o, ws, m);
    await join(o, ws, n);
    expect((await call("DELETE", `/workspaces/${ws}/members/${n.id}`, m.cookie)).json).toEqual({ error: "FORBIDDEN" });
    const last = await call("DELETE", `/workspaces/${ws}/members/${o.id}`, o.cookie);
    expect(last.status).toBe(409);
    expect(last.json).toEqual({ error: "LAST_OWNER" });
    expect((await call("DELETE", `/workspaces/${ws}/members/${n.id}`, o.cookie)).status).toBe(204);
    const leave = await call("DELETE", `/workspaces/${ws}/members/${m.id}`, m.cookie);
    expect(leave.status).toBe(204);
    expect(leave.text).toBe("");
    expect((await call("GET", `/workspaces/${ws}/members`, o.cookie)).json.members.map((x: { user_id: string }) => x.user_id)).toEqual([o.id]);
    expect((await call("GET", `/workspaces/${ws}/members`, m.cookie)).status).toBe(404);
    expect((await call("DELETE", `/workspaces/${ws}/members/${m.id}`, o.cookie)).status).toBe(404);
    // Leaving one's personal workspace would leave it without its owner.
    expect((await call("DELETE", `/workspaces/${m.workspaceId}/members/${m.id}`, m.cookie)).json).toEqual({ error: "LAST_OWNER" });
  });

  it("a removed member's tokens bound to the workspace answer 401 and their sessions in it are back in the personal workspace, from the next request on", async () => {
    const [o, m] = [await person(t), await person(t)];
    const ws = await team(o);
    await join(o, ws, m);
    const token = await tokenIn(m, ws); // the session is in ws now
    const other = await t.app.lucia.createSession(m.id, { createdAt: Date.now() });
    await call("POST", `/workspaces/${ws}/switch`, { cookie: `app_session=${other.id}` });
    const shared = await call("POST", "/links", bearer(token), { url: "https://example.com/shared" });
    expect((await call("GET", "/links", m.cookie)).json.links.map((l: { id: string }) => l.id)).toEqual([shared.json.id]);

    expect((await call("DELETE", `/workspaces/${ws}/members/${m.id}`, o.cookie)).status).toBe(204);

    const r = await call("GET", "/links", bearer(token));
    expect(r.status).toBe(401);
    expect(r.json).toEqual({ error: "UNAUTHORIZED" });
    for (const cookie of [m.cookie, { cookie: `app_session=${other.id}` }]) {
      expect((await call("GET", "/account", cookie)).json.workspace.id).toBe(m.workspaceId);
      expect((await call("GET", "/links", cookie)).json.links.map((l: { id: string }) => l.id)).not.toContain(shared.json.id);
      expect((await call("GET", `/links/${shared.json.id}`, cookie)).status).toBe(404);
    }
    // The personal token still works.
    expect((await call("GET", "/links", bearer(m.token))).status).toBe(200);
  });

  // Behind the service's back (an operator's SQL): migration 0007's trigger tells the instance, which
  // drops the cached token within a moment. Through the service, another instance included, it is the
  // very next request (instances.test.ts).
  it("a membership removed behind the service's back (an operator's SQL) ends its tokens within a moment; its sessions fall back to the personal workspace", async () => {
    const [o, m] = [await person(t), await person(t)];
    const ws = await team(o);
    await join(o, ws, m);
    const token = await tokenIn(m, ws);
    expect((await call("GET", "/links", bearer(token))).status).toBe(200);
    await t.app.db.delete(memberships).where(and(eq(memberships.userId, m.id), eq(memberships.workspaceId, ws)));
    expect(
      await pollUntil(
        async () => (await call("GET", "/links", bearer(token))).status,
        (s) => s === 401,
      ),
    ).toBe(401);
    expect((await call("GET", "/account", m.cookie)).json.workspace.id).toBe(m.workspaceId);
  });
});

describe("DELETE /account and teams", () => {
  it("the last owner of a shared workspace that has other members gets 409 LAST_OWNER, and nothing is removed", async () => {
    const [o, m] = [await person(t), await person(t)];
    const ws = await team(o);
    await join(o, ws, m);
    const r = await call("DELETE", "/account", o.cookie);
    expect(r.status).toBe(409);
    expect(r.json).toEqual({ error: "LAST_OWNER" });
    expect(await t.app.db.select().from(users).where(eq(users.id, o.id))).toHaveLength(1);
    expect((await call("GET", "/account", o.cookie)).status).toBe(200);
    // With a second owner, the account goes and the workspace stays with the other member.
    await call("PATCH", `/workspaces/${ws}/members/${m.id}`, o.cookie, { role: "owner" });
    expect((await call("DELETE", "/account", o.cookie)).status).toBe(204);
    const members = (await call("GET", `/workspaces/${ws}/members`, m.cookie)).json.members;
    expect(members.map((x: { user_id: string }) => x.user_id)).toEqual([m.id]);
  });

  it("a member may delete their account: they leave the workspace, which keeps its links", async () => {
    const [o, m] = [await person(t), await person(t)];
    const ws = await team(o);
    await join(o, ws, m);
    const token = await tokenIn(m, ws);
    const link = await call("POST", "/links", bearer(token), { url: "https://example.com/kept" });
    expect((await call("DELETE", "/account", m.cookie)).status).toBe(204);
    await call("POST", `/workspaces/${ws}/switch`, o.cookie);
    expect((await call("GET", `/links/${link.json.id}`, o.cookie)).status).toBe(200);
  });

  it("a shared workspace whose only member deletes their account goes with it", async () => {
    const o = await person(t);
    const ws = await team(o);
    const token = await tokenIn(o, ws);
    const slug = `solo-${uniq()}`;
    await call("POST", "/links", bearer(token), { url: "https://example.com/solo", slug });
    expect((await call("DELETE", "/account", o.cookie)).status).toBe(204);
    expect(await t.app.db.select().from(workspaces).where(eq(workspaces.id, ws))).toEqual([]);
    expect(await t.app.db.select().from(links).where(eq(links.slug, slug))).toEqual([]);
  });
});

describe("team administration is account administration", () => {
  const teamOps = () => restOperations().filter((o) => o.path.startsWith("/workspaces") || o.path.startsWith("/invites"));
  const sample = (path: string, ws: string) => path.replace("{id}", ws).replace("{userId}", "someone").replace("{inviteId}", "someinvite");
  const bodyFor = (method: string, path: string): unknown =>
    method === "GET" || method === "DELETE"
      ? undefined
      : path.endsWith("/invites")
        ? { email: "x@example.com", role: "member" }
        : path.endsWith("/accept")
          ? { token: "x".repeat(32) }
          : path.includes("/members/")
            ? { role: "member" }
            : path.endsWith("/switch")
              ? undefined
              : { name: "N" };

  it("has every path of team administration", () => {
    expect(teamOps().map((o) => `${o.method} ${o.path}`)).toEqual(
      expect.arrayContaining([
        "GET /workspaces",
        "POST /workspaces",
        "POST /workspaces/{id}/switch",
        "PATCH /workspaces/{id}",
        "DELETE /workspaces/{id}",
        "GET /workspaces/{id}/members",
        "POST /workspaces/{id}/invites",
        "DELETE /workspaces/{id}/invites/{inviteId}",
        "POST /invites/accept",
        "PATCH /workspaces/{id}/members/{userId}",
        "DELETE /workspaces/{id}/members/{userId}",
      ]),
    );
    expect(teamOps().every((o) => o.meta.internal)).toBe(true);
  });

  it("answers 403 SESSION_REQUIRED to a token and 401 UNAUTHORIZED without a credential, on every path", async () => {
    const o = await person(t);
    const ws = await team(o);
    for (const op of teamOps()) {
      const p = sample(op.path, ws);
      const json = bodyFor(op.method, op.path);
      const tok = await call(op.method, p, bearer(o.token), json);
      expect([op.path, tok.status, tok.json]).toEqual([op.path, 403, { error: "SESSION_REQUIRED" }]);
      const none = await call(op.method, p, undefined, json);
      expect([op.path, none.status, none.json]).toEqual([op.path, 401, { error: "UNAUTHORIZED" }]);
    }
    expect(await t.app.db.select().from(workspaces).where(eq(workspaces.id, ws))).toHaveLength(1);
  });

  it("a non-member gets 404 NOT_FOUND for the workspace and everything in it, on every path", async () => {
    const [o, x] = [await person(t), await person(t)];
    const ws = await team(o);
    for (const op of teamOps().filter((o) => o.path.includes("{id}"))) {
      const r = await call(op.method, sample(op.path, ws), x.cookie, bodyFor(op.method, op.path));
      expect([op.method, op.path, r.status, r.json]).toEqual([op.method, op.path, 404, { error: "NOT_FOUND" }]);
    }
    // The `public` workspace of anonymous links has no members: the same.
    expect((await call("GET", "/workspaces/public/members", x.cookie)).status).toBe(404);
    expect((await call("POST", "/workspaces/public/switch", x.cookie)).status).toBe(404);
  });

  it("a member gets 403 FORBIDDEN on every owner-only path", async () => {
    const [o, m] = [await person(t), await person(t)];
    const ws = await team(o);
    await join(o, ws, m);
    const ownerOnly = teamOps().filter(
      (op) => op.path.includes("{id}") && !["POST /workspaces/{id}/switch", "GET /workspaces/{id}/members"].includes(`${op.method} ${op.path}`),
    );
    for (const op of ownerOnly) {
      const p = sample(op.path, ws).replace("someone", o.id);
      const r = await call(op.method, p, m.cookie, bodyFor(op.method, op.path));
      expect([op.method, op.path, r.status, r.json]).toEqual([op.method, op.path, 403, { error: "FORBIDDEN" }]);
    }
  });

  it("the team paths are not in /openapi.json", async () => {
    const doc = (await http(`${t.api}/openapi.json`)).json;
    for (const p of Object.keys(doc.paths)) expect(p).not.toMatch(/^\/(workspaces|invites)/);
  });
});
