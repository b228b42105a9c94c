import { randomBytes, randomInt } from "node:crypto";
import { and, eq } from "drizzle-orm";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { idempotencyKeys, links } from "../../db/schema";
import { createUserWithWorkspace, issueToken } from "../lib/users";
import { http } from "../test/harness";
import { startTwoInstances, type Instance } from "../test/two-instances";
import { KEY_TTL_MS, fingerprint } from "./idempotency";

/**
 * Two service instances on one database (a second connection pool on PostgreSQL; the same embedded
 * database on PGlite), as behind a load balancer: a key taken on one is seen by the other.
 */
let a: Instance, b: Instance;
let close: (() => Promise<void>) | undefined;

beforeAll(async () => void ({ a, b, close } = await startTwoInstances({ SESSION_SECRET: "s".repeat(32), TRUST_PROXY: "true" })));
afterAll(() => close?.());

async function user() {
  const u = await createUserWithWorkspace(a.app.db, { email: `u${randomBytes(6).toString("hex")}@example.com`, plan: "pro" });
  const { token } = await issueToken(a.app.db, u.id, "t");
  return { ...u, auth: { authorization: `Bearer ${token}` } };
}
const newKey = () => `key-${randomBytes(8).toString("hex")}`;
const address = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
const post = (i: Instance, path: string, json: unknown, headers: Record<string, string>) => http(`${i.api}${path}`, { method: "POST", json, headers });
const linksOf = (workspaceId: string) => a.app.db.select({ id: links.id }).from(links).where(eq(links.workspaceId, workspaceId));
const uniqueUrl = () => `https://example.com/${randomBytes(6).toString("hex")}`;
/** `key` as a request creating a link of `body` in `u`'s workspace left it: still running, as far as its row says. */
const runningKey = (u: { workspaceId: string }, key: string, body: unknown, times: { createdAt: number; leaseUntil: number }) =>
  a.app.db.insert(idempotencyKeys).values({
    id: randomBytes(4).toString("hex"),
    scope: `w:${u.workspaceId}`,
    key,
    fingerprint: fingerprint("link.create", body),
    state: "running",
    ...times,
  });

