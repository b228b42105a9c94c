import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { webhookDeliveries, webhooks } from "../../db/schema";
import { createTestApp, pollUntil, type TestApp, type TestUser } from "../test/harness";
import { outbox } from "../routers/auth/sign-in.test-helper";
import { enqueueWebhookEvent } from "./webhook-outbox";
import { guardedLookup } from "./outgoing-address-guard";
import { attemptDelivery, claimDue, DISABLED_REASON, LEASE_MS, PER_ENDPOINT, RETRY_DELAYS_MS, startWebhookWorker, type WebhookWorker } from "./webhook-worker";
import { startReceiver, type TestReceiver } from "./webhook-receiver.test-helper";

let t: TestApp;
let alice: TestUser;
let rx: TestReceiver;
let worker: WebhookWorker | undefined;
let clock = Date.now();

beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_PRIVATE: "true" });
  alice = await t.user({ plan: "pro" });
  rx = await startReceiver();
});
afterEach(async () => {
  await worker?.stop();
  worker = undefined;
  rx.received.length = 0;
  rx.status = 200;
  rx.delayMs = 0;
  rx.maxOpen = 0;
  await t.app.db.delete(webhooks);
});
afterAll(async () => {
  await rx?.close();
  await t?.close();
});

const start = () => (worker = startWebhookWorker(t.app, { pollMs: 50, now: () => clock }));
const addWebhook = async (events = ["link.created"], url = rx.url) => t.caller(alice.auth).webhook.create({ url, events: events as never });
const deliveriesOf = (webhookId: string) => t.app.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, webhookId));

