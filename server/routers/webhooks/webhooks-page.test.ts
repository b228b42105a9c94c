import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signedInDashboard } from "../../test/dashboard-session";
import { http, type TestServer } from "../../test/harness";

// Needs the Remix build (`npm run build`): the page is a Remix route.
describe.skipIf(!existsSync("build/index.js"))("webhooks page (Remix, no JavaScript)", () => {
  let t: TestServer;
  let cookie: Record<string, string>;
  beforeAll(async () => void ({ t, formHeaders: cookie } = await signedInDashboard({ plan: "pro" })));
  afterAll(() => t?.close());

  const page = () => http(`${t.appUrl}/webhooks`, { headers: { cookie: cookie.cookie } });
  const submit = (fields: [string, string][]) =>
    http(`${t.appUrl}/webhooks`, {
      method: "POST",
      headers: { ...cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString(),
    });
  const list = async () => (await t.caller({ cookie: cookie.cookie }).webhook.list({})).webhooks;

  it("adds a webhook from the url and the ticked events, and shows its secret once with a copy button", async () => {
    const empty = await page();
    expect(empty.status).toBe(200);
    expect(empty.text).toContain("Add a webhook");
    for (const e of ["link.created", "link.clicked", "linktree.viewed"]) expect(empty.text).toContain(`value="${e}"`);
    const r = await submit([
      ["intent", "add"],
      ["url", "https://hooks.example.com/in"],
      ["events", "link.created"],
      ["events", "link.clicked"],
    ]);
    expect(r.status).toBe(200);
    const secret = r.text.match(/data-testid="webhook-secret">(whsec_[^<]+)</)?.[1];
    expect(secret).toMatch(/^whsec_/);
    expect(r.text).toContain("Copy secret");
    const [w] = await list();
    expect(w).toMatchObject({ url: "https://hooks.example.com/in", events: ["link.created", "link.clicked"], active: true });
    // Never again.
    expect((await page()).text).not.toContain(secret!);
  });

  it("a refused address or no event is said next to its field, and nothing is added", async () => {
    const before = (await list()).length;
    const r = await submit([
      ["intent", "add"],
      ["url", "https://127.0.0.1/in"],
    ]);
    expect(r.text).toMatch(/loopback/);
    expect(r.text).toMatch(/at least one/);
    expect(await list()).toHaveLength(before);
  });

  it("turns an endpoint off and on, sends a test event shown among its deliveries, and removes it", async () => {
    const [w] = await list();
    await submit([
      ["intent", "toggle"],
      ["id", w.id],
      ["active", "false"],
    ]);
    expect((await list())[0].active).toBe(false);
    await submit([
      ["intent", "toggle"],
      ["id", w.id],
      ["active", "true"],
    ]);
    expect((await list())[0].active).toBe(true);
    const tested = await submit([
      ["intent", "test"],
      ["id", w.id],
    ]);
    expect(tested.text).toContain("Test event queued");
    const shown = await page();
    expect(shown.text).toMatch(/data-testid="delivery"[^]*ping[^]*Waiting/);
    await submit([
      ["intent", "delete"],
      ["id", w.id],
      ["confirm", "yes"],
    ]);
    expect(await list()).toEqual([]);
  });
});
