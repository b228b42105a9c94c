import { eq, sql } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { webhookDeliveries } from "../../../db/schema";
import { fullyKnownClick } from "../../test/click-records";
import { createTestServer, http, type TestServer, type TestUser } from "../../test/harness";
import { startReceiver, type TestReceiver } from "../webhook-receiver.test-helper";
import { startWebhookWorker, type WebhookWorker } from "../webhook-worker";
import { copyClicks, insertClicks, storeClicks } from "./storage";

// The outbox row of a click event is the click's key; the worker builds the body from the stored
// click when it sends it (on loopback, so WEBHOOK_ALLOW_PRIVATE).
let t: TestServer;
let alice: TestUser;
let rx: TestReceiver;
let worker: WebhookWorker;
let secret: string;
let linkId: string;

beforeAll(async () => {
  t = await createTestServer({ WEBHOOK_ALLOW_PRIVATE: "true" });
  alice = await t.user({ plan: "pro" });
  rx = await startReceiver();
  const w = await api("POST", "/webhooks", { url: rx.url, events: ["link.clicked"] });
  expect(w.status, w.text).toBe(201);
  secret = w.json.secret;
  const l = await api("POST", "/links", { url: "https://dest.example/a" });
  expect(l.status, l.text).toBe(201);
  linkId = l.json.id;
});
afterEach(async () => {
  await worker?.stop();
  rx.received.length = 0;
});
afterAll(async () => {
  await rx?.close();
  await t?.close();
});

const api = (method: string, path: string, json?: unknown) => http(`${t.api}${path}`, { method, json, headers: alice.auth });
const click = (timestamp = Date.now()) => fullyKnownClick(linkId, alice.workspaceId, timestamp);
const pendingOf = (ts: string) =>
  t.app.db
    .select()
    .from(webhookDeliveries)
    .where(sql`${webhookDeliveries.payload} ->> 'ts' = ${ts}`);

describe("link.clicked outbox rows", () => {
  it("a click stored by COPY writes an outbox row holding only the click's key", async () => {
    const c = click();
    // The COPY itself, not storeClicks, which would fall back to the insert if the COPY failed.
    await copyClicks(t.app.database, [c], true);
    const [d] = await pendingOf(c.ts);
    expect(d).toMatchObject({ event: "link.clicked", status: "pending", payload: { link_id: linkId, ts: c.ts } });
    expect(Object.keys(d.payload as object).sort()).toEqual(["link_id", "ts"]);
    expect(d.id).toMatch(/^msg_[0-9a-f]{32}$/);
  });

  it("a click stored by the idempotent insert writes the same key-only row", async () => {
    const c = click(Date.now() + 1);
    await insertClicks(t.app.db, [c]);
    const [d] = await pendingOf(c.ts);
    expect(d.payload).toEqual({ link_id: linkId, ts: c.ts });
  });

  it("the body sent is built from the stored click: {type, timestamp, data: {link_id, click}} without the visitor key", async () => {
    const c = click(Date.parse("2026-05-04T03:02:01.567Z"));
    await storeClicks(t.app, [c]);
    worker = startWebhookWorker(t.app, { pollMs: 50 });
    await rx.waitFor(3);
    await worker.idle();
    const bodies = rx.received.map((r) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as Record<string, unknown>);
    const sent = bodies.find((b) => (b.data as { click: { ts: string } }).click.ts === c.ts);
    expect(sent).toEqual({
      type: "link.clicked",
      timestamp: "2026-05-04T03:02:01.567Z",
      data: {
        link_id: linkId,
        click: {
          ts: c.ts,
          timestamp: c.timestamp,
          country: "DE",
          region: "BE",
          region_name: "Berlin",
          timezone: "Europe/Berlin",
          lat: 52.5,
          lng: 13.4,
          device: "desktop",
          platform: "Linux",
          browser: "Chrome 126",
          referer: "https://ref.example/",
          rule: "url",
        },
      },
    });
    expect(rx.received.some((r) => r.body.includes("visitor"))).toBe(false);
  });

  it("a click gone before its event was sent (its month dropped) ends the delivery failed, nothing sent", async () => {
    const c = click(Date.now() + 2);
    await storeClicks(t.app, [c]);
    await t.app.db.execute(sql`delete from clicks where link_id = ${linkId} and ts = ${c.ts}`);
    worker = startWebhookWorker(t.app, { pollMs: 50 });
    await worker.idle();
    const [d] = await pendingOf(c.ts);
    expect(d).toMatchObject({ status: "failed", attempts: 0, nextAttemptAt: null });
    expect(rx.received).toEqual([]);
    await t.app.db.delete(webhookDeliveries).where(eq(webhookDeliveries.id, d.id));
  });
});
