import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhookDeliveries, webhooks } from "../../../db/schema";
import { issueToken } from "../../lib/users";
import { createTestServer, http, type TestServer, type TestUser } from "../../test/harness";

// The webhooks API on a server that keeps endpoints off private addresses (the default). Deliveries
// themselves: server/core/webhook-worker.test.ts and events.test.ts beside this file.
let t: TestServer;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  t = await createTestServer();
  alice = await t.user({ plan: "pro" });
  bob = await t.user({ plan: "pro" });
});
afterAll(() => t?.close());

type Webhook = { id: string; url: string; events: string[]; active: boolean; created_at: number; disabled_reason: string | null; secret?: string };
const req = (method: string, path: string, json?: unknown, auth: Record<string, string> = alice.auth) =>
  http(`${t.api}${path}`, { method, json, headers: auth });
// A public host that does not resolve here: accepted (each delivery checks the address again).
const HOOK = "https://hooks.example.com/links";
const addWebhook = async (json: Record<string, unknown> = {}, auth = alice.auth): Promise<Webhook> => {
  const r = await req("POST", "/webhooks", { url: HOOK, events: ["link.created"], ...json }, auth);
  expect(r.status, r.text).toBe(201);
  return r.json;
};
const clearWebhooks = (workspaceId: string) => t.app.db.delete(webhooks).where(eq(webhooks.workspaceId, workspaceId));

