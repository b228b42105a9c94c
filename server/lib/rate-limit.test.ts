import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestServer, http, type TestServer } from "../test/harness";

let t: TestServer;
beforeAll(async () => {
  t = await createTestServer();
});
afterAll(() => t?.close());

describe("rate limits", () => {
  it("allows 100 token requests an hour on the free plan, exact under concurrent requests, then 429 with Retry-After", async () => {
    const u = await t.user();
    const results = await Promise.all(Array.from({ length: 105 }, () => http(`${t.api}/links`, { headers: u.auth })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(100);
    const limited = results.filter((r) => r.status === 429);
    expect(limited).toHaveLength(5);
    expect(limited[0].json).toEqual({ error: "RATE_LIMITED" });
    expect(Number(limited[0].headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited[0].headers.get("ratelimit-remaining")).toBe("0");
  });

  it("counts per token, so another user's token is not affected", async () => {
    const u = await t.user();
    const r = await http(`${t.api}/links`, { headers: u.auth });
    expect(r.status).toBe(200);
    expect(r.headers.get("ratelimit-remaining")).toBe("99");
  });

  it("gives the pro plan 10,000 requests an hour", async () => {
    const u = await t.user({ plan: "pro" });
    const r = await http(`${t.api}/links`, { headers: u.auth });
    expect(r.headers.get("ratelimit-limit")).toBe("10000");
  });

  it("limits anonymous link creation to 30 an hour per client address", async () => {
    const results = [];
    for (let i = 0; i < 31; i++) results.push(await http(`${t.api}/links`, { method: "POST", json: { url: "https://example.com/anon" } }));
    expect(results.slice(0, 30).every((r) => r.status === 201)).toBe(true);
    expect(results[30].status).toBe(429);
    expect(results[30].json).toEqual({ error: "RATE_LIMITED" });
    expect(Number(results[30].headers.get("retry-after"))).toBeGreaterThan(0);
  });
});
