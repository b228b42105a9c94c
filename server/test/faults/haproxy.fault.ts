import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "../../../db/client";
import { createUserWithWorkspace, issueToken } from "../../lib/users";
import { ensureHaproxy, ensurePackage, startHaproxy, type Balancer } from "./haproxy";
import { clickTallies, freshPostgresDatabase, redirectLoad, sleep, startInstance, total, type Instance } from "./instances";

/**
 * Two instances on one PostgreSQL and one Redis behind HAProxy (deploy/haproxy.cfg, Debian's
 * package, as a child process). HAProxy alternates between them (roundrobin), so consecutive requests
 * through it reach both. The rolling restart relies on the drain: after SIGTERM `/_/health` answers 503
 * for DRAIN_DELAY_MS while requests are still served, so HAProxy's checks take the instance out before it
 * stops listening.
 */
const PG_SERVER = process.env.FAULTS_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const REDIS = process.env.FAULTS_REDIS_URL ?? "redis://127.0.0.1:6379";
const haproxy = ensureHaproxy();
if (!haproxy.ok) console.warn(`haproxy.fault.ts skipped: ${haproxy.why}`);
// Installed here, before any connection is open: the install blocks the event loop for as long as apt
// takes, and a kept-alive connection HAProxy closed meanwhile would be reused before its close is read.
const caddy = haproxy.ok ? ensurePackage("caddy") : haproxy;

const portOf = (url: string) => Number(new URL(url).port);
const UA = { "user-agent": "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0" };

let a: Instance, b: Instance, lb: Balancer, db: Database, databaseUrl: string, drop: () => Promise<void>;
const dirs = [mkdtempSync(path.join(os.tmpdir(), "faults-lb-a-")), mkdtempSync(path.join(os.tmpdir(), "faults-lb-b-"))];
const env = (i: number) => ({ DATABASE_URL: databaseUrl, REDIS_URL: REDIS, TRUST_PROXY: "true", DRAIN_DELAY_MS: "4000", DATA_DIR: dirs[i] });

