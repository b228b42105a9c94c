import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "../../../db/client";
import { createUserWithWorkspace, issueToken } from "../../lib/users";
import { freshPostgresDatabase, startInstance, type Instance } from "./instances";

/**
 * Two processes on one PostgreSQL and one Redis. Token and report limits are exact
 * across them (Redis counters), and a PATCH or DELETE on one takes effect on the other's next
 * redirect (LISTEN/NOTIFY cache invalidation). A fresh database on the shared server; random
 * client addresses (TRUST_PROXY) and slugs, so counters left in Redis by earlier runs don't matter.
 */
const PG_SERVER = process.env.FAULTS_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const REDIS = process.env.FAULTS_REDIS_URL ?? "redis://127.0.0.1:6379";

let a: Instance, b: Instance, db: Database, drop: () => Promise<void>;
beforeAll(async () => {
  const fresh = await freshPostgresDatabase(PG_SERVER);
  drop = fresh.drop;
  const env = { DATABASE_URL: fresh.url, REDIS_URL: REDIS, TRUST_PROXY: "true" };
  a = await startInstance({ ...env, DATA_DIR: mkdtempSync(path.join(os.tmpdir(), "faults-a-")) });
  b = await startInstance({ ...env, DATA_DIR: mkdtempSync(path.join(os.tmpdir(), "faults-b-")) });
  db = await openDatabase({ databaseUrl: fresh.url, migrate: false, poolSize: 2 });
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await db?.close();
  await drop?.();
});

const ip = () => `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${1 + (randomBytes(1)[0] % 250)}`;
const tokenFor = async (plan: "free" | "pro") => {
  const user = await createUserWithWorkspace(db.db, { email: `i${randomBytes(5).toString("hex")}@example.com`, plan });
  return (await issueToken(db.db, user.id, "faults")).token;
};

/** Runs `n` requests, `width` at a time, alternating between the two instances. */
async function spread(n: number, width: number, one: (inst: Instance, i: number) => Promise<number>): Promise<number[]> {
  const statuses: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) {
        const i = next++;
        statuses.push(await one(i % 2 ? b : a, i));
      }
    }),
  );
  return statuses;
}
const count = (xs: number[], v: number) => xs.filter((x) => x === v).length;

describe("two instances on one PostgreSQL and one Redis", () => {
  it("the free plan's 100 token requests an hour are exact across both: 130 sent, exactly 100 answered", async () => {
    const token = await tokenFor("free");
    const statuses = await spread(130, 10, async (inst) => (await fetch(`${inst.api}/links`, { headers: { authorization: `Bearer ${token}` } })).status);
    console.log(`token limit across instances: ${count(statuses, 200)} × 200, ${count(statuses, 429)} × 429`);
    expect(count(statuses, 200)).toBe(100);
    expect(count(statuses, 429)).toBe(30);
  });

  it("reports per caller address (10 an hour) are exact across both", async () => {
    const from = ip();
    const statuses = await spread(16, 8, async (inst) => {
      const res = await fetch(`${inst.api}/reports`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": from },
        body: JSON.stringify({ url: `r${randomBytes(6).toString("hex")}`, reason: "spam" }),
      });
      return res.status;
    });
    expect(count(statuses, 200)).toBe(10);
    expect(count(statuses, 429)).toBe(6);
  });

  it("reports per reported slug (20 an hour) are exact across both", async () => {
    const slug = `s${randomBytes(6).toString("hex")}`;
    const statuses = await spread(28, 8, async (inst) => {
      const res = await fetch(`${inst.api}/reports`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": ip() },
        body: JSON.stringify({ url: slug, reason: "phishing" }),
      });
      return res.status;
    });
    expect(count(statuses, 200)).toBe(20);
    expect(count(statuses, 429)).toBe(8);
  });

  it("a PATCH on one instance takes effect on the other's next redirect; so does a DELETE", async () => {
    const auth = { authorization: `Bearer ${await tokenFor("pro")}`, "content-type": "application/json" };
    const link = await (await fetch(`${a.api}/links`, { method: "POST", headers: auth, body: JSON.stringify({ url: "https://example.com/v0" }) })).json();
    const visit = (inst: Instance) => fetch(`${inst.redirect}/${link.slug}`, { redirect: "manual", headers: { "user-agent": "Mozilla/5.0 Firefox/120.0" } });
    for (let v = 1; v <= 5; v++) {
      // Both have the current version cached now.
      expect((await visit(a)).status).toBe(301);
      expect((await visit(b)).status).toBe(301);
      const writer = v % 2 ? a : b;
      const patched = await fetch(`${writer.api}/links/${link.id}`, {
        method: "PATCH",
        headers: auth,
        body: JSON.stringify({ url: `https://example.com/v${v}` }),
      });
      expect(patched.status).toBe(200);
      const reader = writer === a ? b : a;
      expect((await visit(reader)).headers.get("location"), `update ${v} seen by the other instance`).toBe(`https://example.com/v${v}`);
    }
    expect((await fetch(`${a.api}/links/${link.id}`, { method: "DELETE", headers: auth })).status).toBe(204);
    expect((await visit(b)).status, "deleted on A, gone on B").toBe(404);
  });
});
