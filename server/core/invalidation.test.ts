import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { openDatabase, type Database } from "../../db/client";
import { createTestDatabase } from "../../db/test-db";
import { createLogger } from "../lib/log";
import { createInvalidation, type Invalidation } from "./invalidation";

// A write's cache invalidation is confirmed by every other instance before the write answers, so the
// caller's next request sees it on any instance: a PATCH made on one is followed by the other on
// the next request.

const log = createLogger("silent");
let primary: Awaited<ReturnType<typeof createTestDatabase>>;
const extra: Database[] = [];
const open: Invalidation[] = [];

beforeAll(async () => {
  primary = await createTestDatabase();
});
afterAll(async () => {
  for (const i of open) i.close();
  for (const d of extra) await d.close();
  await primary?.dispose();
});

/** An instance: its own connection (PostgreSQL) and a cache of keys. */
async function instance(database: Database, aloneAfterMs?: number) {
  const cache = new Set<string>();
  const inv = await createInvalidation({ database, channel: "test_changed", log, drop: (k) => cache.delete(k), reset: () => cache.clear(), aloneAfterMs });
  open.push(inv);
  return { cache, inv };
}

describe("one instance (PGlite or PostgreSQL)", () => {
  it("drops the keys at once and resolves with nobody else to wait for", async () => {
    const a = await instance(primary);
    a.cache.add("k1").add("k2").add("k3");
    await a.inv.invalidate(["k1", "k2"]);
    expect([...a.cache]).toEqual(["k3"]);
  });

  it("a write that sends its own NOTIFY drops its keys here once it says they were sent", async () => {
    const a = await instance(primary);
    // Keys of its own: the previous test's NOTIFY may still arrive on the shared channel.
    a.cache.add("mine-1").add("mine-2");
    const n = a.inv.announce();
    await notifyFromStatement(primary, n, "mine-1");
    await n.sent(["mine-1"]);
    expect([...a.cache]).toEqual(["mine-2"]);
  });
});

describe("an instance alone on its database", () => {
  let own: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    own = await createTestDatabase();
  });
  afterAll(async () => {
    await own?.dispose();
  });
  /** What reaches the channel, heard by a plain listener (not an instance: it sends no heartbeat). */
  const heard = async () => {
    const payloads: string[] = [];
    await own.listen("test_changed", (p) => payloads.push(p));
    return payloads;
  };
  const settle = () => new Promise((r) => setTimeout(r, 300));
  /** Closes instances (each says goodbye), so the next test starts alone again. */
  const closeAll = async (...xs: { inv: Invalidation }[]) => {
    for (const x of xs) x.inv.close();
    await settle();
  };

  // Each test closes its instances, so the next one starts alone again.
  it("sends no NOTIFY once it has listened long enough to have heard any other, and drops its keys here", async () => {
    const payloads = await heard();
    const a = await instance(own, 0);
    try {
      await settle(); // its own heartbeat back
      a.cache.add("k1").add("k2").add("k3");
      await a.inv.invalidate(["k1"]);
      const n = a.inv.announce();
      expect(n.prefix).toBeNull();
      await notifyFromStatement(own, n, "k2");
      await n.sent(["k2"]);
      await settle();
      expect(payloads).toEqual([]);
      expect([...a.cache]).toEqual(["k3"]);
    } finally {
      await closeAll(a);
    }
  });

  it("in its first moments it notifies anyway: another instance may not have been heard yet", async () => {
    const payloads = await heard();
    const a = await instance(own);
    try {
      expect(a.inv.announce().prefix).not.toBeNull();
      await a.inv.invalidate(["early"]);
      await settle();
      expect(payloads.some((p) => p.endsWith('["early"]'))).toBe(true);
    } finally {
      await closeAll(a);
    }
  });

  it("a listener that hears nothing, not even its own heartbeat, does not count itself alone", async () => {
    // Its connection lost: silence from the others is then no sign that there are none.
    const deaf = Object.assign(Object.create(own) as Database, { listen: async () => {} });
    const a = await instance(deaf, 0);
    try {
      await settle();
      expect(a.inv.announce().prefix).not.toBeNull();
    } finally {
      await closeAll(a);
    }
  });

  it("tells an instance that started while its write ran, once the write committed", async () => {
    const a = await instance(own, 0);
    await settle();
    const n = a.inv.announce();
    expect(n.prefix).toBeNull();
    const b = await instance(own, 0);
    try {
      await settle();
      b.cache.add("during");
      await notifyFromStatement(own, n, "during");
      await n.sent(["during"]);
      expect(b.cache.has("during")).toBe(false);
    } finally {
      await closeAll(a, b);
    }
  });

  it("an instance too busy to send its heartbeat is still told", async () => {
    // Every connection of its pool taken: it still hears on its listener, and still holds its entries.
    let mute = false;
    const busy = Object.assign(Object.create(own) as Database, { notify: (c: string, p: string) => (mute ? Promise.resolve() : own.notify(c, p)) });
    const a = await instance(own, 0);
    const b = await instance(busy, 0);
    try {
      await settle();
      mute = true;
      await new Promise((r) => setTimeout(r, 4000)); // longer than a heartbeat's lifetime
      b.cache.add("busy");
      expect(a.inv.announce().prefix).not.toBeNull();
      await a.inv.invalidate(["busy"]);
      await settle();
      expect(b.cache.has("busy")).toBe(false);
    } finally {
      await closeAll(a, b);
    }
  });

  it("notifies again as soon as another instance starts", async () => {
    const payloads = await heard();
    const a = await instance(own, 0);
    await settle();
    expect(a.inv.announce().prefix).toBeNull();
    const b = await instance(own, 0);
    try {
      await settle();
      b.cache.add("later");
      await a.inv.invalidate(["later"]);
      expect(b.cache.has("later")).toBe(false);
      expect(payloads.some((p) => p.endsWith('["later"]'))).toBe(true);
    } finally {
      await closeAll(a, b);
    }
  });
});

