import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../lib/ids";
import { createTestServer, http, type TestServer } from "../../test/harness";
import { caller, invitationToken, person, type Person } from "./teams.test-helper";

/**
 * Links, linktrees, domains and analytics belong to the workspace (docs/teams-and-domains.md): every member
 * sees and edits all of them, and nothing of one workspace is visible from another, even to a
 * user who belongs to both. Tokens act in their own workspace only.
 */
let t: TestServer;
let call: ReturnType<typeof caller>;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const uniq = () => newId().slice(0, 8);
const BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";

/** Uma belongs to her personal workspace and to Team; Vic to his personal workspace and to Team. */
let uma: Person, vic: Person, team: string;
/** Uma's tokens: in her personal workspace (made by the harness) and in Team. */
let umaPersonal: Record<string, string>, umaTeam: Record<string, string>, vicTeam: Record<string, string>;
let personalLink: { id: string; slug: string }, teamLink: { id: string; slug: string };
let personalTree: string, teamTree: string;

async function tokenIn(who: Person, ws: string) {
  await call("POST", `/workspaces/${ws}/switch`, who.cookie);
  const r = await call("POST", "/account/tokens", who.cookie, { name: ws });
  expect(r.status).toBe(201);
  return bearer(r.json.token);
}

beforeAll(async () => {
  t = await createTestServer();
  call = caller(() => t.api);
  [uma, vic] = [await person(t), await person(t)];
  team = (await call("POST", "/workspaces", uma.cookie, { name: "Team" })).json.id;
  await call("POST", `/workspaces/${team}/invites`, uma.cookie, { email: vic.email, role: "member" });
  expect((await call("POST", "/invites/accept", vic.cookie, { token: invitationToken(t.app, vic.email) })).status).toBe(200);
  umaPersonal = bearer(uma.token);
  umaTeam = await tokenIn(uma, team);
  vicTeam = await tokenIn(vic, team);
  personalLink = (await call("POST", "/links", umaPersonal, { url: "https://example.com/personal", slug: `p-${uniq()}` })).json;
  teamLink = (await call("POST", "/links", umaTeam, { url: "https://example.com/team", slug: `t-${uniq()}` })).json;
  personalTree = (await call("POST", "/linktrees", umaPersonal, { slug: `pt-${uniq()}`, title: "Personal" })).json.id;
  teamTree = (await call("POST", "/linktrees", umaTeam, { slug: `tt-${uniq()}`, title: "Team" })).json.id;
  // One counted visit to each (a browser's User-Agent), written by the click recorder.
  for (const l of [personalLink, teamLink]) expect((await http(`${t.redirect}/${l.slug}`, { headers: { "user-agent": BROWSER } })).status).toBe(301);
  await t.app.clicks!.flush();
});
afterAll(() => t?.close());

const ids = (xs: { id: string }[]) => xs.map((x) => x.id);

