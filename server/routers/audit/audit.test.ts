import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditEvents } from "../../../db/schema";
import { issueToken } from "../../lib/users";
import { newId } from "../../lib/ids";
import { appRouter } from "..";
import type { Meta } from "../../trpc/init";
import { auditRuleOf } from "../../trpc/audit";
import { AUDIT_RETENTION_DAYS, pruneAuditEvents } from "../../core/audit-retention";
import { createTestServer, type TestServer } from "../../test/harness";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { createImportJob, ensureUploadsDir, prepareImport, runImportJob, uploadName } from "../imports/imports.service";
import { caller, invitationToken, person, type Person } from "../workspaces/teams.test-helper";

let t: TestServer;
let call: ReturnType<typeof caller>;
let owner: Person;
let ws: string;

const uniq = () => newId().slice(0, 8);
type Event = {
  id: string;
  at: number;
  actor: { user_id: string; email: string; token_id: string | null };
  action: string;
  target: { type: string; id: string | null };
  changes: unknown;
};

/** The team's whole log, newest first, read by its owner. */
async function log(): Promise<Event[]> {
  const r = await call("GET", "/audit?limit=100", owner.cookie);
  expect(r.status).toBe(200);
  return r.json.events;
}

/** A new member of the team who switched to it and made a token there. */
async function teammateWithToken(): Promise<{ mate: Person; tokenId: string }> {
  const mate = await person(t);
  await call("POST", `/workspaces/${ws}/invites`, owner.cookie, { email: mate.email, role: "member" });
  expect((await call("POST", "/invites/accept", mate.cookie, { token: invitationToken(t.app, mate.email) })).status).toBe(200);
  expect((await call("POST", `/workspaces/${ws}/switch`, mate.cookie)).status).toBe(200);
  const token = await call("POST", "/account/tokens", mate.cookie, { name: "mine" });
  expect(token.status).toBe(201);
  return { mate, tokenId: token.json.record.id };
}

beforeAll(async () => {
  t = await createTestServer();
  call = caller(() => t.api);
  owner = await person(t);
  ws = (await call("POST", "/workspaces", owner.cookie, { name: `Team ${uniq()}` })).json.id;
  expect((await call("POST", `/workspaces/${ws}/switch`, owner.cookie)).status).toBe(200);
});
afterAll(() => t?.close());

