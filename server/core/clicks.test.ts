import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../test/harness";
import { enrichVisit, startClickRecorder } from "./clicks";
import { clickCounts, visit } from "./click-pipeline/visits.test-helper";
import { PEOPLE } from "../redirect/ua-fixtures";

let t: TestApp;
beforeAll(async () => void (t = await createTestApp()));
afterAll(() => t.close());

const { stored, rolled } = clickCounts(() => t.app);

describe("click recorder", () => {
  it("writes clicks off the request path by itself, within its flush interval", async () => {
    t.app.clicks!.recordVisit(visit("rec00001"));
    expect(await stored("rec00001")).toBe(0); // not written on the request path
    for (let i = 0; i < 100 && (await stored("rec00001")) === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await stored("rec00001")).toBe(1);
  });

  it("close() writes everything buffered, in batches, with the hourly rollups (a graceful stop loses none)", async () => {
    const rec = startClickRecorder(t.app, { intervalMs: 60_000, batchSize: 1000 });
    for (let i = 0; i < 2500; i++) rec.recordVisit(visit("rec00002", i));
    await rec.close();
    expect(rec.buffered).toBe(0);
    expect(await stored("rec00002")).toBe(2500);
    expect(await rolled("rec00002")).toBe(2500);
  });

  it("a click written twice (a retried batch) is stored and rolled up once", async () => {
    const rec = startClickRecorder(t.app, { intervalMs: 60_000 });
    const c = await enrichVisit(visit("rec00003"), "none");
    rec.record(c);
    await rec.flush();
    rec.record(c);
    await rec.flush();
    expect(await stored("rec00003")).toBe(1);
    expect(await rolled("rec00003")).toBe(1);
    await rec.close();
  });
});

describe("enrichVisit (in the batch writer)", () => {
  it("parses the user agent and looks up the GeoIP location of public addresses", async () => {
    const c = await enrichVisit(visit("x", 0, { userAgent: PEOPLE.androidChrome, ip: "81.2.69.160", referer: "https://r.example/" }), "none");
    expect(c).toMatchObject({
      device: "mobile",
      platform: "Android",
      browser: "Chrome 131",
      country: "GB",
      timezone: "Europe/London",
      referer: "https://r.example/",
      rule: "url",
    });
    expect(c.ts).toMatch(/^\d{13}#[0-9a-z]+$/);
    expect((await enrichVisit(visit("x", 0, { ip: "10.0.0.1" }), "none")).country).toBeNull();
  });

  it("trusted edge facts win over the user agent and GeoIP", async () => {
    const edge = {
      country: "PT",
      region: "11",
      regionName: "Lisboa",
      city: "Lisbon",
      timezone: "Europe/Lisbon",
      lat: 38.7,
      lng: -9.1,
      device: "tablet" as const,
      os: "ios" as const,
    };
    const c = await enrichVisit(visit("x", 0, { userAgent: PEOPLE.ipadAsMac, ip: "81.2.69.160", edge }), "cloudfront");
    expect(c).toMatchObject({ country: "PT", regionName: "Lisboa", device: "tablet", platform: "iOS" });
  });
});