describe("isolation between workspaces", () => {
  it("links: each workspace lists only its own; another workspace's link is 404 for read, edit, delete and analytics", async () => {
    expect(ids((await call("GET", "/links", umaPersonal)).json.links)).toEqual([personalLink.id]);
    expect(ids((await call("GET", "/links", umaTeam)).json.links)).toEqual([teamLink.id]);
    for (const [who, foreign] of [
      [umaTeam, personalLink.id],
      [vicTeam, personalLink.id],
      [umaPersonal, teamLink.id],
      [bearer(vic.token), teamLink.id],
    ] as const) {
      expect((await call("GET", `/links/${foreign}`, who)).status).toBe(404);
      expect((await call("PATCH", `/links/${foreign}`, who, { url: "https://example.com/stolen" })).json).toEqual({ error: "NOT_FOUND" });
      expect((await call("GET", `/links/${foreign}/analytics`, who)).status).toBe(404);
      expect((await call("DELETE", `/links/${foreign}`, who)).status).toBe(404);
    }
    expect((await call("GET", `/links/${personalLink.id}`, umaPersonal)).json.url).toBe("https://example.com/personal");
  });

  it("links: every member sees and edits all of the workspace's links", async () => {
    expect(ids((await call("GET", "/links", vicTeam)).json.links)).toEqual([teamLink.id]);
    const r = await call("PATCH", `/links/${teamLink.id}`, vicTeam, { tags: ["edited-by-vic"] });
    expect(r.status).toBe(200);
    expect((await call("GET", `/links/${teamLink.id}`, umaTeam)).json.tags).toEqual(["edited-by-vic"]);
  });

  it("linktrees: each workspace lists only its own; another workspace's is 404 for read, edit, items, analytics and delete", async () => {
    expect(ids((await call("GET", "/linktrees", umaPersonal)).json.linktrees)).toEqual([personalTree]);
    expect(ids((await call("GET", "/linktrees", vicTeam)).json.linktrees)).toEqual([teamTree]);
    for (const [who, foreign] of [
      [umaTeam, personalTree],
      [umaPersonal, teamTree],
      [bearer(vic.token), teamTree],
    ] as const) {
      expect((await call("GET", `/linktrees/${foreign}`, who)).status).toBe(404);
      expect((await call("PATCH", `/linktrees/${foreign}`, who, { title: "Stolen" })).status).toBe(404);
      expect((await call("POST", `/linktrees/${foreign}/items`, who, { title: "x", url: "https://example.com/" })).status).toBe(404);
      expect((await call("GET", `/linktrees/${foreign}/analytics`, who)).status).toBe(404);
      expect((await call("DELETE", `/linktrees/${foreign}`, who)).status).toBe(404);
    }
    expect((await call("PATCH", `/linktrees/${teamTree}`, vicTeam, { title: "Team page" })).json.title).toBe("Team page");
  });

  it("analytics: GET /analytics covers the workspace's links only, and link_id of another workspace is 404", async () => {
    const team = await call("GET", "/analytics?from=0", vicTeam);
    expect(team.json.count).toBe(1);
    expect(team.json.clicks.map((c: { link_id: string }) => c.link_id)).toEqual([teamLink.id]);
    const personal = await call("GET", "/analytics?from=0", umaPersonal);
    expect(personal.json.clicks.map((c: { link_id: string }) => c.link_id)).toEqual([personalLink.id]);
    expect((await call("GET", `/analytics?link_id=${personalLink.id}`, umaTeam)).status).toBe(404);
    expect((await call("GET", `/analytics?link_id=${teamLink.id}`, bearer(vic.token))).status).toBe(404);
    expect((await call("GET", `/links/${teamLink.id}/analytics`, vicTeam)).json.count).toBe(1);
  });

  it("tokens: a token acts only in the workspace it is bound to, and is its user's alone", async () => {
    expect((await call("GET", "/account", umaTeam)).json.workspace.id).toBe(team);
    expect((await call("GET", "/account", umaPersonal)).json.workspace.id).toBe(uma.workspaceId);
    // Created through a token: the token's workspace.
    const made = await call("POST", "/links", umaPersonal, { url: "https://example.com/made" });
    expect(ids((await call("GET", "/links", vicTeam)).json.links)).not.toContain(made.json.id);
    // Vic shares a workspace with Uma but neither sees nor revokes her tokens.
    const vicList = (await call("GET", "/account/tokens", vic.cookie)).json.tokens;
    const umaList = (await call("GET", "/account/tokens", uma.cookie)).json.tokens;
    expect(ids(vicList).some((id) => ids(umaList).includes(id))).toBe(false);
    for (const id of ids(umaList)) expect((await call("DELETE", `/account/tokens/${id}`, vic.cookie)).status).toBe(404);
    expect((await call("GET", "/links", umaTeam)).status).toBe(200);
  });

  it("the dashboard's token list names each token's workspace", async () => {
    const { tokens } = await t.caller(uma.cookie).token.listWithWorkspace();
    expect(tokens.map((x) => x.workspace)).toEqual(
      expect.arrayContaining([
        { id: uma.workspaceId, name: null, personal: true },
        { id: team, name: "Team", personal: false },
      ]),
    );
  });
});