describe("Idempotency-Key on POST /links", () => {
  it("the same key with the same body answers the first answer again (201 and body) and creates nothing", async () => {
    const u = await user();
    const key = newKey();
    const body = { url: uniqueUrl(), tags: ["a", "b"] };
    const first = await post(a, "/links", body, { ...u.auth, "idempotency-key": key });
    expect(first.status).toBe(201);
    // Members in another order are the same body.
    const again = await post(a, "/links", { tags: ["a", "b"], url: body.url }, { ...u.auth, "idempotency-key": key });
    expect(again.status).toBe(201);
    expect(again.json).toEqual(first.json);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await linksOf(u.workspaceId)).toEqual([{ id: first.json.id }]);
  });

  it("a replayed answer is the first answer's bytes, members in the same order, on either instance, for one link and a bulk", async () => {
    const u = await user();
    const key = newKey();
    const body = { url: uniqueUrl(), title: "A title", tags: ["b", "a"], forward_query: true };
    const first = await post(a, "/links", body, { ...u.auth, "idempotency-key": key });
    expect(first.status).toBe(201);
    for (const i of [a, b]) {
      const again = await post(i, "/links", body, { ...u.auth, "idempotency-key": key });
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.status).toBe(201);
      expect(again.text).toBe(first.text);
    }
    const bulkKey = newKey();
    const bulk = { links: [{ url: uniqueUrl() }, { url: "not a url" }] };
    const firstBulk = await post(a, "/links/bulk", bulk, { ...u.auth, "idempotency-key": bulkKey });
    const againBulk = await post(b, "/links/bulk", bulk, { ...u.auth, "idempotency-key": bulkKey });
    expect(againBulk.headers.get("idempotent-replayed")).toBe("true");
    expect([againBulk.status, againBulk.text]).toEqual([firstBulk.status, firstBulk.text]);
  });

  it("the same key with another body answers 422 IDEMPOTENCY_KEY_REUSED and creates nothing", async () => {
    const u = await user();
    const key = newKey();
    expect((await post(a, "/links", { url: uniqueUrl() }, { ...u.auth, "idempotency-key": key })).status).toBe(201);
    const other = await post(a, "/links", { url: uniqueUrl() }, { ...u.auth, "idempotency-key": key });
    expect(other.status).toBe(422);
    expect(other.json).toEqual({ error: "IDEMPOTENCY_KEY_REUSED" });
    expect(await linksOf(u.workspaceId)).toHaveLength(1);
    // The same key on the bulk path is another body too.
    expect((await post(a, "/links/bulk", { links: [{ url: uniqueUrl() }] }, { ...u.auth, "idempotency-key": key })).status).toBe(422);
  });

  it("while the first request with the key still runs: 409 IDEMPOTENCY_KEY_IN_USE", async () => {
    const u = await user();
    const key = newKey();
    const body = { url: uniqueUrl() };
    const now = Date.now();
    await runningKey(u, key, body, { createdAt: now, leaseUntil: now + 60_000 });
    const r = await post(a, "/links", body, { ...u.auth, "idempotency-key": key });
    expect(r.status).toBe(409);
    expect(r.json).toEqual({ error: "IDEMPOTENCY_KEY_IN_USE" });
    expect(await linksOf(u.workspaceId)).toEqual([]);
  });

  it("requests sent together with one key: one runs, the others answer 409 IDEMPOTENCY_KEY_IN_USE, not its answer once it is done", async () => {
    const u = await user();
    const key = newKey();
    // A bulk of 100 takes long enough that the others arrive while it runs, also on the embedded database.
    const body = { links: Array.from({ length: 100 }, () => ({ url: uniqueUrl() })) };
    const answers = await Promise.all([0, 1, 2].map(() => post(a, "/links/bulk", body, { ...u.auth, "idempotency-key": key })));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    for (const r of answers.filter((x) => x.status === 409)) expect(r.json).toEqual({ error: "IDEMPOTENCY_KEY_IN_USE" });
    expect(await linksOf(u.workspaceId)).toHaveLength(100);
    // Done: the key now answers the first answer again.
    const again = await post(a, "/links/bulk", body, { ...u.auth, "idempotency-key": key });
    expect([again.status, again.headers.get("idempotent-replayed")]).toEqual([200, "true"]);
  });

  it("a running key whose lease ran out (its instance stopped) is taken over", async () => {
    const u = await user();
    const key = newKey();
    const body = { url: uniqueUrl() };
    const now = Date.now();
    await runningKey(u, key, body, { createdAt: now - 10 * 60_000, leaseUntil: now - 5 * 60_000 });
    const r = await post(a, "/links", body, { ...u.auth, "idempotency-key": key });
    expect(r.status).toBe(201);
    expect(await linksOf(u.workspaceId)).toHaveLength(1);
  });

  it("a key is remembered for 24 hours: an older one is free again", async () => {
    const u = await user();
    const key = newKey();
    const body = { url: uniqueUrl() };
    const first = await post(a, "/links", body, { ...u.auth, "idempotency-key": key });
    await a.app.db
      .update(idempotencyKeys)
      .set({ createdAt: Date.now() - KEY_TTL_MS - 1000 })
      .where(and(eq(idempotencyKeys.scope, `w:${u.workspaceId}`), eq(idempotencyKeys.key, key)));
    const later = await post(a, "/links", body, { ...u.auth, "idempotency-key": key });
    expect(later.status).toBe(201);
    expect(later.json.id).not.toBe(first.json.id);
    expect(await linksOf(u.workspaceId)).toHaveLength(2);
  });

  it("a completed 4xx answer is replayed too", async () => {
    const u = await user();
    const slug = `idem-${randomBytes(5).toString("hex")}`;
    const taken = await post(a, "/links", { url: uniqueUrl(), slug }, u.auth);
    const key = newKey();
    const body = { url: uniqueUrl(), slug };
    const conflict = await post(a, "/links", body, { ...u.auth, "idempotency-key": key });
    expect(conflict.status).toBe(409);
    await http(`${a.api}/links/${taken.json.id}`, { method: "DELETE", headers: u.auth });
    // The slug is free now, but the key answers what it answered.
    const again = await post(a, "/links", body, { ...u.auth, "idempotency-key": key });
    expect([again.status, again.json]).toEqual([409, { error: "LINK_ID_ALREADY_IN_USE" }]);
    const invalid = { url: "ftp://x" };
    const bad = await post(a, "/links", invalid, { ...u.auth, "idempotency-key": `${key}-2` });
    expect(bad.status).toBe(400);
    expect(await post(a, "/links", invalid, { ...u.auth, "idempotency-key": `${key}-2` })).toMatchObject({ status: 400, json: bad.json });
  });

  it("a 429 leaves the key free", async () => {
    const ip = address();
    const key = newKey();
    const body = { url: uniqueUrl() };
    // Anonymous creation: 30 an hour per address.
    for (let i = 0; i < 30; i++) await post(a, "/links", { url: uniqueUrl() }, { "x-forwarded-for": ip });
    const limited = await post(a, "/links", body, { "x-forwarded-for": ip, "idempotency-key": key });
    expect(limited.status).toBe(429);
    expect(await a.app.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, key))).toEqual([]);
  });

  it("keys belong to a workspace, or to an address without a credential", async () => {
    const [u, v] = [await user(), await user()];
    const key = newKey();
    const body = { url: uniqueUrl() };
    const one = await post(a, "/links", body, { ...u.auth, "idempotency-key": key });
    const two = await post(a, "/links", body, { ...v.auth, "idempotency-key": key });
    expect([one.status, two.status]).toEqual([201, 201]);
    expect(two.json.id).not.toBe(one.json.id);
    const [ip1, ip2] = [address(), address()];
    const anon1 = await post(a, "/links", body, { "x-forwarded-for": ip1, "idempotency-key": key });
    const anon1again = await post(a, "/links", body, { "x-forwarded-for": ip1, "idempotency-key": key });
    const anon2 = await post(a, "/links", body, { "x-forwarded-for": ip2, "idempotency-key": key });
    expect(anon1again.json).toEqual(anon1.json);
    expect(anon2.status).toBe(201);
    expect(anon2.json.id).not.toBe(anon1.json.id);
  });

  it.each([["a".repeat(256)], ["clé"], [""]])("an invalid Idempotency-Key answers 400 VALIDATION_FAILED naming Idempotency-Key: %j", async (key) => {
    const u = await user();
    const r = await post(a, "/links", { url: uniqueUrl() }, { ...u.auth, "idempotency-key": key });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ error: "VALIDATION_FAILED", fields: { "Idempotency-Key": [expect.any(String)] } });
    expect(await linksOf(u.workspaceId)).toEqual([]);
  });
});

