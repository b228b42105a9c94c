import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiTokens, domains, links, linktrees } from "../../../db/schema";
import { issueToken } from "../../lib/users";
import { newId } from "../../lib/ids";
import { appRouter } from "..";
import type { Meta } from "../../trpc/init";
import { createTestServer, type TestServer } from "../../test/harness";
import { caller, invitationToken, person, type Person } from "./teams.test-helper";

let t: TestServer;
let call: ReturnType<typeof caller>;
let owner: Person;
let viewer: Person;
let ws: string;
/** A token of the viewer, bound to the team. */
let viewerToken: Record<string, string>;
/** A link, linktree and domain of the team, made by its owner. */
let linkId: string;
let treeId: string;
let domainId: string;

const uniq = () => newId().slice(0, 8);

beforeAll(async () => {
  t = await createTestServer();
  call = caller(() => t.api);
  owner = await person(t);
  viewer = await person(t);
  ws = (await call("POST", "/workspaces", owner.cookie, { name: `Team ${uniq()}` })).json.id;
  const inv = await call("POST", `/workspaces/${ws}/invites`, owner.cookie, { email: viewer.email, role: "viewer" });
  expect(inv.status).toBe(201);
  expect(inv.json.role).toBe("viewer");
  const acc = await call("POST", "/invites/accept", viewer.cookie, { token: invitationToken(t.app, viewer.email) });
  expect(acc.status).toBe(200);
  expect(acc.json.workspace.role).toBe("viewer");
  expect((await call("POST", `/workspaces/${ws}/switch`, owner.cookie)).status).toBe(200);
  expect((await call("POST", `/workspaces/${ws}/switch`, viewer.cookie)).status).toBe(200);
  viewerToken = { authorization: `Bearer ${(await issueToken(t.app.db, viewer.id, "viewer's", ws)).token}` };
  linkId = (await call("POST", "/links", owner.cookie, { url: "https://example.com/team" })).json.id;
  treeId = (await call("POST", "/linktrees", owner.cookie, { slug: `v${uniq()}`, title: "Team page" })).json.id;
  domainId = (await call("POST", "/domains", owner.cookie, { name: `go-${uniq()}.example.com` })).json.id;
  expect([linkId, treeId, domainId].every(Boolean)).toBe(true);
});
afterAll(() => t?.close());

describe("the viewer role", () => {
  it.each([["session"], ["token"]])("a viewer reads links, linktrees, domains, analytics and webhooks (%s)", async (via) => {
    const who = via === "session" ? viewer.cookie : viewerToken;
    for (const path of [
      "/links",
      `/links/${linkId}`,
      "/linktrees",
      `/linktrees/${treeId}`,
      "/domains",
      "/analytics",
      `/links/${linkId}/analytics`,
      "/webhooks",
    ]) {
      const r = await call("GET", path, who);
      expect([path, r.status]).toEqual([path, 200]);
    }
  });

  it.each([["session"], ["token"]])("a viewer's write answers 403 FORBIDDEN and changes nothing (%s)", async (via) => {
    const who = via === "session" ? viewer.cookie : viewerToken;
    const counts = async () => [
      (await t.app.db.select({ id: links.id }).from(links).where(eq(links.workspaceId, ws))).length,
      (await t.app.db.select({ id: linktrees.id }).from(linktrees).where(eq(linktrees.workspaceId, ws))).length,
      (await t.app.db.select({ id: domains.id }).from(domains).where(eq(domains.workspaceId, ws))).length,
    ];
    const before = await counts();
    const writes: [string, string, unknown][] = [
      ["POST", "/links", { url: "https://example.com/viewer" }],
      ["POST", "/links/bulk", { links: [{ url: "https://example.com/viewer" }] }],
      ["PATCH", `/links/${linkId}`, { url: "https://example.com/changed" }],
      ["DELETE", `/links/${linkId}`, undefined],
      ["POST", "/linktrees", { slug: `w${uniq()}`, title: "Mine" }],
      ["PATCH", `/linktrees/${treeId}`, { title: "Changed" }],
      ["POST", `/linktrees/${treeId}/items`, { title: "Item", url: "https://example.com/item" }],
      ["DELETE", `/linktrees/${treeId}`, undefined],
      ["POST", "/domains", { name: `v-${uniq()}.example.com` }],
      ["POST", `/domains/${domainId}/verify`, undefined],
      ["DELETE", `/domains/${domainId}`, undefined],
      ["POST", "/webhooks", { url: "https://example.com/hook", events: ["link.created"] }],
    ];
    for (const [method, path, body] of writes) {
      const r = await call(method, path, who, body);
      expect([method, path, r.status, r.json]).toEqual([method, path, 403, { error: "FORBIDDEN" }]);
    }
    const [link] = await t.app.db.select().from(links).where(eq(links.id, linkId));
    expect([link.url, link.deletedAt]).toEqual(["https://example.com/team", null]);
    expect(await counts()).toEqual(before);
  });

  it("a viewer cannot create tokens: 403 FORBIDDEN", async () => {
    const before = await t.app.db.select({ id: apiTokens.id }).from(apiTokens).where(eq(apiTokens.userId, viewer.id));
    const r = await call("POST", "/account/tokens", viewer.cookie, { name: "mine" });
    expect(r.status).toBe(403);
    expect(r.json).toEqual({ error: "FORBIDDEN" });
    expect(await t.app.db.select({ id: apiTokens.id }).from(apiTokens).where(eq(apiTokens.userId, viewer.id))).toHaveLength(before.length);
  });

  it("a viewer still manages their own account, and may leave", async () => {
    const other = await person(t);
    const inv = await call("POST", `/workspaces/${ws}/invites`, owner.cookie, { email: other.email, role: "viewer" });
    expect(inv.status).toBe(201);
    expect((await call("POST", "/invites/accept", other.cookie, { token: invitationToken(t.app, other.email) })).status).toBe(200);
    expect((await call("POST", `/workspaces/${ws}/switch`, other.cookie)).status).toBe(200);
    expect((await call("PATCH", "/account", other.cookie, { name: "Vera" })).status).toBe(200);
    expect((await call("POST", "/workspaces", other.cookie, { name: "Own team" })).status).toBe(201);
    expect((await call("DELETE", `/workspaces/${ws}/members/${other.id}`, other.cookie)).status).toBe(204);
  });

  it("role changes accept viewer, and a member made viewer is refused writes from the next request on", async () => {
    const m = await person(t);
    await call("POST", `/workspaces/${ws}/invites`, owner.cookie, { email: m.email, role: "member" });
    await call("POST", "/invites/accept", m.cookie, { token: invitationToken(t.app, m.email) });
    await call("POST", `/workspaces/${ws}/switch`, m.cookie);
    const token = { authorization: `Bearer ${(await issueToken(t.app.db, m.id, "m", ws)).token}` };
    expect((await call("POST", "/links", token, { url: "https://example.com/m1" })).status).toBe(201);
    const r = await call("PATCH", `/workspaces/${ws}/members/${m.id}`, owner.cookie, { role: "viewer" });
    expect(r.status).toBe(200);
    expect(r.json.role).toBe("viewer");
    expect((await call("POST", "/links", token, { url: "https://example.com/m2" })).json).toEqual({ error: "FORBIDDEN" });
    expect((await call("POST", "/links", m.cookie, { url: "https://example.com/m3" })).json).toEqual({ error: "FORBIDDEN" });
  });

  it("a role other than owner, member or viewer answers 400 VALIDATION_FAILED naming role", async () => {
    const r = await call("POST", `/workspaces/${ws}/invites`, owner.cookie, { email: "x@example.com", role: "admin" });
    expect(r.status).toBe(400);
    expect(r.json.error).toBe("VALIDATION_FAILED");
    expect(r.json.fields.role[0]).toContain("viewer");
  });

  it("a viewer's owner-only team administration answers 403 FORBIDDEN", async () => {
    for (const [method, path, body] of [
      ["PATCH", `/workspaces/${ws}`, { name: "Mine now" }],
      ["POST", `/workspaces/${ws}/invites`, { email: "y@example.com", role: "member" }],
      ["PATCH", `/workspaces/${ws}/members/${owner.id}`, { role: "viewer" }],
      ["DELETE", `/workspaces/${ws}/members/${owner.id}`, undefined],
      ["DELETE", `/workspaces/${ws}`, undefined],
    ] as const) {
      const r = await call(method, path, viewer.cookie, body);
      expect([method, path, r.status, r.json]).toEqual([method, path, 403, { error: "FORBIDDEN" }]);
    }
  });
});