describe("GET /audit", () => {
  it("a link's create, change and delete are events of who did it, newest first, with the changed member names only", async () => {
    const created = await call("POST", "/links", owner.cookie, { url: "https://example.com/a", tags: ["x"], password: "hunter2hunter2" });
    expect(created.status).toBe(201);
    const id = created.json.id;
    expect((await call("PATCH", `/links/${id}`, owner.cookie, { url: "https://example.com/b" })).status).toBe(200);
    expect((await call("DELETE", `/links/${id}`, owner.cookie)).status).toBe(204);
    const mine = (await log()).filter((e) => e.target.id === id);
    expect(mine.map((e) => e.action)).toEqual(["link.deleted", "link.updated", "link.created"]);
    expect(mine[2].changes).toEqual(["password", "tags", "url"]);
    expect(mine[1].changes).toEqual(["url"]);
    expect(mine[0]).toMatchObject({ actor: { user_id: owner.id, email: owner.email, token_id: null }, target: { type: "link", id } });
    expect(mine[0].id).toMatch(/^[0-9a-z]{8}$/);
    expect(JSON.stringify(mine)).not.toContain("hunter2");
    expect(JSON.stringify(mine)).not.toContain("example.com/b");
  });

  it("an update names only the members whose value it changed; one that changes nothing is no event (links, linktrees, items, webhooks, domains, members, the workspace)", async () => {
    const link = (await call("POST", "/links", owner.cookie, { url: "https://example.com/same" })).json.id;
    const tree = (await call("POST", "/linktrees", owner.cookie, { slug: `c${uniq()}`, title: "Page" })).json.id;
    const item = (await call("POST", `/linktrees/${tree}/items`, owner.cookie, { title: "One", url: "https://example.com/1" })).json.id;
    const hook = (await call("POST", "/webhooks", owner.cookie, { url: "https://example.com/hook", events: ["link.created"] })).json.id;
    const domain = (await call("POST", "/domains", owner.cookie, { name: `same-${uniq()}.example.com` })).json.id;
    const mate = await person(t);
    await call("POST", `/workspaces/${ws}/invites`, owner.cookie, { email: mate.email, role: "member" });
    expect((await call("POST", "/invites/accept", mate.cookie, { token: invitationToken(t.app, mate.email) })).status).toBe(200);
    const name = (await call("GET", "/workspaces", owner.cookie)).json.workspaces.find((w: { id: string }) => w.id === ws).name;
    const calls: [string, string, Record<string, unknown>][] = [
      [`/links/${link}`, link, { url: "https://example.com/same", tags: ["new"] }],
      [`/links/${link}`, link, { url: "https://example.com/same", tags: ["new"] }],
      [`/linktrees/${tree}`, tree, { title: "Page", bio: "Hello" }],
      [`/linktrees/${tree}/items/${item}`, item, { title: "One", url: "https://example.com/2" }],
      [`/webhooks/${hook}`, hook, { url: "https://example.com/hook", active: false }],
      [`/domains/${domain}`, domain, { not_found_url: null }],
      [`/workspaces/${ws}/members/${mate.id}`, mate.id, { role: "member" }],
      [`/workspaces/${ws}`, ws, { name }],
    ];
    const before = (await log()).length;
    for (const [p, , body] of calls) expect((await call("PATCH", p, owner.cookie, body)).status, p).toBe(200);
    const events = (await log()).slice(0, (await log()).length - before).reverse();
    expect(events.map((e) => [e.target.id, e.changes])).toEqual([
      [link, ["tags"]],
      [tree, ["bio"]],
      [item, ["url"]],
      [hook, ["active"]],
    ]);
  });

  it("a member another one's change cleared is named too: clearing a link's expiry clears its expiration URL", async () => {
    const expiring = { url: "https://example.com/exp", expires_at: Date.now() + 86_400_000, expiration_url: "https://example.com/gone" };
    const id = (await call("POST", "/links", owner.cookie, expiring)).json.id;
    const plain = (await call("POST", "/links", owner.cookie, { url: "https://example.com/plain", expires_at: Date.now() + 86_400_000 })).json.id;
    expect((await call("PATCH", `/links/${id}`, owner.cookie, { expires_at: null })).json.expiration_url).toBeNull();
    expect((await call("PATCH", `/links/${plain}`, owner.cookie, { expires_at: null })).status).toBe(200);
    const events = await log();
    expect(events.find((e) => e.target.id === id && e.action === "link.updated")?.changes).toEqual(["expiration_url", "expires_at"]);
    expect(events.find((e) => e.target.id === plain && e.action === "link.updated")?.changes).toEqual(["expires_at"]);
  });

  it("inviting an address again revokes its pending invitation, and the log says so", async () => {
    const email = `again-${uniq()}@example.com`;
    const first = await call("POST", `/workspaces/${ws}/invites`, owner.cookie, { email, role: "member" });
    const second = await call("POST", `/workspaces/${ws}/invites`, owner.cookie, { email: email.toUpperCase(), role: "viewer" });
    expect([first.status, second.status]).toEqual([201, 201]);
    const events = (await log()).filter((e) => e.target.id === first.json.id || e.target.id === second.json.id);
    // The second call's two events share its moment: compared without their order.
    expect(events.map((e) => [e.action, e.target.id]).sort()).toEqual(
      [
        ["member.invited", second.json.id],
        ["invite.revoked", first.json.id],
        ["member.invited", first.json.id],
      ].sort(),
    );
  });

  it("deleting what is already gone is no second event: a link deleted again, a token revoked again", async () => {
    const id = (await call("POST", "/links", owner.cookie, { url: "https://example.com/twice" })).json.id;
    expect((await call("DELETE", `/links/${id}`, owner.cookie)).status).toBe(204);
    expect((await call("DELETE", `/links/${id}`, owner.cookie)).status).toBe(204);
    const { mate, tokenId } = await teammateWithToken();
    expect((await call("DELETE", `/account/tokens/${tokenId}`, mate.cookie)).status).toBe(204);
    expect((await call("DELETE", `/account/tokens/${tokenId}`, mate.cookie)).status).toBe(204);
    const events = await log();
    expect(events.filter((e) => e.target.id === id && e.action === "link.deleted")).toHaveLength(1);
    expect(events.filter((e) => e.target.id === tokenId && e.action === "token.deleted")).toHaveLength(1);
  });

  it("removing a member logs each of their tokens the removal revoked", async () => {
    const { mate, tokenId } = await teammateWithToken();
    expect((await call("DELETE", `/workspaces/${ws}/members/${mate.id}`, owner.cookie)).status).toBe(204);
    const events = await log();
    const removed = events.find((e) => e.action === "member.removed" && e.target.id === mate.id);
    const revoked = events.find((e) => e.action === "token.deleted" && e.target.id === tokenId);
    expect(removed).toMatchObject({ target: { type: "member", id: mate.id }, actor: { user_id: owner.id } });
    expect(revoked).toMatchObject({ target: { type: "token", id: tokenId }, actor: { user_id: owner.id }, changes: [] });
  });

  it("an account deleted leaves in each team's log its leaving and each of its tokens there, named by its e-mail", async () => {
    const { mate, tokenId } = await teammateWithToken();
    expect((await call("DELETE", "/account", mate.cookie)).status).toBe(204);
    const events = await log();
    const left = events.find((e) => e.action === "member.left" && e.target.id === mate.id);
    const revoked = events.find((e) => e.action === "token.deleted" && e.target.id === tokenId);
    expect(left).toMatchObject({ target: { type: "member", id: mate.id }, actor: { user_id: mate.id, email: mate.email } });
    expect(revoked).toMatchObject({ target: { type: "token", id: tokenId }, actor: { user_id: mate.id, email: mate.email } });
  });

  it("a change made with a token names the token", async () => {
    const { token, id: tokenId } = await issueToken(t.app.db, owner.id, "ci", ws).then((r) => ({ token: r.token, id: r.record.id }));
    const r = await call("POST", "/linktrees", { authorization: `Bearer ${token}` }, { slug: `a${uniq()}`, title: "Page" });
    expect(r.status).toBe(201);
    const [e] = (await log()).filter((x) => x.target.id === r.json.id);
    expect(e).toMatchObject({ action: "linktree.created", actor: { user_id: owner.id, token_id: tokenId }, target: { type: "linktree" } });
  });

  it("linktree items, domains, tokens, invitations, members and the workspace are logged", async () => {
    const tree = (await call("POST", "/linktrees", owner.cookie, { slug: `b${uniq()}`, title: "Page" })).json.id;
    const item = await call("POST", `/linktrees/${tree}/items`, owner.cookie, { title: "One", url: "https://example.com/1" });
    expect(item.status).toBe(201);
    expect((await call("PATCH", `/linktrees/${tree}/items/${item.json.id}`, owner.cookie, { title: "Uno" })).status).toBe(200);
    const domain = (await call("POST", "/domains", owner.cookie, { name: `go-${uniq()}.example.com` })).json.id;
    // No TXT record here: a verification that verifies nothing is no event (domains.test.ts has one that verifies).
    await call("POST", `/domains/${domain}/verify`, owner.cookie);
    const token = await call("POST", "/account/tokens", owner.cookie, { name: "robot" });
    expect(token.status).toBe(201);
    expect((await call("DELETE", `/account/tokens/${token.json.record.id}`, owner.cookie)).status).toBe(204);
    const mate = await person(t);
    const inv = await call("POST", `/workspaces/${ws}/invites`, owner.cookie, { email: mate.email, role: "member" });
    expect((await call("POST", "/invites/accept", mate.cookie, { token: invitationToken(t.app, mate.email) })).status).toBe(200);
    expect((await call("PATCH", `/workspaces/${ws}/members/${mate.id}`, owner.cookie, { role: "viewer" })).status).toBe(200);
    expect((await call("DELETE", `/workspaces/${ws}/members/${mate.id}`, owner.cookie)).status).toBe(204);
    expect((await call("PATCH", `/workspaces/${ws}`, owner.cookie, { name: "Renamed" })).status).toBe(200);

    const seen = (await log()).map((e) => [e.action, e.target.type, e.target.id]);
    expect(seen).toEqual(
      expect.arrayContaining([
        ["item.created", "item", item.json.id],
        ["item.updated", "item", item.json.id],
        ["domain.created", "domain", domain],
        ["token.created", "token", token.json.record.id],
        ["token.deleted", "token", token.json.record.id],
        ["member.invited", "invite", inv.json.id],
        ["member.joined", "member", mate.id],
        ["member.updated", "member", mate.id],
        ["member.removed", "member", mate.id],
        ["workspace.updated", "workspace", ws],
      ]),
    );
    const joined = (await log()).find((e) => e.action === "member.joined")!;
    expect(joined.actor.user_id).toBe(mate.id);
    const created = (await log()).find((e) => e.action === "token.created")!;
    expect(created.changes).toEqual(["name"]);
  });

  it("a webhook's creation and removal are logged, its secret never", async () => {
    const hook = await call("POST", "/webhooks", owner.cookie, { url: "https://example.com/hook", events: ["link.created"] });
    expect(hook.status).toBe(201);
    expect((await call("DELETE", `/webhooks/${hook.json.id}`, owner.cookie)).status).toBe(204);
    const mine = (await log()).filter((e) => e.target.id === hook.json.id);
    expect(mine.map((e) => [e.action, e.changes])).toEqual([
      ["webhook.deleted", []],
      ["webhook.created", ["events", "url"]],
    ]);
    if (hook.json.secret) expect(JSON.stringify(await log())).not.toContain(hook.json.secret);
  });

  it("a new workspace's log starts with its creation", async () => {
    const other = await person(t);
    const id = (await call("POST", "/workspaces", other.cookie, { name: "Fresh" })).json.id;
    await call("POST", `/workspaces/${id}/switch`, other.cookie);
    const r = await call("GET", "/audit", other.cookie);
    expect(r.json.events.map((e: Event) => [e.action, e.target])).toEqual([["workspace.created", { type: "workspace", id }]]);
  });

  it("a repeated Idempotency-Key answers again without a second event", async () => {
    const headers = { ...owner.cookie, "idempotency-key": `k-${uniq()}` };
    const first = await call("POST", "/links", headers, { url: "https://example.com/once" });
    const again = await call("POST", "/links", headers, { url: "https://example.com/once" });
    expect([first.status, again.status, again.json.id]).toEqual([201, 201, first.json.id]);
    expect((await log()).filter((e) => e.target.id === first.json.id)).toHaveLength(1);
  });

  it("an import is one event with its counts, once it has ended", async () => {
    const deps = { db: t.app.db, config: t.app.config, invalidateSlugs: t.app.invalidateSlugs, driver: t.app.database.driver };
    const file = path.join(await ensureUploadsDir(t.app.config.dataDir), uploadName("audit"));
    writeFileSync(file, "url,slug\nhttps://example.com/i1,\nhttps://example.com/i2,\nnot-a-url,\n");
    const job = await createImportJob(deps, {
      workspaceId: ws,
      userId: owner.id,
      upload: file,
      prepared: await prepareImport(file, "auto"),
      leaseOwner: "audit",
    });
    expect(await runImportJob(deps, job.id, "audit")).toBe("done");
    const events = (await log()).filter((e) => e.target.type === "import");
    expect(events).toEqual([
      expect.objectContaining({ action: "link.imported", target: { type: "import", id: job.id }, changes: { created: 2, skipped: 0, rejected: 1 } }),
    ]);
    expect(events[0].actor.user_id).toBe(owner.id);
  });

  it("a dashboard bulk action logs each link it changed, as a single edit or delete of it would be", async () => {
    const a = (await call("POST", "/links", owner.cookie, { url: "https://example.com/bulk-a" })).json.id;
    const b = (await call("POST", "/links", owner.cookie, { url: "https://example.com/bulk-b" })).json.id;
    const dashboard = t.caller(owner.cookie);
    const before = (await log()).length;
    await dashboard.link.bulkTag({ ids: [a, b], add: ["launch"] });
    await dashboard.link.bulkDelete({ ids: [a] });
    await dashboard.link.bulkExpiry({ ids: [b], expires_at: null }); // b has no expiry: nothing moves
    const events = (await log()).slice(0, (await log()).length - before);
    expect(events.map((e) => [e.action, e.target.id, e.changes]).sort()).toEqual(
      [
        ["link.deleted", a, []],
        ["link.updated", a, ["tags"]],
        ["link.updated", b, ["tags"]],
      ].sort(),
    );
  });

  it("POST /links/bulk logs each link it created as link.created with the members sent, and nothing for a rejected item", async () => {
    const before = (await log()).length;
    const r = await call("POST", "/links/bulk", owner.cookie, {
      links: [{ url: "https://example.com/b1" }, { url: "https://example.com/b2" }, { url: "nope" }],
    });
    expect(r.status).toBe(200);
    const events = (await log()).slice(0, (await log()).length - before);
    const ids: string[] = r.json.created.map((l: { id: string }) => l.id);
    expect(ids).toHaveLength(2);
    const byId = (x: Event, y: Event) => String(x.target.id).localeCompare(String(y.target.id));
    expect(events.sort(byId).map((e) => [e.action, e.target, e.changes])).toEqual(ids.sort().map((id) => ["link.created", { type: "link", id }, ["url"]]));
  });

  it("a failed change writes no event", async () => {
    const before = (await log()).length;
    expect((await call("POST", "/links", owner.cookie, { url: "not a url" })).status).toBe(400);
    expect((await call("PATCH", "/links/zzzzzzzz", owner.cookie, { url: "https://example.com/" })).status).toBe(404);
    expect((await log()).length).toBe(before);
  });

  it("members and viewers get 403 FORBIDDEN; only owners read the log", async () => {
    for (const role of ["member", "viewer"] as const) {
      const p = await person(t);
      await call("POST", `/workspaces/${ws}/invites`, owner.cookie, { email: p.email, role });
      await call("POST", "/invites/accept", p.cookie, { token: invitationToken(t.app, p.email) });
      await call("POST", `/workspaces/${ws}/switch`, p.cookie);
      const r = await call("GET", "/audit", p.cookie);
      expect([role, r.status, r.json]).toEqual([role, 403, { error: "FORBIDDEN" }]);
    }
  });

  it("pages: 50 by default, newest first, a cursor to the next page without repeats or gaps", async () => {
    const solo = await person(t);
    const rows = Array.from({ length: 120 }, (_, i) => ({
      id: `p${String(i).padStart(7, "0")}`,
      workspaceId: solo.workspaceId,
      at: 1_700_000_000_000 + Math.floor(i / 3), // ties on `at` are ordered by id
      actorUserId: solo.id,
      actorEmail: solo.email,
      actorTokenId: null,
      action: "link.created",
      targetType: "link",
      targetId: `l${i}`,
      changes: ["url"],
    }));
    await t.app.db.insert(auditEvents).values(rows);
    const first = await call("GET", "/audit", solo.cookie);
    expect(first.json.events).toHaveLength(50);
    expect(first.json.events[0].id).toBe("p0000119");
    const ids: string[] = first.json.events.map((e: Event) => e.id);
    let cursor = first.json.next_cursor;
    while (cursor) {
      const page = await call("GET", `/audit?limit=30&cursor=${cursor}`, solo.cookie);
      expect(page.status).toBe(200);
      ids.push(...page.json.events.map((e: Event) => e.id));
      cursor = page.json.next_cursor;
    }
    expect(ids).toEqual(rows.map((r) => r.id).reverse());
  });

  it("a cursor that is no next_cursor of ours, a time beyond any timestamp included: 400 naming cursor", async () => {
    const solo = await person(t);
    const cursorOf = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
    for (const cursor of ["nonsense!", cursorOf([9e99, "x"]), cursorOf([1e20, "x"]), cursorOf([-1, "x"]), cursorOf([1.5, "x"]), cursorOf(["a", "b"])]) {
      const page = await call("GET", `/audit?limit=1&cursor=${cursor}`, solo.cookie);
      expect(page.status, cursor).toBe(400);
      expect(page.json, cursor).toEqual({ error: "VALIDATION_FAILED", fields: { cursor: [expect.any(String)] } });
    }
  });

  describe("filters", () => {
    let solo: Person;
    let mate: Person;
    let soloWs: string;
    const base = { actorTokenId: null, changes: ["url"] };
    beforeAll(async () => {
      solo = await person(t);
      mate = await person(t);
      soloWs = solo.workspaceId;
      const ev = (i: number, who: Person, action: string, targetType: string, targetId: string) => ({
        ...base,
        id: `f${String(i).padStart(7, "0")}`,
        workspaceId: soloWs,
        at: 1_710_000_000_000 + i,
        actorUserId: who.id,
        actorEmail: who.email,
        action,
        targetType,
        targetId,
      });
      await t.app.db
        .insert(auditEvents)
        .values([
          ...Array.from({ length: 6 }, (_, i) => ev(i, solo, "link.created", "link", `l${i}`)),
          ev(10, mate, "link.updated", "link", "l1"),
          ev(11, mate, "domain.created", "domain", "d1"),
          ev(12, solo, "link.deleted", "link", "l1"),
        ]);
    });
    const ids = async (q: string) => {
      const r = await call("GET", `/audit?${q}`, solo.cookie);
      expect(r.status).toBe(200);
      return r.json.events.map((e: Event) => e.id);
    };

    it("actor keeps one person's events", async () => {
      expect(await ids(`actor=${mate.id}`)).toEqual(["f0000011", "f0000010"]);
    });

    it("action keeps one action's events", async () => {
      expect(await ids("action=link.deleted")).toEqual(["f0000012"]);
    });

    it("target_type and target_id keep one object's events", async () => {
      expect(await ids("target_type=link&target_id=l1")).toEqual(["f0000012", "f0000010", "f0000001"]);
      expect(await ids("target_type=domain")).toEqual(["f0000011"]);
    });

    it("filters combine, all of them must match", async () => {
      expect(await ids(`actor=${solo.id}&target_id=l1`)).toEqual(["f0000012", "f0000001"]);
    });

    it("a page's next_cursor with the same filters goes on within them", async () => {
      const first = await call("GET", `/audit?action=link.created&limit=4`, solo.cookie);
      expect(first.json.events.map((e: Event) => e.id)).toEqual(["f0000005", "f0000004", "f0000003", "f0000002"]);
      expect(await ids(`action=link.created&limit=4&cursor=${first.json.next_cursor}`)).toEqual(["f0000001", "f0000000"]);
    });

    it("the dashboard's choices list the people, actions and object types of the log", async () => {
      const choices = await t.caller(solo.cookie).audit.filterChoices();
      expect(choices.people.map((p) => p.user_id).sort()).toEqual([solo.id, mate.id].sort());
      expect(choices.actions).toEqual(["domain.created", "link.created", "link.deleted", "link.updated"]);
      expect(choices.target_types).toEqual(["domain", "link"]);
    });

    it("declares the filters in /openapi.json", async () => {
      const doc = (await call("GET", "/openapi.json")).json;
      const names = doc.paths["/audit"].get.parameters.map((p: { name: string }) => p.name);
      expect(names).toEqual(expect.arrayContaining(["limit", "cursor", "actor", "action", "target_type", "target_id"]));
    });
  });

  it.each([
    ["limit=0"],
    ["limit=101"],
    ["limit=x"],
    ["cursor=nope!"],
    ["cursor=bm9wZQ"],
    ["other=1"],
    ["actor=Not-An-Id"],
    ["action=created"],
    ["action=link.CREATED"],
    ["target_type=link!"],
    ["target_id=a%20b"],
  ])("a bad parameter answers 400 naming it: %s", async (q) => {
    const r = await call("GET", `/audit?${q}`, owner.cookie);
    expect(r.status).toBe(400);
    expect(r.json.error).toBe("VALIDATION_FAILED");
    expect(Object.keys(r.json.fields)).toEqual([q.split("=")[0]]);
  });

  it("events older than 400 days are pruned", async () => {
    const now = Date.now();
    const day = 24 * 3600 * 1000;
    const base = {
      workspaceId: ws,
      actorUserId: owner.id,
      actorEmail: owner.email,
      actorTokenId: null,
      action: "link.created",
      targetType: "link",
      targetId: null,
      changes: [],
    };
    await t.app.db.insert(auditEvents).values([
      { ...base, id: "old00001", at: now - (AUDIT_RETENTION_DAYS + 1) * day },
      { ...base, id: "new00001", at: now - (AUDIT_RETENTION_DAYS - 1) * day },
    ]);
    expect(await pruneAuditEvents(t.app.db, now)).toBeGreaterThanOrEqual(1);
    const ids = (await log()).map((e) => e.id);
    expect(ids).toContain("new00001");
    expect(ids).not.toContain("old00001");
  });
});

describe("every mutation has an audit decision", () => {
  type Proc = { _def: { meta?: Meta; type?: string; mutation?: boolean } };
  it("each mutation is logged by its own rule, by its REST path, or says it changes nothing of a workspace", () => {
    const undecided = Object.entries((appRouter._def as unknown as { procedures: Record<string, Proc> }).procedures)
      .filter(([, p]) => p._def.type === "mutation" || p._def.mutation)
      .filter(([path, p]) => auditRuleOf(path, p._def.meta) === undefined)
      .map(([path]) => path);
    expect(undecided).toEqual([]);
  });
});