/** What a write does inside its own statement: the NOTIFY of `announce` (none without a prefix), built by the database. */
const notifyFromStatement = (database: Database, n: { channel: string; prefix: string | null }, key: string) =>
  database.db.execute(
    sql`select case when ${n.prefix}::text is not null then pg_notify(${n.channel}, ${n.prefix} || json_build_array(${key}::text)::text) end`,
  );

describe.skipIf(!process.env.DATABASE_URL)("two instances on one PostgreSQL database", () => {
  const second = async () => {
    const d = await openDatabase({ databaseUrl: primary.url!, migrate: false, poolSize: 2 });
    extra.push(d);
    return d;
  };

  it("another instance has dropped the keys when the writer's invalidate resolves", async () => {
    const a = await instance(primary);
    const b = await instance(await second());
    // Each knows the other once a heartbeat arrived.
    await new Promise((r) => setTimeout(r, 1200));
    for (let i = 0; i < 50; i++) {
      b.cache.add(`slug-${i}`);
      await a.inv.invalidate([`slug-${i}`]);
      // No waiting here: the very next request on B must not find the old entry.
      expect(b.cache.has(`slug-${i}`), `round ${i}`).toBe(false);
    }
  });

  it("another instance has dropped the key of a write that sent its own NOTIFY when `sent` resolves", async () => {
    const a = await instance(primary);
    const b = await instance(await second());
    await new Promise((r) => setTimeout(r, 1200));
    for (let i = 0; i < 20; i++) {
      b.cache.add(`own-${i}`);
      const n = a.inv.announce();
      await notifyFromStatement(primary, n, `own-${i}`);
      await n.sent([`own-${i}`]);
      expect(b.cache.has(`own-${i}`), `round ${i}`).toBe(false);
    }
  });

  it("a write that sent nothing waits for no acknowledgement", async () => {
    const a = await instance(primary);
    await instance(await second());
    await new Promise((r) => setTimeout(r, 1200));
    const n = a.inv.announce();
    n.unsent();
    const t0 = Date.now();
    await n.sent([]);
    expect(Date.now() - t0).toBeLessThan(500);
  });

  it("drops every key of a write too large for one NOTIFY, confirmed once", async () => {
    const a = await instance(primary);
    const b = await instance(await second());
    await new Promise((r) => setTimeout(r, 1200));
    const keys = Array.from({ length: 3000 }, (_, i) => `domain-${i}/slug-${i}`);
    for (const k of keys) b.cache.add(k);
    await a.inv.invalidate(keys);
    expect(b.cache.size).toBe(0);
  });

  it("a peer that stopped answering delays a write by at most the acknowledgement timeout, not for ever", async () => {
    const a = await instance(primary);
    const dbB = await second();
    const b = await instance(dbB);
    await new Promise((r) => setTimeout(r, 1200));
    // B's connection goes away without a goodbye (a crash): A still counts it as alive for a while.
    await dbB.close();
    b.cache.add("x");
    await a.inv.invalidate(["x"]);
    await a.inv.invalidate(["y"]);
  });
});