describe("every mutation is decided for viewers", () => {
  type Proc = { _def: { meta?: Meta; type?: string; mutation?: boolean } };
  const mutations = Object.entries((appRouter._def as unknown as { procedures: Record<string, Proc> }).procedures)
    .filter(([, p]) => p._def.type === "mutation" || p._def.mutation)
    .map(([path]) => path);
  /** What a viewer may still do: their own account, sign-in, sessions and memberships; abuse reports. */
  const VIEWER_MAY = new Set([
    "auth.start",
    "auth.verify",
    "auth.logout",
    "auth.oidcStart",
    "auth.oidcCallback",
    "account.update",
    "account.changeEmail",
    "account.verifyEmail",
    "account.delete",
    "account.setAvatar",
    "session.revoke",
    "token.revoke",
    "report.create",
    "report.dismiss",
    "report.deleteLink",
    "workspace.create",
    "workspace.switch",
    "workspace.acceptInvite",
  ]);
  /** Owner-only administration, refused by role in the service (the test above calls each over HTTP). */
  const OWNER_ONLY = new Set([
    "workspace.update",
    "workspace.delete",
    "workspace.invite",
    "workspace.revokeInvite",
    "workspace.updateMember",
    "workspace.removeMember",
  ]);

  it("every other mutation answers a viewer 403 FORBIDDEN before reading its input, session and token alike", async () => {
    const refused = mutations.filter((p) => !VIEWER_MAY.has(p) && !OWNER_ONLY.has(p));
    // The walk sees the whole API.
    expect(refused).toEqual(
      expect.arrayContaining(["link.create", "link.bulkDelete", "linktree.reorderItems", "domain.verify", "imports.start", "token.create"]),
    );
    for (const who of [viewer.cookie, viewerToken]) {
      const trpc = t.caller(who) as unknown as Record<string, Record<string, (input: unknown) => Promise<unknown>>>;
      for (const path of refused) {
        if (who === viewerToken && path === "token.create") continue; // session only: SESSION_REQUIRED first
        const [ns, name] = path.split(".");
        const outcome = await trpc[ns][name]({}).then(
          () => "answered",
          (e: { publicCode?: string }) => e.publicCode,
        );
        expect([path, outcome]).toEqual([path, "FORBIDDEN"]);
      }
    }
  });

  it("the lists name only mutations that exist", () => {
    for (const p of [...VIEWER_MAY, ...OWNER_ONLY]) expect(mutations).toContain(p);
  });
});
