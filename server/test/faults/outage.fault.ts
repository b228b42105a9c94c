import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clickCounts, clickTallies, freshPostgresDatabase, postJson, redirectLoad, sleep, startInstance, type Instance } from "./instances";

/**
 * PostgreSQL stopped for ~30 s under redirect load. A PRIVATE cluster (port 54329)
 * is stopped, never the machine's shared one. Cached links keep redirecting; clicks wait in a
 * bounded buffer that spills to DATA_DIR (CLICK_BUFFER_MAX is small here, so it must spill);
 * the API answers 503 SERVICE_UNAVAILABLE with Retry-After quickly; /_/health says degraded;
 * once PostgreSQL is back, every answered redirect's click is stored.
 */
const VERSION = readdirSync("/etc/postgresql").sort().at(-1) ?? "15";
const CLUSTER = "faults";
const PORT = 54329;
const SERVER = `postgres://postgres@127.0.0.1:${PORT}/postgres`;
const OUTAGE_MS = Number(process.env.FAULTS_OUTAGE_MS) || 30_000;

const ctl = (action: "start" | "stop") =>
  execFileSync("pg_ctlcluster", ["--skip-systemctl-redirect", VERSION, CLUSTER, action, ...(action === "stop" ? ["-m", "fast"] : [])], { stdio: "pipe" });

/** Creates the private cluster once (trust auth on local connections), and starts it. */
function ensureCluster() {
  if (!existsSync(`/etc/postgresql/${VERSION}/${CLUSTER}`)) {
    execFileSync("pg_createcluster", [VERSION, CLUSTER, "-p", String(PORT), "--start-conf=manual", "--", "--auth-local=trust", "--auth-host=trust"], {
      stdio: "pipe",
    });
  }
  try {
    ctl("start");
  } catch (e) {
    // Already running is fine; anything else shows up as a failed connection below.
    const out = e as { stdout?: Buffer; stderr?: Buffer };
    if (!`${out.stdout ?? ""}${out.stderr ?? ""}`.includes("already running")) throw e;
  }
}

let inst: Instance | undefined;
let dropDb: (() => Promise<void>) | undefined;
beforeAll(() => ensureCluster());
afterAll(async () => {
  try {
    ctl("start");
  } catch {
    // already running
  }
  await inst?.stop("SIGKILL");
  await dropDb?.();
});

const timed = async <T>(p: Promise<T>) => {
  const started = Date.now();
  const value = await p;
  return { value, ms: Date.now() - started };
};

type Load = ReturnType<typeof redirectLoad>;
type ApiAnswer = { status: number; retryAfter: string | null; body: string; ms: number };

/** Stops PostgreSQL for OUTAGE_MS and polls the API, the health check and the spill folder every 2 s meanwhile. */
async function observeOutage(server: Instance, dataDir: string, load: Load, slugs: string[]) {
  ctl("stop");
  const stoppedAt = Date.now();
  const beforeOutage = { ...Object.fromEntries(load.result.answered) };
  const spoolSeen: number[] = [];
  const apiAnswers: ApiAnswer[] = [];
  const healthAnswers: { status: number; body: string }[] = [];
  while (Date.now() - stoppedAt < OUTAGE_MS) {
    const api = await timed(
      fetch(`${server.api}/links`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ url: "https://example.com/during" }),
      }),
    );
    apiAnswers.push({ status: api.value.status, retryAfter: api.value.headers.get("retry-after"), body: await api.value.text(), ms: api.ms });
    const health = await fetch(`${server.redirect}/_/health`);
    healthAnswers.push({ status: health.status, body: await health.text() });
    spoolSeen.push(spoolFiles(dataDir).length);
    await sleep(2000);
  }
  const duringOutage = Object.fromEntries(slugs.map((s) => [s, (load.result.answered.get(s) ?? 0) - (beforeOutage[s] ?? 0)]));
  return { duringOutage, otherDuring: Object.fromEntries(load.result.other), spoolSeen, apiAnswers, healthAnswers };
}

const spoolFiles = (dataDir: string) => (existsSync(path.join(dataDir, "click-spool")) ? readdirSync(path.join(dataDir, "click-spool")) : []);

/** Starts PostgreSQL again, waits until the API creates links again and the answered clicks are stored, and stops the load. */
async function recover(server: Instance, links: { id: string; slug: string }[], load: Load, databaseUrl: string) {
  ctl("start");
  let back = 0;
  for (let i = 0; i < 60 && back !== 201; i++) {
    back = (await postJson(`${server.api}/links`, { url: "https://example.com/after" })).status;
    if (back !== 201) await sleep(1000);
  }
  const result = await load.stop();
  for (let i = 0; i < 60; i++) {
    const stored = await clickCounts({ databaseUrl });
    if (links.every((l) => (stored.get(l.id) ?? 0) >= (result.answered.get(l.slug) ?? 0))) break;
    await sleep(1000);
  }
  return { back, result };
}

