import { existsSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LIMITS } from "../lib/rate-limit";
import { createTestServer, http, pollUntil, type TestServer, type TestUser } from "../test/harness";
import { OgImages, ogImagesIn } from "./og-image";
import render from "./og-worker.mjs";
import { PEOPLE } from "./ua-fixtures";

// Share-card images: rendered in a worker thread, once per card, kept on disk, with per-address
// budgets. Each server has a data directory of its own, so its images (and their pool) too.

const SLOW_WORKER = new URL("./og-slow-worker.test-helper.mjs", import.meta.url);
const pngSize = (buf: Buffer) => ({ png: buf.subarray(1, 4).toString() === "PNG", width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) });
const tempDir = () => mkdtempSync(path.join(os.tmpdir(), "og-test-"));

/** A gate for the slow worker: a card titled with `dir` blocks its render until `open()`. */
const gate = () => {
  const dir = tempDir();
  return { title: dir, started: () => existsSync(path.join(dir, "started")), open: () => writeFileSync(path.join(dir, "go"), "") };
};

async function serverWith(opts: Parameters<typeof ogImagesIn>[1] = {}) {
  // TRUST_PROXY lets the tests play clients from other addresses.
  const t = await createTestServer({ TRUST_PROXY: "true" });
  // Before the first image request: the route then finds these images for its data directory.
  const images = ogImagesIn(t.app.config.dataDir, opts);
  const user = await t.user({ plan: "pro" });
  return { t, images, user };
}

const newLink = async (t: TestServer, user: TestUser, json: Record<string, unknown>) => {
  const r = await http(`${t.api}/links`, { method: "POST", json: { url: "https://dest.example/", ...json }, headers: user.auth });
  expect(r.status).toBe(201);
  return r.json as { id: string; slug: string };
};
const getPng = async (t: TestServer, id: string, ip = "198.51.100.1", method = "GET") => {
  const res = await fetch(`${t.redirect}/_/og/${id}.png`, { method, headers: { "x-forwarded-for": ip } });
  const body = Buffer.from(await res.arrayBuffer());
  return {
    status: res.status,
    headers: res.headers,
    body,
    json: res.headers.get("content-type") === "application/json" ? JSON.parse(body.toString()) : undefined,
  };
};

describe("rendering happens off the request thread", () => {
  let s: Awaited<ReturnType<typeof serverWith>>;
  beforeAll(async () => {
    s = await serverWith({ worker: SLOW_WORKER, maxWaitMs: 600_000 });
  });
  afterAll(async () => {
    await s?.images.close();
    await s?.t.close();
  });

  it("a redirect is answered while a render that blocks its thread is under way", async () => {
    const g = gate();
    const card = await newLink(s.t, s.user, { og_title: g.title });
    const plain = await newLink(s.t, s.user, {});
    const order: string[] = [];
    const image = getPng(s.t, card.id).then((r) => (order.push("image"), r));
    expect(await pollUntil(async () => g.started(), Boolean, 10_000)).toBe(true);
    const redirect = await http(`${s.t.redirect}/${plain.slug}`, { headers: { "user-agent": PEOPLE.windowsChrome } });
    order.push("redirect");
    expect(redirect.status).toBe(301);
    g.open();
    const r = await image;
    expect(order).toEqual(["redirect", "image"]);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("image/png");
  });
});

describe("a full render queue answers 503 with Retry-After", () => {
  let s: Awaited<ReturnType<typeof serverWith>>;
  beforeAll(async () => {
    s = await serverWith({ worker: SLOW_WORKER, queue: 1, maxWaitMs: 600_000 });
  });
  afterAll(async () => {
    await s?.images.close();
    await s?.t.close();
  });

  it("one render running and one waiting: a third card is refused at once, the first two are served", async () => {
    const [a, b, c] = [gate(), gate(), gate()];
    const [la, lb, lc] = [
      await newLink(s.t, s.user, { og_title: a.title }),
      await newLink(s.t, s.user, { og_title: b.title }),
      await newLink(s.t, s.user, { og_title: c.title }),
    ];
    const first = getPng(s.t, la.id);
    expect(await pollUntil(async () => a.started(), Boolean, 10_000)).toBe(true);
    const second = getPng(s.t, lb.id);
    expect(
      await pollUntil(
        async () => s.images.queued,
        (n) => n === 1,
        10_000,
      ),
    ).toBe(1);
    const third = await getPng(s.t, lc.id);
    expect(third.status).toBe(503);
    expect(third.json).toEqual({ error: "SERVICE_UNAVAILABLE" });
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(third.headers.get("cache-control")).toBe("no-store");
    a.open();
    b.open();
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
    // Once there is room, the refused card renders.
    c.open();
    expect((await getPng(s.t, lc.id)).status).toBe(200);
  });
});

