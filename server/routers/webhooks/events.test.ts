import { and, eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { links, webhookDeliveries, webhooks } from "../../../db/schema";
import { clickTs } from "../../lib/ids";
import { insertClicks, storeClicks } from "../../core/click-pipeline/storage";
import type { ClickRecord } from "../../core/click-pipeline/types";
import { CLICK_EVENT_FIELDS, fullyKnownClick } from "../../test/click-records";
import { startWebhookWorker, type WebhookWorker } from "../../core/webhook-worker";
import { startReceiver, type TestReceiver } from "../../core/webhook-receiver.test-helper";
import { createTestServer, http, type TestServer, type TestUser } from "../../test/harness";

// Which changes become which events, with what data, written in the change's transaction and
// delivered by the worker to a local receiver (on loopback, so WEBHOOK_ALLOW_PRIVATE).
let t: TestServer;
let alice: TestUser;
let bob: TestUser;
let rx: TestReceiver;
let worker: WebhookWorker;
let secret: string;

const BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";
const ALL = ["link.created", "link.updated", "link.deleted", "link.clicked", "link.broken", "linktree.viewed"];

beforeAll(async () => {
  t = await createTestServer({ WEBHOOK_ALLOW_PRIVATE: "true" });
  alice = await t.user({ plan: "pro" });
  bob = await t.user({ plan: "pro" });
  rx = await startReceiver();
  worker = startWebhookWorker(t.app, { pollMs: 50 });
  const r = await api("POST", "/webhooks", { url: rx.url, events: ALL });
  expect(r.status, r.text).toBe(201);
  secret = r.json.secret;
});
afterEach(async () => {
  await worker.idle();
  rx.received.length = 0;
});
afterAll(async () => {
  await worker?.stop();
  await rx?.close();
  await t?.close();
});

const api = (method: string, path: string, json?: unknown, auth = alice.auth) => http(`${t.api}${path}`, { method, json, headers: auth });
type Event = { type: string; timestamp: string; data: Record<string, unknown> };
/** The events received once the worker has nothing left to send, each verified against the secret. */
const received = async (n: number): Promise<Event[]> => {
  await rx.waitFor(n);
  await worker.idle();
  return rx.received.map((r) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as Event);
};
const newLink = async (json: Record<string, unknown> = {}, auth = alice.auth) => {
  const r = await api("POST", "/links", { url: "https://dest.example/a", ...json }, auth);
  expect(r.status, r.text).toBe(201);
  return r.json as Record<string, unknown> & { id: string; slug: string };
};

describe("link events", () => {
  it("POST /links sends link.created with the Link exactly as the API answered it", async () => {
    const link = await newLink({ tags: ["a"], og_title: "Hello" });
    const [e] = await received(1);
    expect(e.type).toBe("link.created");
    expect(Date.parse(e.timestamp)).toBeGreaterThan(Date.now() - 60_000);
    expect(e.data).toEqual(link);
  });

  it("POST /links with a chosen slug and the optional members sends link.created with the Link as answered", async () => {
    rx.received.length = 0;
    const link = await newLink({ slug: `ev-${Date.now().toString(36)}`, title: "Named", forward_query: true, archived: true, password: "open sesame" });
    const [e] = await received(1);
    expect(e.data).toEqual(link);
    expect(e.data).toMatchObject({ title: "Named", forward_query: true, archived: true, has_password: true });
  });

  it("PATCH /links/{id} sends link.updated with the Link as the PATCH answered it", async () => {
    const link = await newLink();
    await received(1);
    rx.received.length = 0;
    const r = await api("PATCH", `/links/${link.id}`, { url: "https://dest.example/b" });
    expect(r.status).toBe(200);
    const [e] = await received(1);
    expect(e).toMatchObject({ type: "link.updated", data: r.json });
  });

  it("DELETE /links/{id} sends link.deleted with the deleted Link; deleting it again sends nothing more", async () => {
    const link = await newLink();
    await received(1);
    rx.received.length = 0;
    expect((await api("DELETE", `/links/${link.id}`)).status).toBe(204);
    const [e] = await received(1);
    expect(e.type).toBe("link.deleted");
    expect(e.data).toEqual((await api("GET", `/links/${link.id}`)).json);
    expect(e.data.deleted_at).toEqual(expect.any(Number));
    expect((await api("DELETE", `/links/${link.id}`)).status).toBe(204);
    await worker.idle();
    expect(rx.received).toHaveLength(1);
  });

  it("a password never reaches the payload: the Link says only has_password", async () => {
    await newLink({ password: "hunter2-secret" });
    const [e] = await received(1);
    expect(e.data.has_password).toBe(true);
    expect(rx.received[0].body).not.toContain("hunter2");
  });

  it("POST /links/bulk sends one link.created per created link, none for a refused item", async () => {
    const r = await api("POST", "/links/bulk", { links: [{ url: "https://dest.example/1" }, { url: "ftp://nope" }, { url: "https://dest.example/2" }] });
    expect(r.status, r.text).toBe(200);
    expect(r.json.created).toHaveLength(2);
    const events = await received(2);
    expect(events.map((e) => e.type)).toEqual(["link.created", "link.created"]);
    expect(events.map((e) => e.data.id).sort()).toEqual(r.json.created.map((l: { id: string }) => l.id).sort());
  });

  it("the dashboard's bulk actions send link.updated for each changed link and link.deleted for each deleted one", async () => {
    const a = await newLink();
    const b = await newLink();
    await received(2);
    rx.received.length = 0;
    const caller = t.caller(alice.auth);
    await caller.link.bulkTag({ ids: [a.id, b.id], add: ["bulk"], remove: [] });
    const updated = await received(2);
    expect(updated.map((e) => e.type)).toEqual(["link.updated", "link.updated"]);
    expect(updated.every((e) => (e.data.tags as string[]).includes("bulk"))).toBe(true);
    rx.received.length = 0;
    await caller.link.bulkDelete({ ids: [a.id] });
    const [deleted] = await received(1);
    expect(deleted).toMatchObject({ type: "link.deleted", data: { id: a.id, deleted_at: expect.any(Number) } });
  });

  it("a refused change writes no event", async () => {
    const before = (await t.app.db.select().from(webhookDeliveries)).length;
    expect((await api("POST", "/links", { url: "not a url" })).status).toBe(400);
    const link = await newLink();
    await received(1);
    expect((await api("PATCH", `/links/${link.id}`, { url: "nope" })).status).toBe(400);
    expect((await t.app.db.select().from(webhookDeliveries)).length).toBe(before + 1);
  });

  it("another workspace's changes are not sent to this workspace's endpoint", async () => {
    await newLink({}, bob.auth);
    await worker.idle();
    expect(rx.received).toHaveLength(0);
  });

  it("an endpoint not subscribed to an event does not get it", async () => {
    const user = await t.user({ plan: "pro" });
    const w = await api("POST", "/webhooks", { url: rx.url, events: ["link.deleted"] }, user.auth);
    await newLink({}, user.auth);
    await worker.idle();
    expect(rx.received).toHaveLength(0);
    expect((await api("GET", `/webhooks/${w.json.id}/deliveries`, undefined, user.auth)).json.deliveries).toEqual([]);
  });
});

describe("POST /webhooks/{id}/test", () => {
  it("delivers a signed ping, listed as delivered with the answer's status", async () => {
    const w = (await api("GET", "/webhooks")).json.webhooks[0];
    expect((await api("POST", `/webhooks/${w.id}/test`)).status).toBe(202);
    const [e] = await received(1);
    expect(e).toMatchObject({ type: "ping", data: { webhook_id: w.id } });
    const [d] = (await api("GET", `/webhooks/${w.id}/deliveries`)).json.deliveries;
    expect(d).toMatchObject({
      id: rx.received[0].headers["webhook-id"],
      event: "ping",
      status: "delivered",
      attempts: 1,
      response_status: 200,
      next_attempt_at: null,
    });
    expect(d.last_attempt_at).toEqual(expect.any(Number));
  });
});

describe("clicks and page views", () => {
  const click = (linkId: string, workspaceId: string, over: Partial<ClickRecord> = {}) => fullyKnownClick(linkId, workspaceId, Date.now(), over);

  it("a visit sends link.clicked with {link_id, click}, the click as the analytics API answers it and no address", async () => {
    const link = await newLink();
    await received(1);
    rx.received.length = 0;
    const visit = await http(`${t.redirect}/${link.slug}`, { headers: { "user-agent": BROWSER, "x-forwarded-for": "203.0.113.9" } });
    expect(visit.status).toBe(301);
    await t.app.clicks!.flush();
    const [e] = await received(1);
    const analytics = (await api("GET", `/links/${link.id}/analytics`)).json;
    expect(e.type).toBe("link.clicked");
    expect(e.data).toEqual({ link_id: link.id, click: analytics.clicks[0] });
    expect(rx.received[0].body).not.toMatch(/127\.0\.0\.1|203\.0\.113\.9|visitor/);
  });

  it("clicks stored by COPY and by the idempotent insert both write their events, and a batch stored again writes none twice", async () => {
    const link = await newLink();
    await received(1);
    rx.received.length = 0;
    const batch = [click(link.id, alice.workspaceId), click(link.id, alice.workspaceId)];
    await storeClicks(t.app, batch); // COPY
    await storeClicks(t.app, batch); // COPY refused (already stored), then the insert stores nothing
    const more = [...batch, click(link.id, alice.workspaceId, { ts: clickTs(Date.now() + 5) })];
    await insertClicks(t.app.db, more); // only the new one is stored
    const events = await received(3);
    expect(events).toHaveLength(3);
    expect(events.every((e) => e.type === "link.clicked" && e.data.link_id === link.id)).toBe(true);
    expect(new Set(events.map((e) => (e.data.click as { ts: string }).ts)).size).toBe(3);
    const sent = events[0].data.click as Record<string, unknown>;
    expect(Object.keys(sent).sort()).toEqual(CLICK_EVENT_FIELDS);
    expect(sent).toMatchObject({ country: "DE", region_name: "Berlin", lat: 52.5, lng: 13.4, device: "desktop", referer: "https://ref.example/" });
  });

  it("a linktree page view sends linktree.viewed with the linktree's id, slug and title", async () => {
    const tree = await api("POST", "/linktrees", { slug: `page-${Date.now().toString(36)}`, title: "Ana's links" });
    expect(tree.status, tree.text).toBe(201);
    const [page] = await t.app.db
      .select({ id: links.id })
      .from(links)
      .where(and(eq(links.slug, tree.json.slug), eq(links.kind, "linktree")));
    await storeClicks(t.app, [click(page.id, alice.workspaceId)]);
    const [e] = await received(1);
    expect(e.type).toBe("linktree.viewed");
    expect(e.data).toMatchObject({ id: tree.json.id, linktree_id: tree.json.id, slug: tree.json.slug, title: "Ana's links" });
    expect(rx.received[0].body).not.toContain("visitor");
  });

  it("without a subscribed endpoint a batch writes no delivery", async () => {
    const user = await t.user({ plan: "pro" });
    await api("POST", "/webhooks", { url: rx.url, events: ["link.created"] }, user.auth);
    const link = await newLink({}, user.auth);
    await worker.idle();
    rx.received.length = 0;
    await storeClicks(t.app, [click(link.id, user.workspaceId)]);
    const rows = await t.app.db
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.workspaceId, user.workspaceId), eq(webhookDeliveries.event, "link.clicked")));
    expect(rows).toEqual([]);
  });

  it("an endpoint turned off gets no click events", async () => {
    const user = await t.user({ plan: "pro" });
    const w = await api("POST", "/webhooks", { url: rx.url, events: ["link.clicked"], active: false }, user.auth);
    const link = await newLink({}, user.auth);
    await storeClicks(t.app, [click(link.id, user.workspaceId)]);
    expect(await t.app.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, w.json.id))).toEqual([]);
    await t.app.db.delete(webhooks).where(eq(webhooks.id, w.json.id));
  });
});