/** The server's own answer times of the API's 503s before `until` (the test process also drives the load, so its clock is busy). */
const serverAnswerMs = (server: Instance, until: number) =>
  server.output
    .join("")
    .split("\n")
    .filter((l) => l.includes('"msg":"request"') && l.includes('"path":"/links"') && l.includes('"status":503'))
    .map((l) => JSON.parse(l) as { ms: number; time: number })
    .filter((l) => l.time < until)
    .map((l) => l.ms);

describe("PostgreSQL outage under redirect load", () => {
  it("cached links redirect, clicks spill to DATA_DIR and are all written after; API 503 + Retry-After; health degraded", async () => {
    const db = await freshPostgresDatabase(SERVER);
    dropDb = db.drop;
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "faults-outage-"));
    inst = await startInstance({ DATA_DIR: dataDir, DATABASE_URL: db.url, CLICK_BUFFER_MAX: "300" });
    const links: { id: string; slug: string }[] = [];
    for (let i = 0; i < 4; i++) links.push(JSON.parse((await postJson(`${inst.api}/links`, { url: `https://example.com/o${i}` })).body));
    const slugs = links.map((l) => l.slug);
    const load = redirectLoad(() => inst!.redirect, slugs, 8);
    await sleep(1500);

    const outage = await observeOutage(inst, dataDir, load, slugs);
    // The API calls made during the outage are the ones logged before this (the retries below may be 503 too).
    const restartedAt = Date.now();
    const { back, result } = await recover(inst, links, load, db.url);
    const serverMs = serverAnswerMs(inst, restartedAt);
    // The writer may still be reading spill files back: let it finish before the final tally.
    for (let i = 0; i < 30 && spoolFiles(dataDir).length; i++) await sleep(1000);
    const tallies = await clickTallies({ databaseUrl: db.url });
    const figures = links.map((l) => ({
      slug: l.slug,
      sent: result.sent.get(l.slug) ?? 0,
      answered: result.answered.get(l.slug) ?? 0,
      stored: tallies.clicks.get(l.id) ?? 0,
      rollup: tallies.rollups.get(l.id) ?? 0,
      duringOutage: outage.duringOutage[l.slug],
    }));
    console.log(
      `outage ${OUTAGE_MS} ms: ${JSON.stringify(figures)}; spool files seen ${JSON.stringify(outage.spoolSeen)}; API ${JSON.stringify(outage.apiAnswers.map((a) => [a.status, a.ms]))} (server ms ${JSON.stringify(serverMs)}); ` +
        `other statuses during ${JSON.stringify(outage.otherDuring)}; connection errors ${result.errors}`,
    );

    expect(back, "API answers again after the outage").toBe(201);
    for (const f of figures) expect(f.duringOutage, `${f.slug}: cached link kept redirecting`).toBeGreaterThan(20);
    expect(outage.otherDuring, "no 5xx for cached links").toEqual({});
    expect(Math.max(...outage.spoolSeen), "clicks spilled to DATA_DIR beyond the memory bound").toBeGreaterThan(0);
    for (const a of outage.apiAnswers) {
      expect(a.status, a.body).toBe(503);
      expect(JSON.parse(a.body)).toEqual({ error: "SERVICE_UNAVAILABLE" });
      expect(Number(a.retryAfter), "Retry-After").toBeGreaterThan(0);
      expect(a.ms, "answered, not hung (client side, generous: the test process is busy with the load)").toBeLessThan(30_000);
    }
    expect(serverMs.length).toBe(outage.apiAnswers.length);
    for (const ms of serverMs) expect(ms, "503 quickly (server side)").toBeLessThan(5_000);
    for (const h of outage.healthAnswers) {
      expect(h.status).toBe(503);
      expect(JSON.parse(h.body).status).toBe("degraded");
    }
    for (const f of figures) {
      expect(f.stored, `${f.slug}: every answered redirect is stored`).toBeGreaterThanOrEqual(f.answered);
      expect(f.stored, `${f.slug}: none twice`).toBeLessThanOrEqual(f.sent);
      expect(f.rollup, `${f.slug}: hourly rollups count each stored click once`).toBe(f.stored);
    }
    expect(spoolFiles(dataDir), "spill files removed once written").toEqual([]);
    // No secret-shaped value in what the server logged through the outage (errors carry SQL parameters).
    expect(inst.output.join("")).not.toMatch(/tok_[0-9A-Za-z]{32}|scrypt\$\d+\$/);
    expect(await inst.stop(), "stops cleanly after the outage").toBe(0);
  });
});