describe("an attempt", () => {
  it("POSTs {type, timestamp, data} with webhook-id, webhook-timestamp and a v1 signature the Standard Webhooks library verifies", async () => {
    clock = Date.now() + 1000; // ahead of the events queued below, which are due at once
    const w = await addWebhook();
    await enqueueWebhookEvent(t.app.db, alice.workspaceId, "link.created", { id: "abcd1234", slug: "hello" });
    start();
    const [got] = await rx.waitFor(1);
    await worker!.idle();
    expect(got.headers["content-type"]).toBe("application/json");
    expect(got.headers["webhook-id"]).toMatch(/^msg_[0-9a-f]{32}$/);
    const ts = Number(got.headers["webhook-timestamp"]);
    expect(Math.abs(ts - Date.now() / 1000)).toBeLessThan(30);
    expect(got.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const verified = new Webhook(w.secret).verify(got.body, got.headers as Record<string, string>) as Record<string, unknown>;
    expect(verified).toEqual({
      type: "link.created",
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: { id: "abcd1234", slug: "hello" },
    });
    // A signature made with another secret does not verify.
    expect(() => new Webhook(`whsec_${Buffer.alloc(24, 7).toString("base64")}`).verify(got.body, got.headers as Record<string, string>)).toThrow();
    const [d] = await deliveriesOf(w.id);
    expect(d).toMatchObject({ id: got.headers["webhook-id"], status: "delivered", attempts: 1, responseStatus: 200, nextAttemptAt: null, leaseUntil: null });
    expect(d.lastAttemptAt).toBe(clock);
  });

  it("only endpoints subscribed to the event, and active, get it", async () => {
    const yes = await addWebhook(["link.created", "link.deleted"]);
    const other = await addWebhook(["link.deleted"]);
    const off = await addWebhook(["link.created"]);
    await t.caller(alice.auth).webhook.update({ id: off.id, active: false });
    await enqueueWebhookEvent(t.app.db, alice.workspaceId, "link.created", { id: "x" });
    expect((await deliveriesOf(yes.id)).length).toBe(1);
    expect(await deliveriesOf(other.id)).toEqual([]);
    expect(await deliveriesOf(off.id)).toEqual([]);
  });

  it("a non-2xx answer is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h with the same id and body, then the delivery is failed", async () => {
    clock = Date.now() + 1000; // ahead of the events queued below, which are due at once
    rx.status = 500;
    const w = await addWebhook();
    await enqueueWebhookEvent(t.app.db, alice.workspaceId, "link.created", { id: "retry" });
    start();
    const waits: number[] = [];
    for (let attempt = 1; attempt <= 8; attempt++) {
      await rx.waitFor(attempt);
      await worker!.idle();
      const [d] = await deliveriesOf(w.id);
      expect(d.attempts).toBe(attempt);
      expect(d.responseStatus).toBe(500);
      if (attempt < 8) {
        expect(d.status).toBe("pending");
        waits.push(d.nextAttemptAt! - clock);
        // Not before it is due.
        clock += waits[waits.length - 1] - 1;
        worker!.kick();
        await worker!.idle();
        expect(rx.received).toHaveLength(attempt);
        clock += 1;
        worker!.kick();
      } else {
        expect(d.status).toBe("failed");
        expect(d.nextAttemptAt).toBeNull();
      }
    }
    expect(waits).toEqual([...RETRY_DELAYS_MS]);
    expect(new Set(rx.received.map((r) => r.headers["webhook-id"])).size).toBe(1);
    expect(new Set(rx.received.map((r) => r.body)).size).toBe(1);
  });

  it("a 3xx is not followed and counts as a failed attempt", async () => {
    clock = Date.now() + 1000; // ahead of the events queued below, which are due at once
    rx.status = 302;
    const w = await addWebhook();
    await enqueueWebhookEvent(t.app.db, alice.workspaceId, "link.created", { id: "moved" });
    start();
    await rx.waitFor(1);
    await worker!.idle();
    expect((await deliveriesOf(w.id))[0]).toMatchObject({ status: "pending", attempts: 1, responseStatus: 302 });
  });

  it("no answer within the timeout is a failed attempt without a status", async () => {
    rx.delayMs = 500;
    const a = await attemptDelivery({ id: "msg_slow", url: rx.url, secret: `whsec_${Buffer.alloc(24).toString("base64")}`, body: "{}" }, true, 100);
    expect(a).toEqual({ status: null, error: "timeout" });
  });

  it("an endpoint gets at most a few attempts at once", async () => {
    clock = Date.now() + 1000; // ahead of the events queued below, which are due at once
    rx.delayMs = 100;
    const w = await addWebhook();
    for (let i = 0; i < 12; i++) await enqueueWebhookEvent(t.app.db, alice.workspaceId, "link.created", { i });
    start();
    await rx.waitFor(12);
    await worker!.idle();
    expect(rx.maxOpen).toBeLessThanOrEqual(PER_ENDPOINT);
    expect((await deliveriesOf(w.id)).every((d) => d.status === "delivered")).toBe(true);
  });
});

describe("during a burst of visits", () => {
  it("attempts go out one at a time and slowly, and catch up once the burst is over", async () => {
    rx.delayMs = 50;
    const w = await addWebhook();
    clock = Date.now() + 60_000; // every event queued below is due
    start();
    // 1,000 redirect answers a second, as the redirect host counts them.
    const burst = setInterval(() => t.app.metrics.redirects.inc({ outcome: "redirect" }, 100), 100);
    try {
      await new Promise((r) => setTimeout(r, 700)); // the worker's gauge has seen it
      for (let i = 0; i < 12; i++) await enqueueWebhookEvent(t.app.db, alice.workspaceId, "link.created", { i });
      worker!.kick();
      await new Promise((r) => setTimeout(r, 500));
      expect(rx.received.length).toBeLessThanOrEqual(7);
      expect(rx.maxOpen).toBe(1);
    } finally {
      clearInterval(burst);
    }
    await rx.waitFor(12);
    await worker!.idle();
    expect((await deliveriesOf(w.id)).every((d) => d.status === "delivered")).toBe(true);
  });
});

describe("fairness", () => {
  it("an endpoint with a long backlog does not hold up another endpoint's deliveries", async () => {
    clock = Date.now() + 1000; // ahead of the events queued below, which are due at once
    const other = await startReceiver();
    try {
      rx.delayMs = 200;
      const slow = await addWebhook(["link.created"]);
      for (let i = 0; i < 400; i++) await enqueueWebhookEvent(t.app.db, alice.workspaceId, "link.created", { i });
      const fast = await addWebhook(["link.deleted"], other.url);
      await enqueueWebhookEvent(t.app.db, alice.workspaceId, "link.deleted", { id: "behind" });
      clock = Date.now() + 1000;
      start();
      await other.waitFor(1, 8000);
      expect(other.received).toHaveLength(1);
      // The backlog is far from sent by then (4 at a time, 200 ms each).
      expect(rx.received.length).toBeLessThan(150);
      await pollUntil(
        () => deliveriesOf(fast.id),
        (rows) => rows[0]?.status === "delivered",
      );
      expect((await deliveriesOf(fast.id))[0].status).toBe("delivered");
      expect(slow.id).not.toBe(fast.id);
    } finally {
      await worker?.stop();
      worker = undefined;
      await other.close();
    }
  });
});

describe("private addresses at delivery time", () => {
  const secret = `whsec_${Buffer.alloc(24).toString("base64")}`;

  it("without WEBHOOK_ALLOW_PRIVATE an address literal on loopback is not connected to", async () => {
    const a = await attemptDelivery({ id: "msg_1", url: rx.url, secret, body: "{}" }, false);
    expect(a).toEqual({ status: null, error: "blocked address" });
    expect(rx.received).toHaveLength(0);
  });

  it("a name is checked on the address the connection uses, so one resolving to loopback is refused at connect time", async () => {
    // `localhost.` (the root label's dot) resolves to loopback like localhost.
    const url = rx.url.replace("127.0.0.1", "localhost.");
    const a = await attemptDelivery({ id: "msg_2", url, secret, body: "{}" }, false);
    expect(a.status).toBeNull();
    expect(rx.received).toHaveLength(0);
    const err = await new Promise<unknown>((resolve) => guardedLookup("localhost", {}, (e) => resolve(e)));
    expect((err as { code?: string }).code).toBe("EBLOCKEDADDRESS");
  });

  it("with WEBHOOK_ALLOW_PRIVATE the same endpoint is reached", async () => {
    expect((await attemptDelivery({ id: "msg_3", url: rx.url, secret, body: "{}" }, true)).status).toBe(200);
  });
});

describe("leases", () => {
  it("a claimed delivery is no other claimer's until its lease runs out", async () => {
    const w = await addWebhook();
    await enqueueWebhookEvent(t.app.db, alice.workspaceId, "link.created", { id: "lease" });
    const now = Date.now();
    const first = await claimDue(t.app.db, now, 10);
    expect(first.map((d) => d.webhook_id)).toEqual([w.id]);
    expect(await claimDue(t.app.db, now + 1000, 10)).toEqual([]);
    // The instance that held it died: once the lease is over, another takes it.
    const again = await claimDue(t.app.db, now + LEASE_MS + 1, 10);
    expect(again.map((d) => d.id)).toEqual([first[0].id]);
  });

  it("two claimers at once never take the same delivery", async () => {
    await addWebhook();
    for (let i = 0; i < 20; i++) await enqueueWebhookEvent(t.app.db, alice.workspaceId, "link.created", { i });
    const now = Date.now();
    const [a, b] = await Promise.all([
      claimDue(t.app.db, now, 20, new Map(), { perEndpoint: 20 }),
      claimDue(t.app.db, now, 20, new Map(), { perEndpoint: 20 }),
    ]);
    const ids = [...a, ...b].map((d) => d.id);
    expect(ids).toHaveLength(20);
    expect(new Set(ids).size).toBe(20);
  });

  it("a delivery left leased by a stopped worker is sent by the next one (state is in the table)", async () => {
    clock = Date.now() + 1000; // ahead of the events queued below, which are due at once
    const w = await addWebhook();
    await enqueueWebhookEvent(t.app.db, alice.workspaceId, "link.created", { id: "restart" });
    await claimDue(t.app.db, clock, 10); // taken, then its process is gone
    clock += LEASE_MS + 1;
    start();
    await rx.waitFor(1);
    await worker!.idle();
    expect((await deliveriesOf(w.id))[0]).toMatchObject({ status: "delivered", attempts: 1 });
  });
});

describe("endpoints that keep failing", () => {
  const old = (webhookId: string, id: string, createdAt: number, status: "pending" | "failed" | "delivered", lastAttemptAt: number) =>
    t.app.db.insert(webhookDeliveries).values({
      id,
      webhookId,
      workspaceId: alice.workspaceId,
      event: "link.created",
      payload: { type: "link.created" },
      status,
      attempts: status === "delivered" ? 1 : 8,
      responseStatus: status === "delivered" ? 200 : 500,
      lastAttemptAt,
      createdAt,
    });

  it("every delivery failing for 3 days turns the endpoint off with a reason, gives up its pending deliveries and mails the owners", async () => {
    clock = Date.now() + 1000; // ahead of the events queued below, which are due at once
    rx.status = 503;
    const w = await addWebhook();
    await old(w.id, `msg_old${w.id}`, clock - 3 * 24 * 3600_000 - 1000, "failed", clock - 2 * 24 * 3600_000);
    await enqueueWebhookEvent(t.app.db, alice.workspaceId, "link.created", { id: "now" });
    start();
    await rx.waitFor(1);
    await worker!.idle();
    const [row] = await t.app.db.select().from(webhooks).where(eq(webhooks.id, w.id));
    expect(row).toMatchObject({ active: false, disabledReason: DISABLED_REASON });
    expect((await deliveriesOf(w.id)).every((d) => d.status === "failed")).toBe(true);
    const [listed] = (await t.caller(alice.auth).webhook.list({})).webhooks.filter((x) => x.id === w.id);
    expect(listed).toMatchObject({ active: false, disabled_reason: DISABLED_REASON });
    const mails = outbox({ app: t.app } as never, alice.email);
    expect(mails.at(-1)?.subject).toBe("A webhook endpoint was turned off");
    expect(mails.at(-1)?.text).toContain("every delivery failed for 3 days");
  });

  it("one success within the 3 days keeps it on", async () => {
    clock = Date.now() + 1000; // ahead of the events queued below, which are due at once
    rx.status = 503;
    const w = await addWebhook();
    await old(w.id, `msg_old${w.id}`, clock - 3 * 24 * 3600_000 - 1000, "failed", clock - 2 * 24 * 3600_000);
    await old(w.id, `msg_ok${w.id}`, clock - 24 * 3600_000, "delivered", clock - 24 * 3600_000);
    await enqueueWebhookEvent(t.app.db, alice.workspaceId, "link.created", { id: "now" });
    start();
    await rx.waitFor(1);
    await worker!.idle();
    expect((await t.app.db.select().from(webhooks).where(eq(webhooks.id, w.id)))[0].active).toBe(true);
  });

  it("failures for less than 3 days keep it on", async () => {
    clock = Date.now() + 1000; // ahead of the events queued below, which are due at once
    rx.status = 503;
    const w = await addWebhook();
    await old(w.id, `msg_old${w.id}`, clock - 2 * 24 * 3600_000, "failed", clock - 24 * 3600_000);
    await enqueueWebhookEvent(t.app.db, alice.workspaceId, "link.created", { id: "now" });
    start();
    await rx.waitFor(1);
    await worker!.idle();
    expect((await t.app.db.select().from(webhooks).where(eq(webhooks.id, w.id)))[0].active).toBe(true);
  });
});

describe("stopping", () => {
  it("stop waits for the attempt in flight and records it", async () => {
    clock = Date.now() + 1000; // ahead of the events queued below, which are due at once
    rx.delayMs = 300;
    const w = await addWebhook();
    await enqueueWebhookEvent(t.app.db, alice.workspaceId, "link.created", { id: "stop" });
    start();
    await rx.waitFor(1);
    await worker!.stop();
    worker = undefined;
    expect((await deliveriesOf(w.id))[0]).toMatchObject({ status: "delivered", attempts: 1 });
  });
});