describe("POST /webhooks", () => {
  it("answers 201 with the webhook and its secret: whsec_ and the base64 of 24 random bytes", async () => {
    const before = Date.now();
    const r = await req("POST", "/webhooks", { url: HOOK, events: ["link.created", "link.clicked"] });
    expect(r.status).toBe(201);
    expect(r.json).toEqual({
      id: expect.stringMatching(/^[0-9a-z]{8}$/),
      url: HOOK,
      events: ["link.created", "link.clicked"],
      active: true,
      created_at: expect.any(Number),
      disabled_reason: null,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/),
    });
    expect(Buffer.from(r.json.secret.slice(6), "base64")).toHaveLength(24);
    expect(r.json.created_at).toBeGreaterThanOrEqual(before);
    expect((await addWebhook()).secret).not.toBe(r.json.secret);
  });

  it("the secret is shown only in the creation's answer: never by the list", async () => {
    const w = await addWebhook();
    const list = await req("GET", "/webhooks");
    expect(list.status).toBe(200);
    const listed = list.json.webhooks.find((x: Webhook) => x.id === w.id);
    expect(listed).toEqual({ id: w.id, url: w.url, events: w.events, active: true, created_at: w.created_at, disabled_reason: null });
    expect(list.text).not.toContain(w.secret!);
  });

  it("takes `active: false` to create an endpoint that is off", async () => {
    expect((await addWebhook({ active: false })).active).toBe(false);
  });

  it("active must be a JSON boolean: a string, a number or null answers 400 naming active, nothing stored", async () => {
    const before = (await req("GET", "/webhooks")).json.webhooks.length;
    for (const active of ["false", "true", "0", 1, 0, null]) {
      const r = await req("POST", "/webhooks", { url: HOOK, events: ["link.created"], active });
      expect(r.status, `${JSON.stringify(active)}: ${r.text}`).toBe(400);
      expect(Object.keys(r.json.fields), JSON.stringify(active)).toEqual(["active"]);
    }
    expect((await req("GET", "/webhooks")).json.webhooks.length).toBe(before);
  });

  it("events must be a non-empty subset of the six event names: 400 VALIDATION_FAILED naming events, nothing stored", async () => {
    const before = (await req("GET", "/webhooks")).json.webhooks.length;
    for (const events of [[], ["link.exploded"], "link.created", [1]]) {
      const r = await req("POST", "/webhooks", { url: HOOK, events });
      expect(r.status, JSON.stringify(events)).toBe(400);
      expect(r.json.error).toBe("VALIDATION_FAILED");
      expect(Object.keys(r.json.fields)).toEqual(["events"]);
    }
    expect((await req("GET", "/webhooks")).json.webhooks).toHaveLength(before);
  });

  it("all six event names are accepted, and a name sent twice is kept once", async () => {
    const all = ["link.created", "link.updated", "link.deleted", "link.clicked", "link.broken", "linktree.viewed"];
    expect((await addWebhook({ events: all })).events).toEqual(all);
    expect((await addWebhook({ events: ["link.deleted", "link.deleted"] })).events).toEqual(["link.deleted"]);
  });

  it("a missing url or events, or an unknown member, is 400 VALIDATION_FAILED naming each", async () => {
    const r = await req("POST", "/webhooks", { secret: "mine" });
    expect(r.status).toBe(400);
    expect(Object.keys(r.json.fields).sort()).toEqual(["events", "secret", "url"]);
  });

  it("url must be https: http, ftp and text that is not a URL answer 400 naming url", async () => {
    for (const url of ["http://hooks.example.com/x", "ftp://hooks.example.com/x", "not a url"]) {
      const r = await req("POST", "/webhooks", { url, events: ["link.created"] });
      expect(r.status, url).toBe(400);
      expect(r.json.error).toBe("VALIDATION_FAILED");
      expect(Object.keys(r.json.fields)).toEqual(["url"]);
    }
  });

  it("url must not be on a loopback, private, link-local, multicast or unspecified address: 400 naming url", async () => {
    for (const url of [
      "https://127.0.0.1/hook",
      "https://localhost/hook",
      "https://localhost./hook", // the root label's dot changes no name
      "https://api.localhost./hook",
      "https://[::1]/hook",
      "https://10.1.2.3/hook",
      "https://192.168.0.10/hook",
      "https://172.16.5.5/hook",
      "https://169.254.169.254/latest/meta-data",
      "https://[fe80::1]/hook",
      "https://[fc00::1]/hook",
      "https://224.0.0.1/hook",
      "https://0.0.0.0/hook",
      "https://[::ffff:127.0.0.1]/hook",
      "https://2130706433/hook", // 127.0.0.1 as one number
    ]) {
      const r = await req("POST", "/webhooks", { url, events: ["link.created"] });
      expect(r.status, url).toBe(400);
      expect(r.json.fields.url, url).toBeDefined();
    }
  });

  it("a public address is accepted", async () => {
    expect((await addWebhook({ url: "https://93.184.215.14/hook" })).url).toBe("https://93.184.215.14/hook");
  });

  it("at most 10 webhooks per workspace: the 11th answers 409 WEBHOOK_LIMIT and is not stored", async () => {
    const user = await t.user({ plan: "pro" });
    for (let i = 0; i < 10; i++) await addWebhook({}, user.auth);
    const r = await req("POST", "/webhooks", { url: HOOK, events: ["link.created"] }, user.auth);
    expect(r.status).toBe(409);
    expect(r.json).toEqual({ error: "WEBHOOK_LIMIT" });
    expect((await req("GET", "/webhooks", undefined, user.auth)).json.webhooks).toHaveLength(10);
    // A removed one frees its place.
    const first = (await req("GET", "/webhooks", undefined, user.auth)).json.webhooks[0];
    expect((await req("DELETE", `/webhooks/${first.id}`, undefined, user.auth)).status).toBe(204);
    await addWebhook({}, user.auth);
  });

  it("without a credential: 401", async () => {
    expect((await http(`${t.api}/webhooks`, { method: "POST", json: { url: HOOK, events: ["link.created"] } })).status).toBe(401);
    expect((await http(`${t.api}/webhooks`)).status).toBe(401);
  });
});

describe("GET /webhooks", () => {
  it("lists the workspace's webhooks only, oldest first", async () => {
    await clearWebhooks(alice.workspaceId);
    const a = await addWebhook();
    const b = await addWebhook({ events: ["link.deleted"] });
    await addWebhook({}, bob.auth);
    const r = await req("GET", "/webhooks");
    expect(r.status).toBe(200);
    expect(r.json.webhooks.map((w: Webhook) => w.id)).toEqual([a.id, b.id]);
  });
});

