import type { Sql } from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type express from "express";
import { loader as linksLoader } from "../../../app/routes/_app.links._index";
import { loader as rootLoader } from "../../../app/root";
import { remixContext } from "../../http/remix";
import { http, pollUntil } from "../harness";
import { signIn, startLoggedServer, type LoggedServer } from "../security/servers";

/**
 * Every door while PostgreSQL refuses connections (the database's ALLOW_CONNECTIONS off, its
 * sessions ended): REST, the typed tRPC endpoint and the dashboard's pages answer 503 with
 * Retry-After; the log says "database unavailable" once and "database available" once it is back,
 * with no line per request and no personal data (the e-mail addresses of sign-in attempts).
 * Only a real PostgreSQL refuses connections.
 */
describe.skipIf(!process.env.DATABASE_URL)("the database refusing connections", () => {
  let s: LoggedServer;
  let admin: Sql;
  let name: string;
  let token: string;
  let cookie: Record<string, string>;
  /** Log lines before this were written before the outage (the outbox's sign-in mail among them). */
  let outageFrom = 0;
  const refuse = async (on: boolean) => {
    await admin.unsafe(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS ${on ? "false" : "true"}`);
    if (on) await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${name} AND pid <> pg_backend_pid()`;
  };
  beforeAll(async () => {
    s = await startLoggedServer({ remix: true });
    name = new URL(s.app.database.url!).pathname.slice(1);
    admin = (await import("postgres")).default(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
    ({ cookie } = await signIn(s, "doors@example.com"));
    const created = await http(`${s.api}/account/tokens`, { method: "POST", headers: cookie, json: { name: "doors" } });
    token = created.json.token as string;
    outageFrom = s.lines.length;
    await refuse(true);
  });
  afterAll(async () => {
    await refuse(false).catch(() => {});
    await admin?.end();
    await s?.close();
  });

  /** A dashboard request's load context, as server/http/remix.ts builds it for Express. */
  const dashboardContext = (headers: Record<string, string>) => {
    const req = { method: "GET", headers, ip: "127.0.0.1" } as unknown as express.Request;
    const res = { headersSent: false, setHeader() {}, appendHeader() {}, locals: {}, once() {} } as unknown as express.Response;
    return remixContext(s.app, req, res);
  };
  const thrown = async (p: Promise<unknown>) =>
    p.then(
      () => undefined,
      (e: unknown) => e,
    );

  it("REST answers 503 SERVICE_UNAVAILABLE with Retry-After", async () => {
    const r = await http(`${s.api}/links`, { headers: { authorization: `Bearer ${token}` } });
    expect(r.status).toBe(503);
    expect(r.json).toEqual({ error: "SERVICE_UNAVAILABLE" });
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("tRPC answers 503 with Retry-After, with the public code", async () => {
    const r = await http(`${s.api}/trpc/link.list?input=${encodeURIComponent("{}")}`, { headers: { authorization: `Bearer ${token}` } });
    expect(r.status).toBe(503);
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(r.json.error.data.error).toBe("SERVICE_UNAVAILABLE");
    expect(r.text).not.toMatch(/stack|select |params/i);
  });

  it("dashboard loaders answer the 503 page with Retry-After: the signed-in header and a list page", async () => {
    for (const run of [
      () => rootLoader({ request: new Request(`${s.appUrl}/links`), context: dashboardContext(cookie), params: {} } as never),
      () => linksLoader({ request: new Request(`${s.appUrl}/links`, { headers: cookie }), context: dashboardContext(cookie), params: {} } as never),
    ]) {
      const e = await thrown(run());
      expect(e).toBeInstanceOf(Response);
      const page = e as Response;
      expect(page.status).toBe(503);
      expect(Number(page.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(await page.text()).toMatch(/briefly unavailable/);
    }
  });

  it("a dashboard page over HTTP is the 503 page with Retry-After", async () => {
    const r = await fetch(`${s.appUrl}/links`, { headers: cookie, redirect: "manual" });
    const html = await r.text();
    expect(r.status).toBe(503);
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(html).toContain("Briefly unavailable");
    expect(html).toMatch(/briefly unavailable/);
  });

  it("one log line per state change, none per request, no personal data", async () => {
    const emails = ["outage-person@example.com", "someone.else@example.org"];
    for (let i = 0; i < 6; i++) {
      const r = await http(`${s.api}/auth/start`, { method: "POST", json: { email: emails[i % 2] } });
      expect(r.status).toBe(503);
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    const since = s.lines.length;
    const down = s.lines.filter((l) => l.includes('"msg":"database unavailable"'));
    expect(down, "the outage logged once").toHaveLength(1);
    expect(
      s.lines.filter((l) => /request failed|dashboard request failed/.test(l)),
      "no failure line per request",
    ).toEqual([]);
    await refuse(false);
    await pollUntil(
      async () => s.lines.slice(since).some((l) => l.includes('"msg":"database available"')),
      (back) => back,
      15_000,
    );
    expect((await http(`${s.api}/links`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect(
      s.lines.filter((l) => l.includes('"msg":"database available"')),
      "the return logged once",
    ).toHaveLength(1);
    const leaks = s.lines
      .slice(outageFrom)
      .filter((l) => emails.some((e) => l.includes(e)) || l.includes("doors@example.com") || /Failed query|params:/.test(l));
    expect(leaks).toEqual([]);
  });
});
