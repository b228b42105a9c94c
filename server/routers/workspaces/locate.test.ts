import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memberships } from "../../../db/schema";
import { createTestServer, http, type TestServer } from "../../test/harness";
import { signIn, uniqueEmail } from "../auth/sign-in.test-helper";

// A teammate's link opened from another workspace: the dashboard asks which of the caller's
// workspaces holds it and switches there, for that session only: a new sign-in starts in the personal one.
let t: TestServer;
beforeAll(async () => void (t = await createTestServer()));
afterAll(() => t?.close());

type Who = { headers: Record<string, string>; account: { user: { id: string }; workspace: { id: string } } };
const api = (method: string, path: string, who: Who, json?: unknown) => http(`${t.api}${path}`, { method, headers: who.headers, json });
const as = async (email: string): Promise<Who> => {
  const s = await signIn(t, email);
  return { headers: s.headers, account: s.account as Who["account"] };
};

describe("workspace.locate and the workspace last used", () => {
  let alice: Who, bob: Who, carol: Who;
  let team = "";
  let linkId = "";
  const bobEmail = uniqueEmail("bob");

  beforeAll(async () => {
    alice = await as(uniqueEmail("alice"));
    bob = await as(bobEmail);
    carol = await as(uniqueEmail("carol"));
    const ws = await api("POST", "/workspaces", alice, { name: "Acme" });
    expect(ws.status, ws.text).toBe(201);
    team = ws.json.id;
    await t.app.db.insert(memberships).values({ workspaceId: team, userId: bob.account.user.id, role: "member", joinedAt: Date.now() });
    expect((await api("POST", `/workspaces/${team}/switch`, alice)).status).toBe(200);
    const link = await api("POST", "/links", alice, { url: "https://dest.example/team" });
    expect(link.status, link.text).toBe(201);
    linkId = link.json.id;
  });

  it("locate answers the workspace of an object a member can open from another workspace", async () => {
    expect((await api("GET", `/links/${linkId}`, bob)).status).toBe(404); // bob's session is in his personal workspace
    const found = await api("GET", `/workspaces/locate?type=link&id=${linkId}`, bob);
    expect(found.status, found.text).toBe(200);
    expect(found.json).toEqual({ workspace_id: team, name: "Acme", personal: false });
  });

  it("locate finds linktrees and domains of the caller's workspaces too", async () => {
    const tree = await api("POST", "/linktrees", alice, { slug: `tree-${Date.now().toString(36)}`, title: "Team tree" });
    expect(tree.status, tree.text).toBe(201);
    const domain = await api("POST", "/domains", alice, { name: `go-${Date.now().toString(36)}.acme.example` });
    expect(domain.status, domain.text).toBe(201);
    for (const [type, id] of [
      ["linktree", tree.json.id],
      ["domain", domain.json.id],
    ]) {
      const r = await api("GET", `/workspaces/locate?type=${type}&id=${id}`, bob);
      expect([type, r.status, r.json.workspace_id]).toEqual([type, 200, team]);
      expect((await api("GET", `/workspaces/locate?type=${type}&id=${id}`, carol)).status).toBe(404);
    }
  });

  it("locate tells nothing to someone who is not a member: 404, as for an unknown id", async () => {
    const r = await api("GET", `/workspaces/locate?type=link&id=${linkId}`, carol);
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ error: "NOT_FOUND" });
    expect((await api("GET", "/workspaces/locate?type=link&id=nosuch99", bob)).status).toBe(404);
  });

  it("locate refuses an unknown type with 400 naming type", async () => {
    const r = await api("GET", `/workspaces/locate?type=folder&id=${linkId}`, bob);
    expect(r.status).toBe(400);
    expect(r.json.error).toBe("VALIDATION_FAILED");
    expect(Object.keys(r.json.fields)).toEqual(["type"]);
  });

  it("a switch is the session's only: the next sign-in starts in the personal workspace", async () => {
    expect((await api("POST", `/workspaces/${team}/switch`, bob)).status).toBe(200);
    expect((await api("GET", "/account", bob)).json.workspace.id).toBe(team);
    const again = await as(bobEmail);
    expect(again.account.workspace.id).toBe(bob.account.workspace.id);
    expect((await api("GET", "/account", again)).json.workspace.id).toBe(bob.account.workspace.id);
    // The switched session stays where it was.
    expect((await api("GET", "/account", bob)).json.workspace.id).toBe(team);
  });
});