describe("PATCH /webhooks/{id}", () => {
  it("changes url, events and active, and answers the webhook", async () => {
    const w = await addWebhook();
    const r = await req("PATCH", `/webhooks/${w.id}`, { url: "https://other.example.com/in", events: ["link.updated"], active: false });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ ...w, secret: undefined, url: "https://other.example.com/in", events: ["link.updated"], active: false });
    expect(r.json.secret).toBeUndefined();
    expect((await req("GET", "/webhooks")).json.webhooks.find((x: Webhook) => x.id === w.id).events).toEqual(["link.updated"]);
  });

  it("turning an endpoint off gives up its pending deliveries; turning it on clears disabled_reason", async () => {
    const w = await addWebhook();
    const now = Date.now();
    await t.app.db.insert(webhookDeliveries).values({
      id: `msg_p${now}`,
      webhookId: w.id,
      workspaceId: alice.workspaceId,
      event: "link.created",
      payload: {},
      nextAttemptAt: now + 60_000,
      createdAt: now,
    });
    await t.app.db.update(webhooks).set({ disabledReason: "every delivery failed for 3 days" }).where(eq(webhooks.id, w.id));
    await req("PATCH", `/webhooks/${w.id}`, { active: false });
    const [d] = await t.app.db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, `msg_p${now}`));
    expect(d.status).toBe("failed");
    expect(d.nextAttemptAt).toBeNull();
    const on = await req("PATCH", `/webhooks/${w.id}`, { active: true });
    expect(on.json).toMatchObject({ active: true, disabled_reason: null });
  });

  it("the same rules as creation: bad url or events answer 400 naming them, and nothing changes", async () => {
    const w = await addWebhook();
    const r = await req("PATCH", `/webhooks/${w.id}`, { url: "https://127.0.0.1/x", events: [] });
    expect(r.status).toBe(400);
    expect(Object.keys(r.json.fields).sort()).toEqual(["events", "url"]);
    const stored = (await req("GET", "/webhooks")).json.webhooks.find((x: Webhook) => x.id === w.id);
    expect(stored).toMatchObject({ url: HOOK, events: ["link.created"] });
  });

  it('active must be a JSON boolean here too: "false" answers 400 naming active, and the endpoint stays on', async () => {
    const w = await addWebhook();
    for (const active of ["false", 0, null]) {
      const r = await req("PATCH", `/webhooks/${w.id}`, { active });
      expect(r.status, `${JSON.stringify(active)}: ${r.text}`).toBe(400);
      expect(Object.keys(r.json.fields)).toEqual(["active"]);
    }
    expect((await req("GET", "/webhooks")).json.webhooks.find((x: Webhook) => x.id === w.id).active).toBe(true);
  });

  it("an empty body is 400 VALIDATION_FAILED", async () => {
    const w = await addWebhook();
    expect((await req("PATCH", `/webhooks/${w.id}`, {})).status).toBe(400);
  });

  it("another workspace's webhook, or an unknown id, answers 404 NOT_FOUND and changes nothing", async () => {
    const w = await addWebhook({}, bob.auth);
    for (const id of [w.id, "zzzzzzzz", "not-an-id"]) {
      const r = await req("PATCH", `/webhooks/${id}`, { active: false });
      expect(r.status, id).toBe(404);
      expect(r.json).toEqual({ error: "NOT_FOUND" });
    }
    expect((await req("GET", "/webhooks", undefined, bob.auth)).json.webhooks.find((x: Webhook) => x.id === w.id).active).toBe(true);
  });
});

describe("DELETE /webhooks/{id}", () => {
  it("answers 204, removes the webhook and its deliveries; again: 404", async () => {
    const w = await addWebhook();
    const now = Date.now();
    await t.app.db
      .insert(webhookDeliveries)
      .values({ id: `msg_d${now}`, webhookId: w.id, workspaceId: alice.workspaceId, event: "link.created", payload: {}, nextAttemptAt: now, createdAt: now });
    const r = await req("DELETE", `/webhooks/${w.id}`);
    expect(r.status).toBe(204);
    expect(r.text).toBe("");
    expect((await req("GET", "/webhooks")).json.webhooks.find((x: Webhook) => x.id === w.id)).toBeUndefined();
    expect(await t.app.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, w.id))).toEqual([]);
    expect((await req("DELETE", `/webhooks/${w.id}`)).status).toBe(404);
  });

  it("another workspace's webhook answers 404 and stays", async () => {
    const w = await addWebhook({}, bob.auth);
    expect((await req("DELETE", `/webhooks/${w.id}`)).status).toBe(404);
    expect((await req("GET", "/webhooks", undefined, bob.auth)).json.webhooks.map((x: Webhook) => x.id)).toContain(w.id);
  });
});