beforeAll(async () => {
  if (!haproxy.ok) return;
  const fresh = await freshPostgresDatabase(PG_SERVER);
  [databaseUrl, drop] = [fresh.url, fresh.drop];
  a = await startInstance(env(0));
  b = await startInstance(env(1));
  lb = await startHaproxy([
    { app: portOf(a.appUrl), redirect: portOf(a.redirect) },
    { app: portOf(b.appUrl), redirect: portOf(b.redirect) },
  ]);
  db = await openDatabase({ databaseUrl, migrate: false, poolSize: 2 });
});
afterAll(async () => {
  await lb?.stop();
  await Promise.all([a?.stop("SIGKILL"), b?.stop("SIGKILL")]);
  await db?.close();
  await drop?.();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const tokenFor = async (plan: "free" | "pro") => {
  const user = await createUserWithWorkspace(db.db, { email: `lb${randomBytes(5).toString("hex")}@example.com`, plan });
  return (await issueToken(db.db, user.id, "faults")).token;
};
/** Redirects an instance has answered (its /_/metrics, loopback only). */
async function redirectsServed(inst: Instance): Promise<number> {
  const text = await (await fetch(`${inst.redirect}/_/metrics`)).text();
  return [...text.matchAll(/^redirects_total\{[^}]*\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
}
const visit = (base: string, slug: string) => fetch(`${base}/${slug}`, { redirect: "manual", headers: UA });

/** API load through HAProxy beside the redirects: listings and creations, two at a time; `stop` answers every status seen (0: no answer). */
function apiLoad(auth: Record<string, string>) {
  const statuses: number[] = [];
  let running = true;
  const loops = Array.from({ length: 2 }, async (_, k) => {
    for (let i = 0; running; i++) {
      const req =
        i % 4 === 0
          ? fetch(`${lb.app}/api/links`, { method: "POST", headers: auth, body: JSON.stringify({ url: `https://example.com/api-${k}-${i}` }) })
          : fetch(`${lb.app}/api/links`, { headers: auth });
      statuses.push(await req.then(async (r) => (await r.arrayBuffer(), r.status)).catch(() => 0));
    }
  });
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
      return statuses;
    },
  };
}

/**
 * One step of a rolling restart: SIGTERM to instance `i`, which drains (health says 503 while it still
 * answers, so HAProxy's checks, 500 ms apart, two failures, take it out and its redirect count stops
 * growing before it closes), exits 0, and is started again on the same ports.
 */
async function drainAndRestart(inst: Instance, i: number): Promise<Instance> {
  await sleep(1500);
  const before = await redirectsServed(inst);
  inst.proc.kill("SIGTERM");
  for (let n = 0; n < 20 && (await fetch(`${inst.redirect}/_/health`)).status !== 503; n++) await sleep(50);
  expect((await fetch(`${inst.redirect}/_/health`)).status, "health while draining").toBe(503);
  await sleep(2000); // two failed checks 500 ms apart, with room for a busy machine
  const out = await redirectsServed(inst);
  await sleep(500);
  expect(await redirectsServed(inst), "no redirect reaches a draining instance once HAProxy took it out").toBe(out);
  expect(out, "it served load until then").toBeGreaterThan(before);
  expect(await inst.exited, inst.output.join("").slice(-2000)).toBe(0);
  const again = await startInstance(env(i), { app: portOf(inst.appUrl), redirect: portOf(inst.redirect) });
  await sleep(2000); // HAProxy's `rise 2`, checks 500 ms apart
  return again;
}

describe.skipIf(!haproxy.ok)("two instances behind HAProxy", () => {
  it("a link created through one instance redirects on the other, directly and through HAProxy", async () => {
    const auth = { authorization: `Bearer ${await tokenFor("pro")}`, "content-type": "application/json" };
    const created = await fetch(`${a.api}/links`, { method: "POST", headers: auth, body: JSON.stringify({ url: "https://example.com/made-on-a" }) });
    expect(created.status).toBe(201);
    const { slug } = await created.json();
    const onB = await visit(b.redirect, slug);
    expect(onB.status).toBe(301);
    expect(onB.headers.get("location")).toBe("https://example.com/made-on-a");
    // Two in a row through HAProxy: one on each instance.
    for (let i = 0; i < 2; i++) expect((await visit(lb.redirect, slug)).headers.get("location")).toBe("https://example.com/made-on-a");
  });

  it("a PATCH through HAProxy is followed by both instances on their next request", async () => {
    const auth = { authorization: `Bearer ${await tokenFor("pro")}`, "content-type": "application/json" };
    const link = await (await fetch(`${lb.app}/api/links`, { method: "POST", headers: auth, body: JSON.stringify({ url: "https://example.com/p0" }) })).json();
    for (let v = 1; v <= 4; v++) {
      // Both instances have the current version cached.
      for (const inst of [a, b]) expect((await visit(inst.redirect, link.slug)).status).toBe(301);
      const patched = await fetch(`${lb.app}/api/links/${link.id}`, {
        method: "PATCH",
        headers: auth,
        body: JSON.stringify({ url: `https://example.com/p${v}` }),
      });
      expect(patched.status).toBe(200);
      for (const base of [lb.redirect, lb.redirect, a.redirect, b.redirect]) {
        expect((await visit(base, link.slug)).headers.get("location"), `version ${v} on ${base}`).toBe(`https://example.com/p${v}`);
      }
    }
  });

  it("the free plan's 100 token requests an hour are exact through HAProxy: 130 sent, exactly 100 answered", async () => {
    const token = await tokenFor("free");
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (statuses.length < 130) {
          statuses.push(-1);
          const i = statuses.length - 1;
          statuses[i] = (await fetch(`${lb.app}/api/links`, { headers: { authorization: `Bearer ${token}` } })).status;
        }
      }),
    );
    const n = (s: number) => statuses.filter((x) => x === s).length;
    expect([n(200), n(429)]).toEqual([100, 30]);
  });

  it("deploy/Caddyfile sends the dashboard to HAProxy's app frontend, the redirect and branded domains to its redirect frontend", async () => {
    if (!caddy.ok) return console.warn(`Caddyfile check skipped: ${caddy.why}`);
    const env = {
      ...process.env,
      APP_UPSTREAM: new URL(lb.app).host,
      REDIRECT_UPSTREAM: new URL(lb.redirect).host,
      APP_HOST: "app.example.test",
      REDIRECT_HOST: "s.example.test",
    };
    const json = JSON.parse(
      execFileSync("caddy", ["adapt", "--validate", "--adapter", "caddyfile", "--config", "deploy/Caddyfile"], {
        env,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      }),
    );
    type Route = { match?: { host: string[] }[]; handle: { routes: { handle: { upstreams?: { dial: string }[] }[] }[] }[] };
    const routes = (json.apps.http.servers.srv0.routes as Route[]).map((r) => [
      r.match?.[0].host.join(",") ?? "*",
      r.handle[0].routes[0].handle[0].upstreams?.[0].dial,
    ]);
    expect(routes).toEqual([
      ["app.example.test", env.APP_UPSTREAM],
      ["s.example.test", env.REDIRECT_UPSTREAM],
      ["*", env.REDIRECT_UPSTREAM],
    ]);
    expect(json.apps.tls.automation.on_demand.ask).toBe(`${lb.redirect}/_/tls/ask`);
    expect(json.apps.tls.automation.policies[1]).toEqual({ on_demand: true });
    // Caddy's question reaches an instance through HAProxy: no certificate for a host served by no one.
    expect((await fetch(`${json.apps.tls.automation.on_demand.ask}?domain=nobody.example.test`)).status).toBe(404);
  });

  // Last: it ends with both instances stopped, to count the clicks they wrote.
  it("a rolling restart under load (SIGTERM one, start it, then the other) loses no request and no click", async () => {
    const token = await tokenFor("pro");
    const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const links: { id: string; slug: string }[] = [];
    for (let i = 0; i < 4; i++)
      links.push(
        await (await fetch(`${lb.app}/api/links`, { method: "POST", headers: auth, body: JSON.stringify({ url: `https://example.com/r${i}` }) })).json(),
      );

    const load = redirectLoad(
      () => lb.redirect,
      links.map((l) => l.slug),
      8,
    );
    const api = apiLoad(auth);
    a = await drainAndRestart(a, 0);
    b = await drainAndRestart(b, 1);
    await sleep(1000);
    const result = await load.stop();
    const apiStatuses = await api.stop();
    // Both stop (flushing their clicks) before the count.
    for (const inst of [a, b]) expect(await inst.stop()).toBe(0);

    const tallies = await clickTallies({ databaseUrl });
    const figures = links.map((l) => ({
      slug: l.slug,
      sent: result.sent.get(l.slug) ?? 0,
      answered: result.answered.get(l.slug) ?? 0,
      stored: tallies.clicks.get(l.id) ?? 0,
    }));
    const tally = Object.fromEntries([...new Set(apiStatuses)].map((s) => [s, apiStatuses.filter((x) => x === s).length]));
    console.log(
      `rolling restart: redirects ${JSON.stringify(figures)}; connection errors ${result.errors}; other statuses ${JSON.stringify([...result.other])}; API ${JSON.stringify(tally)}`,
    );
    expect(result.errors, "redirects without an answer").toBe(0);
    expect([...result.other], "redirects answered other than 301/302").toEqual([]);
    expect(total(result.answered)).toBeGreaterThan(100);
    expect(
      apiStatuses.filter((s) => s !== 200 && s !== 201),
      "API requests not answered 200/201",
    ).toEqual([]);
    for (const f of figures) expect(f.stored, `${f.slug}: every answered redirect's click is stored, once`).toBe(f.answered);
  });
});