describe("a request waits a bounded time for its render", () => {
  let s: Awaited<ReturnType<typeof serverWith>>;
  beforeAll(async () => {
    s = await serverWith({ worker: SLOW_WORKER, maxWaitMs: 300 });
  });
  afterAll(async () => {
    await s?.images.close();
    await s?.t.close();
  });

  it("a render that takes longer answers 503 with Retry-After; it goes on and the next request gets the stored image", async () => {
    const g = gate();
    const card = await newLink(s.t, s.user, { og_title: g.title });
    const late = await getPng(s.t, card.id);
    expect(late.status).toBe(503);
    expect(late.json).toEqual({ error: "SERVICE_UNAVAILABLE" });
    expect(Number(late.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await pollUntil(async () => g.started(), Boolean, 20_000)).toBe(true);
    g.open();
    const renders = s.images.renders;
    const ok = await pollUntil(
      () => getPng(s.t, card.id),
      (r) => r.status === 200,
      20_000,
    );
    expect(ok.headers.get("content-type")).toBe("image/png");
    expect(s.images.renders).toBe(renders); // the first render was kept, not done again
  });
});

describe("images are rendered once per card and kept on disk", () => {
  let s: Awaited<ReturnType<typeof serverWith>>;
  beforeAll(async () => {
    s = await serverWith();
  });
  afterAll(async () => {
    await s?.images.close();
    await s?.t.close();
  });

  it("a second request for the same title reads the stored image: no second render", async () => {
    const l = await newLink(s.t, s.user, { og_title: "Stored once" });
    const before = s.images.renders;
    const a = await getPng(s.t, l.id);
    expect(a.status).toBe(200);
    expect(pngSize(a.body)).toEqual({ png: true, width: 1200, height: 630 });
    expect(s.images.renders).toBe(before + 1);
    const b = await getPng(s.t, l.id);
    expect(b.body.equals(a.body)).toBe(true);
    // Another link showing the same title is the same image.
    const twin = await newLink(s.t, s.user, { og_title: "Stored once" });
    expect((await getPng(s.t, twin.id)).body.equals(a.body)).toBe(true);
    expect(s.images.renders).toBe(before + 1);
    // And after a restart (a new instance over the same directory) it is still read from disk.
    const again = new OgImages({ dir: path.join(s.t.app.config.dataDir, "og") });
    expect((await again.get({ title: "Stored once", subtitle: s.t.app.config.redirectDomain })).equals(a.body)).toBe(true);
    expect(again.renders).toBe(0);
    await again.close();
  });

  it("HEAD answers the image's headers without a body", async () => {
    const l = await newLink(s.t, s.user, { og_title: "Head only" });
    const r = await getPng(s.t, l.id, "198.51.100.2", "HEAD");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("image/png");
    expect(Number(r.headers.get("content-length"))).toBeGreaterThan(1000);
    expect(r.body.length).toBe(0);
  });

  it("the per-address limit answers 429 with Retry-After; other addresses are served", async () => {
    const l = await newLink(s.t, s.user, { og_title: "Limited" });
    const ip = "203.0.113.77";
    await s.t.app.limits.get("ogImagePerAddress").consume(ip, LIMITS.ogImagePerAddress.points);
    const r = await getPng(s.t, l.id, ip);
    expect(r.status).toBe(429);
    expect(r.json).toEqual({ error: "RATE_LIMITED" });
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await getPng(s.t, l.id, "203.0.113.78")).status).toBe(200);
  });

  it("the per-address render limit: past it a new card answers 429, a stored one is still served", async () => {
    const stored = await newLink(s.t, s.user, { og_title: "Already rendered" });
    expect((await getPng(s.t, stored.id)).status).toBe(200);
    const fresh = await newLink(s.t, s.user, { og_title: "Never rendered yet" });
    const ip = "203.0.113.90";
    await s.t.app.limits.get("ogRenderPerAddress").consume(ip, LIMITS.ogRenderPerAddress.points);
    const before = s.images.renders;
    const r = await getPng(s.t, fresh.id, ip);
    expect(r.status).toBe(429);
    expect(r.json).toEqual({ error: "RATE_LIMITED" });
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(s.images.renders).toBe(before);
    expect((await getPng(s.t, stored.id, ip)).status).toBe(200);
  });
});

describe("the disk cache", () => {
  it("keeps its size bound, least recently used out first, and removes temp files a crash left", async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, ".leftover.tmp"), "half an image");
    const probe = new OgImages({ dir });
    const one = await probe.get({ title: "One", subtitle: "go.test" });
    await probe.close();
    expect(readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
    // Room for about two images of this size.
    const images = new OgImages({ dir, maxBytes: Math.floor(one.length * 2.5) });
    await images.get({ title: "Two", subtitle: "go.test" });
    await images.get({ title: "One", subtitle: "go.test" }); // read: now the most recently used
    await images.get({ title: "Three", subtitle: "go.test" });
    expect(images.renders).toBe(2);
    expect(readdirSync(dir).length).toBe(2);
    await images.get({ title: "One", subtitle: "go.test" });
    expect(images.renders).toBe(2);
    await images.get({ title: "Two", subtitle: "go.test" });
    expect(images.renders).toBe(3);
    await images.close();
  });
});

describe("one render per card", () => {
  it("concurrent requests for the same card share one render", async () => {
    const images = new OgImages({ dir: tempDir() });
    const [a, b] = await Promise.all([
      images.get({ title: "Twice at once", subtitle: "go.test" }),
      images.get({ title: "Twice at once", subtitle: "go.test" }),
    ]);
    expect(a.equals(b)).toBe(true);
    expect(images.renders).toBe(1);
    await images.close();
  });
});

describe("the card's layout", () => {
  it("shows the subtitle: cards differing only in it are different images", async () => {
    const a = Buffer.from(await render({ title: "Same title", subtitle: "go.example.com" }));
    const b = Buffer.from(await render({ title: "Same title", subtitle: "s.example.org" }));
    expect(a.equals(b)).toBe(false);
  });

  it("takes an avatar (a data: URL) for linktree cards", async () => {
    const avatar = `data:image/png;base64,${Buffer.from(await render({ title: "A", subtitle: "b" })).toString("base64")}`;
    const withAvatar = Buffer.from(await render({ title: "Page", subtitle: "go.example.com", avatar }));
    expect(pngSize(withAvatar)).toEqual({ png: true, width: 1200, height: 630 });
    expect(withAvatar.equals(Buffer.from(await render({ title: "Page", subtitle: "go.example.com" })))).toBe(false);
  });
});