describe("Idempotency-Key on POST /links/bulk", () => {
  it("the same key with the same body answers the first bulk answer again and creates nothing", async () => {
    const u = await user();
    const key = newKey();
    const body = { links: [{ url: uniqueUrl() }, { url: "nope" }] };
    const first = await post(a, "/links/bulk", body, { ...u.auth, "idempotency-key": key });
    expect(first.status).toBe(200);
    expect(first.json.created).toHaveLength(1);
    const again = await post(a, "/links/bulk", body, { ...u.auth, "idempotency-key": key });
    expect([again.status, again.json]).toEqual([200, first.json]);
    expect(await linksOf(u.workspaceId)).toHaveLength(1);
  });
});

describe("two instances on one database", () => {
  it.runIf(process.env.DATABASE_URL)(
    "a second request while the first still runs is answered 409 IDEMPOTENCY_KEY_IN_USE at once, not after the first commits",
    async () => {
      const u = await user();
      const key = newKey();
      const body = { url: uniqueUrl() };
      const headers = { ...u.auth, "idempotency-key": key };
      // Another session holds the workspace row, so the first request waits inside its transaction.
      const holder = postgres(a.app.database.url!, { max: 1, onnotice: () => {} });
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      let locked!: () => void;
      const isLocked = new Promise<void>((r) => (locked = r));
      const holding = holder.begin(async (sql) => {
        await sql`select id from workspaces where id = ${u.workspaceId} for update`;
        locked();
        await released;
      });
      try {
        await isLocked;
        const first = post(a, "/links", body, headers);
        const claimed = () => a.app.db.select({ id: idempotencyKeys.id }).from(idempotencyKeys).where(eq(idempotencyKeys.key, key));
        for (let i = 0; i < 200 && !(await claimed()).length; i++) await new Promise((r) => setTimeout(r, 25));
        const second = await post(b, "/links", body, headers);
        expect([second.status, second.json]).toEqual([409, { error: "IDEMPOTENCY_KEY_IN_USE" }]);
        release();
        await holding;
        expect((await first).status).toBe(201);
        expect(await linksOf(u.workspaceId)).toHaveLength(1);
      } finally {
        release();
        await holding.catch(() => {});
        await holder.end();
      }
    },
    60_000,
  );

  it("a key taken on one instance answers on the other: one link, and each answer is the first one or 409 IDEMPOTENCY_KEY_IN_USE", async () => {
    const u = await user();
    const key = newKey();
    const body = { url: uniqueUrl() };
    const answers = await Promise.all([a, b, a, b].map((i) => post(i, "/links", body, { ...u.auth, "idempotency-key": key })));
    const created = await linksOf(u.workspaceId);
    expect(created).toHaveLength(1);
    for (const r of answers) {
      if (r.status === 409) expect(r.json).toEqual({ error: "IDEMPOTENCY_KEY_IN_USE" });
      else expect([r.status, r.json.id]).toEqual([201, created[0].id]);
    }
    // Once done, the other instance replays it.
    const replayed = await post(b, "/links", body, { ...u.auth, "idempotency-key": key });
    expect([replayed.status, replayed.json.id]).toEqual([201, created[0].id]);
    expect((await post(a, "/links", { url: uniqueUrl() }, { ...u.auth, "idempotency-key": key })).status).toBe(422);
  });
});

describe("/openapi.json", () => {
  it("declares the Idempotency-Key header and 409/422 on POST /links and POST /links/bulk only", async () => {
    const doc = (await http(`${a.api}/openapi.json`)).json;
    for (const o of [doc.paths["/links"].post, doc.paths["/links/bulk"].post]) {
      expect(o.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: "Idempotency-Key", in: "header", required: false })]));
      expect(Object.keys(o.responses)).toEqual(expect.arrayContaining(["409", "422"]));
    }
    expect(doc.paths["/linktrees"].post.parameters ?? []).toEqual([]);
    expect(doc.paths["/linktrees"].post.responses["422"]).toBeUndefined();
  });
});
