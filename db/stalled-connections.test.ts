import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { openDatabase, type Database } from "./client";
import { createTestDatabase } from "./test-db";

/**
 * A TCP relay to PostgreSQL that can stop relaying without closing anything: what a network
 * partition or a frozen proxy looks like from the client (the socket stays open, no byte comes).
 */
function stallableRelay(target: URL) {
  const pairs = new Set<[net.Socket, net.Socket]>();
  let stalled = false;
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    const pair: [net.Socket, net.Socket] = [client, upstream];
    pairs.add(pair);
    const relay = (from: net.Socket, to: net.Socket) => from.on("data", (b) => stalled || to.write(b));
    relay(client, upstream);
    relay(upstream, client);
    const close = () => (client.destroy(), upstream.destroy(), pairs.delete(pair));
    client.on("close", close).on("error", close);
    upstream.on("close", close).on("error", close);
  });
  return {
    listen: () => new Promise<number>((r) => server.listen(0, "127.0.0.1", () => r((server.address() as net.AddressInfo).port))),
    stall: () => void (stalled = true),
    resume: () => void (stalled = false),
    close: () => new Promise<void>((r) => (pairs.forEach(([a, b]) => (a.destroy(), b.destroy())), server.close(() => r()))),
  };
}

// Only PostgreSQL goes over a network; the embedded database has no connection to lose.
describe.skipIf(!process.env.DATABASE_URL)("a connection whose peer stops answering", () => {
  let test: Awaited<ReturnType<typeof createTestDatabase>>;
  let relay: ReturnType<typeof stallableRelay>;
  let database: Database;
  beforeAll(async () => {
    test = await createTestDatabase();
    relay = stallableRelay(new URL(test.url!));
    const url = new URL(test.url!);
    url.hostname = "127.0.0.1";
    url.port = String(await relay.listen());
    database = await openDatabase({ databaseUrl: url.href, poolSize: 2, migrate: false, replySilenceSeconds: 1 });
  });
  afterAll(async () => {
    await database?.close().catch(() => {});
    await relay?.close();
    await test?.dispose();
  });

  it("fails a query that hears nothing for the reply wait with CONNECTION_CLOSED (a 503), not a hang, and answers again once the peer is back", async () => {
    expect(await database.db.execute(sql`select 1 as x`)).toEqual([{ x: 1 }]);
    relay.stall();
    const failed = await database.db.execute(sql`select 2 as x`).then(
      () => null,
      (e: { code?: string; cause?: { code?: string } }) => e.cause?.code ?? e.code,
    );
    expect(failed).toBe("CONNECTION_CLOSED");
    relay.resume();
    expect(await database.db.execute(sql`select 3 as x`)).toEqual([{ x: 3 }]);
  });

  it("keeps a query that answers slowly but within the wait, and an idle connection, open", async () => {
    expect(await database.db.execute(sql`select pg_sleep(0.5), 4 as x`)).toEqual([{ pg_sleep: "", x: 4 }]);
    await new Promise((r) => setTimeout(r, 1500)); // idle past the wait: nothing was due
    expect(await database.db.execute(sql`select 5 as x`)).toEqual([{ x: 5 }]);
  });

  it("keeps a connection whose answer arrived while the process was too busy to read it past the wait", async () => {
    // Straight to PostgreSQL: the relay runs in this process and would be held up too.
    const direct = await openDatabase({ databaseUrl: test.url!, poolSize: 1, migrate: false, replySilenceSeconds: 1 });
    try {
      expect(await direct.db.execute(sql`select 1 as x`)).toEqual([{ x: 1 }]);
      const answer = direct.db.execute(sql`select pg_sleep(0.3), 6 as x`);
      await new Promise((r) => setTimeout(r, 50)); // sent, not yet answered
      // The event loop held for longer than the wait, in a phase after its reads (the answer came at
      // 0.3 s and waits unread): its timers run next, before it reads again.
      await new Promise((r) => setImmediate(r));
      const until = Date.now() + 1500;
      while (Date.now() < until);
      expect(await answer).toEqual([{ pg_sleep: "", x: 6 }]);
    } finally {
      await direct.close();
    }
  });
});
