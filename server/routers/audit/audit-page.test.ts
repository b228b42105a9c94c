import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditEvents } from "../../../db/schema";
import { createTestServer, http, type TestServer } from "../../test/harness";
import { caller, invitationToken, person, type Person } from "../workspaces/teams.test-helper";

/** The dashboard's audit log page and the viewer role's marks on the team pages. */
let t: TestServer;
let call: ReturnType<typeof caller>;
let owner: Person;
let ws: string;
beforeAll(async () => {
  t = await createTestServer({}, { remix: true });
  call = caller(() => t.api);
  owner = await person(t);
  ws = (await call("POST", "/workspaces", owner.cookie, { name: "Audited" })).json.id;
  await call("POST", `/workspaces/${ws}/switch`, owner.cookie);
});
afterAll(() => t?.close());

const page = (path: string, who: Person) => http(`${t.appUrl}${path}`, { headers: who.cookie });

describe("the audit log page", () => {
  it("shows an owner the workspace's events, newest first, with who and which fields", async () => {
    const link = (await call("POST", "/links", owner.cookie, { url: "https://example.com/page", tags: ["a"] })).json.id;
    const r = await page("/settings/audit", owner);
    expect(r.status).toBe(200);
    expect(r.text).toContain("Audit log");
    expect(r.text).toContain(owner.email);
    expect(r.text).toContain("created a link");
    expect(r.text).toContain(link);
    expect(r.text).toContain("tags, url");
    expect(r.text.indexOf("created a link")).toBeLessThan(r.text.indexOf("created a workspace"));
  });

  it("words each event with its article: an API token created and revoked", async () => {
    const token = await call("POST", "/account/tokens", owner.cookie, { name: "worded" });
    expect((await call("DELETE", `/account/tokens/${token.json.record.id}`, owner.cookie)).status).toBe(204);
    const r = await page("/settings/audit", owner);
    expect(r.text).toContain("created an API token");
    expect(r.text).toContain("revoked an API token");
    expect(r.text).not.toContain("a API");
  });

  it("filters by the address's person, action and object, and its page links keep them", async () => {
    const rows = Array.from({ length: 55 }, (_, i) => ({
      id: `g${String(i).padStart(7, "0")}`,
      workspaceId: ws,
      at: 1_600_000_000_000 + i,
      actorUserId: owner.id,
      actorEmail: owner.email,
      actorTokenId: null,
      action: "domain.created",
      targetType: "domain",
      targetId: `d${i}`,
      changes: ["name"],
    }));
    await t.app.db.insert(auditEvents).values(rows);
    const r = await page(`/settings/audit?action=domain.created&target_type=domain&actor=${owner.id}`, owner);
    expect(r.status).toBe(200);
    expect(r.text.match(/data-testid="audit-row"/g)).toHaveLength(50);
    expect(r.text).not.toContain("created a link");
    const older = r.text.match(/href="(\/settings\/audit\?[^"]*cursor=[^"]*)"/)?.[1].replaceAll("&amp;", "&");
    expect(older).toBeDefined();
    const q = new URL(older!, t.appUrl).searchParams;
    expect([q.get("actor"), q.get("action"), q.get("target_type")]).toEqual([owner.id, "domain.created", "domain"]);
    const next = await page(older!, owner);
    expect(next.text.match(/data-testid="audit-row"/g)).toHaveLength(5);
    expect(next.text).toContain('<option value="domain.created" selected="">domain.created</option>');
  });

  it("a bulk change logged by an earlier release (one event with its counts) reads as the field and the number of links it changed", async () => {
    await t.app.db.insert(auditEvents).values({
      id: "bulkold1",
      workspaceId: ws,
      at: Date.now(),
      actorUserId: owner.id,
      actorEmail: owner.email,
      action: "link.bulk_updated",
      targetType: "link",
      targetId: null,
      changes: { tags: 2 },
    });
    const r = await page("/settings/audit?action=link.bulk_updated", owner);
    expect(r.text).toContain("changed several links");
    expect(r.text).toContain("tags on 2 links");
  });

  it("a malformed filter marks its field and shows no events, never an error page", async () => {
    const r = await page("/settings/audit?target_id=a%20b", owner);
    expect(r.status).toBe(200);
    expect(r.text).toContain('aria-invalid="true"');
    expect(r.text).not.toContain('data-testid="audit-row"');
  });

  it("tells a member or viewer that only owners can read it, and shows no events", async () => {
    const viewer = await person(t);
    await call("POST", `/workspaces/${ws}/invites`, owner.cookie, { email: viewer.email, role: "viewer" });
    // The invitation's page says what a viewer may do, not what a member may.
    const invitation = await page(`/invites/${invitationToken(t.app, viewer.email)}`, viewer);
    expect(invitation.text).toContain("and change none of them");
    expect(invitation.text).not.toContain("Members see and edit");
    await call("POST", "/invites/accept", viewer.cookie, { token: invitationToken(t.app, viewer.email) });
    await call("POST", `/workspaces/${ws}/switch`, viewer.cookie);
    const r = await page("/settings/audit", viewer);
    expect(r.status).toBe(200);
    expect(r.text).toContain("Only owners of this workspace can read its audit log.");
    expect(r.text).not.toContain('data-testid="audit-row"');
    // The layout says what a viewer may do, and the tokens page does not offer to make one.
    expect(r.text).toContain('data-testid="viewer-note"');
    const tokens = await page("/settings/tokens", viewer);
    expect(tokens.text).toContain('data-testid="viewer-rule"');
    // The pages leave out the forms a viewer's write would only be refused by; an owner has them.
    const forms: [string, string][] = [
      ["/links", 'href="/links/new"'],
      ["/linktrees", 'aria-labelledby="new-tree"'],
      ["/domains", 'id="new-domain"'],
      ["/webhooks", 'value="add"'],
    ];
    for (const [path, form] of forms) {
      expect((await page(path, owner)).text, `${path} for its owner`).toContain(form);
      expect((await page(path, viewer)).text, `${path} for a viewer`).not.toContain(form);
    }
    // The links list offers a viewer no bulk selection, no edit and no archive on its links.
    const made = await call("POST", "/links", owner.cookie, { url: "https://example.com/viewer-sees" });
    expect(made.status).toBe(201);
    for (const [mark, what] of [
      ["data-row-select", "the row's checkbox"],
      [`aria-label="Edit ${made.json.slug}"`, "Edit"],
      [`aria-label="Archive ${made.json.slug}"`, "Archive"],
    ]) {
      expect((await page("/links", owner)).text, `${what} for its owner`).toContain(mark);
      expect((await page("/links", viewer)).text, `${what} for a viewer`).not.toContain(mark);
    }
  });

  it("the members page offers Viewer in its role pickers", async () => {
    const r = await page(`/workspaces/${ws}`, owner);
    expect(r.status).toBe(200);
    expect(r.text).toContain('<option value="viewer">Viewer</option>');
  });
});
