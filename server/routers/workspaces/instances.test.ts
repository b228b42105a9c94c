import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { apiTokens } from "../../../db/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppServices } from "../../core/services";
import { createUserWithWorkspace, issueToken } from "../../lib/users";
import { http, pollUntil } from "../../test/harness";
import { startTwoInstances, type Instance } from "../../test/two-instances";
import { invitationToken } from "./teams.test-helper";

/**
 * Two service instances on one database (a second connection pool on PostgreSQL; the same embedded
 * database on PGlite), as behind a load balancer. Removing a member or revoking a token on one takes
 * effect on the other's very next request: each instance caches token look-ups (core/auth.ts), and such
 * a change answers only once every instance dropped them.
 */
let a: Instance, b: Instance;
let close: (() => Promise<void>) | undefined;

beforeAll(async () => void ({ a, b, close } = await startTwoInstances({ SESSION_SECRET: "s".repeat(32) })));
afterAll(() => close?.());

const on = (i: Instance) => (method: string, path: string, headers?: Record<string, string>, json?: unknown) =>
  http(`${i.api}${path}`, { method, headers, json });

async function signedIn(app: AppServices) {
  const email = `i${randomBytes(5).toString("hex")}@example.com`;
  const user = await createUserWithWorkspace(app.db, { email, plan: "pro" });
  const session = await app.lucia.createSession(user.id, { createdAt: Date.now() });
  return { id: user.id, email, personal: user.workspaceId, cookie: { cookie: `app_session=${session.id}` } };
}

describe("two instances on one database", () => {
  it("a member removed on one instance: on the other, their token bound to the workspace answers 401 and their session is back in the personal workspace at the very next request", async () => {
    const [A, B] = [on(a), on(b)];
    const owner = await signedIn(a.app);
    const member = await signedIn(a.app);
    const ws = (await A("POST", "/workspaces", owner.cookie, { name: "Shared" })).json.id;
    expect((await A("POST", `/workspaces/${ws}/invites`, owner.cookie, { email: member.email, role: "member" })).status).toBe(201);
    // Accepted and switched on B; the token is made on B, bound to the shared workspace.
    expect((await B("POST", "/invites/accept", member.cookie, { token: invitationToken(a.app, member.email) })).status).toBe(200);
    expect((await B("POST", `/workspaces/${ws}/switch`, member.cookie)).status).toBe(200);
    const { token } = (await B("POST", "/account/tokens", member.cookie, { name: "b" })).json;
    const bearer = { authorization: `Bearer ${token}` };
    // Both instances have served the member in the workspace (warm, if anything were cached).
    for (const X of [A, B]) {
      expect((await X("GET", "/account", bearer)).json.workspace.id).toBe(ws);
      expect((await X("GET", "/account", member.cookie)).json.workspace.id).toBe(ws);
      expect((await X("GET", "/links", bearer)).status).toBe(200);
    }

    expect((await A("DELETE", `/workspaces/${ws}/members/${member.id}`, owner.cookie)).status).toBe(204);

    const tokenAnswer = await B("GET", "/links", bearer);
    expect(tokenAnswer.status).toBe(401);
    expect(tokenAnswer.json).toEqual({ error: "UNAUTHORIZED" });
    expect((await B("GET", "/account", member.cookie)).json.workspace.id).toBe(member.personal);
    expect((await A("GET", "/links", bearer)).status).toBe(401);
  });

  it("a member leaving on one instance: the other answers 401 to their token bound to the workspace at once", async () => {
    const [A, B] = [on(a), on(b)];
    const owner = await signedIn(b.app);
    const member = await signedIn(b.app);
    const ws = (await B("POST", "/workspaces", owner.cookie, { name: "Shared 2" })).json.id;
    await B("POST", `/workspaces/${ws}/invites`, owner.cookie, { email: member.email, role: "member" });
    await A("POST", "/invites/accept", member.cookie, { token: invitationToken(b.app, member.email) });
    const { token } = await issueToken(a.app.db, member.id, "direct", ws);
    const bearer = { authorization: `Bearer ${token}` };
    expect((await B("GET", "/links", bearer)).status).toBe(200);
    // The member leaves through A; B answers 401 at once, A too.
    expect((await A("DELETE", `/workspaces/${ws}/members/${member.id}`, member.cookie)).status).toBe(204);
    expect((await B("GET", "/links", bearer)).status).toBe(401);
    expect((await B("GET", `/workspaces/${ws}/members`, member.cookie)).status).toBe(404);
  });

  it("a token revoked on one instance answers 401 on the other at the very next request, though both had it cached", async () => {
    const [A, B] = [on(a), on(b)];
    const user = await signedIn(a.app);
    const made = (await A("POST", "/account/tokens", user.cookie, { name: "ci" })).json;
    const bearer = { authorization: `Bearer ${made.token}` };
    for (const X of [A, B, A, B]) expect((await X("GET", "/links", bearer)).status).toBe(200);
    expect((await A("DELETE", `/account/tokens/${made.record.id}`, user.cookie)).status).toBe(204);
    expect((await B("GET", "/links", bearer)).status).toBe(401);
    expect((await A("GET", "/links", bearer)).status).toBe(401);
  });

  it("a token revoked outside the service (an operator's SQL) stops on every instance within a moment (migration 0007's trigger)", async () => {
    const [A, B] = [on(a), on(b)];
    const user = await signedIn(b.app);
    const made = (await B("POST", "/account/tokens", user.cookie, { name: "ops" })).json;
    const bearer = { authorization: `Bearer ${made.token}` };
    for (const X of [A, B]) expect((await X("GET", "/links", bearer)).status).toBe(200);
    await a.app.db.update(apiTokens).set({ revokedAt: Date.now() }).where(eq(apiTokens.id, made.record.id));
    const statuses = async () => [(await A("GET", "/links", bearer)).status, (await B("GET", "/links", bearer)).status];
    expect(await pollUntil(statuses, (seen) => seen.every((s) => s === 401))).toEqual([401, 401]);
  });
});
