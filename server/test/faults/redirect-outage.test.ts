import { createServer, request, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { DrizzleQueryError } from "drizzle-orm/errors";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createRedirectApp } from "../../redirect/adapter";
import { LINK_CHANNEL, type AppServices } from "../../core/services";
import { createTestApp, type TestApp } from "../harness";
import { withFailingReads } from "./failing-reads";

/**
 * The redirect host during a database outage: cached links keep answering
 * at once past their cache lifetime, and failed lookups are logged once, not once per request.
 */
let t: TestApp;
let server: Server | undefined;
beforeAll(async () => void (t = await createTestApp()));
afterAll(async () => {
  server?.close();
  await t.close();
});

/** The redirect host over a database whose reads fail after `delayMs` like the driver's (query and params in the error). */
async function redirectHostWithOutage(delayMs: number) {
  const state = { reads: 0 };
  const lines: { msg: string; [k: string]: unknown }[] = [];
  const raw: string[] = [];
  const db = withFailingReads(t.app.db, () => {
    state.reads++;
    const cause = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
    return new Promise<never>((_, reject) =>
      setTimeout(() => reject(new DrizzleQueryError('select … from "links" where "slug" = $1', ["some-slug"], cause)), delayMs),
    );
  });
  const log = pino({ level: "debug" }, { write: (s: string) => void (raw.push(s), lines.push(JSON.parse(s))) });
  const app = { ...t.app, db, log } as AppServices;
  server = createServer(createRedirectApp(app));
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const get = async (slug: string) => {
    const started = Date.now();
    // As the redirect domain: the host serves branded domains by Host, and this server's own port is no served host.
    const r = await new Promise<IncomingMessage>((resolve, reject) =>
      request(`${base}/${slug}`, { headers: { host: t.app.config.redirectDomain, "user-agent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0" } }, resolve)
        .on("error", reject)
        .end(),
    );
    r.resume();
    await new Promise((done) => r.on("end", done));
    const location = r.headers.location;
    return { status: r.statusCode, location: location ?? null, ms: Date.now() - started };
  };
  return { state, lines, raw, get };
}

describe("redirect host during a database outage", () => {
  it("expired cache entries answer at once once the outage is known; failed lookups log one line, without the query", async () => {
    const u = await t.user();
    const links = await Promise.all(["one", "two", "three"].map((n) => t.caller(u.auth).link.create({ url: `https://example.com/${n}` })));
    // Let the creates' own NOTIFYs arrive first (delivered in order): they would drop the entries set below.
    t.app.linkCache.set("settle-notify", { miss: true, cachedAt: Date.now() });
    await t.app.database.notify(LINK_CHANNEL, "settle-notify");
    await vi.waitFor(() => expect(t.app.linkCache.get("settle-notify")).toBeUndefined(), { timeout: 20_000 }); // not 1 s: a busy machine may take longer
    const host = await redirectHostWithOutage(300);
    // Cached, but past the cache lifetime.
    for (const l of links)
      t.app.linkCache.set(l.slug, {
        id: l.id,
        workspaceId: u.workspaceId,
        slug: l.slug,
        url: l.url,
        kind: "link",
        expiresAt: null,
        expirationUrl: null,
        targeting: null,
        passwordHash: null,
        ogTitle: null,
        ogDescription: null,
        ogImage: null,
        updatedAt: 0,
        cachedAt: 0,
      });

    const first = await host.get(links[0].slug);
    expect(first).toMatchObject({ status: 301, location: "https://example.com/one" });
    for (const l of links.slice(1)) {
      const r = await host.get(l.slug);
      expect(r).toMatchObject({ status: 301, location: l.url });
      expect(r.ms, "answered without waiting on the database").toBeLessThan(150);
    }
    expect(host.state.reads).toBe(1);

    // Slugs never cached fail with 503; the log gets one line for all of them.
    const missing = await Promise.all(Array.from({ length: 10 }, (_, i) => host.get(`never-cached-${i}`)));
    expect(missing.map((r) => r.status)).toEqual(Array(10).fill(503));
    const failed = host.lines.filter((l) => /redirect lookup failed/.test(l.msg));
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ code: "ECONNREFUSED" });
    expect(host.raw.join("")).not.toMatch(/some-slug|select/);
  });
});