describe("GET /webhooks/{id}/deliveries and POST /webhooks/{id}/test", () => {
  it("a test answers 202 and queues a ping, listed as a pending delivery with its fields", async () => {
    const w = await addWebhook();
    const r = await req("POST", `/webhooks/${w.id}/test`);
    expect(r.status).toBe(202);
    const list = await req("GET", `/webhooks/${w.id}/deliveries`);
    expect(list.status).toBe(200);
    expect(list.json.deliveries).toEqual([
      {
        id: expect.stringMatching(/^msg_[0-9a-f]{32}$/),
        event: "ping",
        status: "pending",
        attempts: 0,
        response_status: null,
        last_attempt_at: null,
        next_attempt_at: expect.any(Number),
      },
    ]);
  });

  it("deliveries are the newest 100, newest first", async () => {
    const w = await addWebhook();
    const base = Date.now() - 1000_000;
    await t.app.db.insert(webhookDeliveries).values(
      Array.from({ length: 105 }, (_, i) => ({
        id: `msg_n${String(i).padStart(3, "0")}${w.id}`,
        webhookId: w.id,
        workspaceId: alice.workspaceId,
        event: "link.created",
        payload: {},
        status: "delivered" as const,
        attempts: 1,
        responseStatus: 200,
        lastAttemptAt: base + i,
        createdAt: base + i,
      })),
    );
    const list = (await req("GET", `/webhooks/${w.id}/deliveries`)).json.deliveries;
    expect(list).toHaveLength(100);
    expect(list[0]).toEqual({
      id: `msg_n104${w.id}`,
      event: "link.created",
      status: "delivered",
      attempts: 1,
      response_status: 200,
      last_attempt_at: base + 104,
      next_attempt_at: null,
    });
    expect(list[99].id).toBe(`msg_n005${w.id}`);
  });

  it("another workspace's webhook: 404 for both, and no ping is queued", async () => {
    const w = await addWebhook({}, bob.auth);
    expect((await req("GET", `/webhooks/${w.id}/deliveries`)).status).toBe(404);
    expect((await req("POST", `/webhooks/${w.id}/test`)).status).toBe(404);
    expect((await req("GET", `/webhooks/${w.id}/deliveries`, undefined, bob.auth)).json.deliveries).toEqual([]);
  });
});

describe("scopes", () => {
  it("webhooks:read lists but cannot write (403 INSUFFICIENT_SCOPE, nothing created); webhooks:write can", async () => {
    const { token: read } = await issueToken(t.app.db, alice.id, "read", undefined, ["webhooks:read"]);
    const { token: write } = await issueToken(t.app.db, alice.id, "write", undefined, ["webhooks:write"]);
    const { token: links } = await issueToken(t.app.db, alice.id, "links", undefined, ["links:read"]);
    const as = (token: string) => ({ authorization: `Bearer ${token}` });
    const before = (await req("GET", "/webhooks")).json.webhooks.length;
    expect((await req("GET", "/webhooks", undefined, as(read))).status).toBe(200);
    const refused = await req("POST", "/webhooks", { url: HOOK, events: ["link.created"] }, as(read));
    expect(refused.status).toBe(403);
    expect(refused.json).toEqual({ error: "INSUFFICIENT_SCOPE" });
    expect((await req("GET", "/webhooks", undefined, as(links))).status).toBe(403);
    expect((await req("GET", "/webhooks")).json.webhooks).toHaveLength(before);
    expect((await req("POST", "/webhooks", { url: HOOK, events: ["link.created"] }, as(write))).status).toBe(201);
  });
});
