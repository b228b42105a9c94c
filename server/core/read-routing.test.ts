import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pino from "pino";
import { createTestDatabase } from "../../db/test-db";
import type { Database } from "../../db/client";
import { AppError } from "../domain/errors";
import { createMetrics } from "../lib/metrics";
import { freePort } from "../test/harness";
import { createReadRouting, PROBE_MS, type ReadRouting } from "./read-routing";

/**
 * The routing rules of read-routing.ts. A real streaming replica (lag, a paused replay, a replica
 * stopping) is in server/test/faults/replica.fault.ts; here the "replica" is the primary itself (not in
 * recovery: it has every write), so what is left to decide is the pending mark, the fallback and
 * the log lines.
 */
let database: Database & { dispose(): Promise<void> };
const routings: ReadRouting[] = [];
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  for (const r of routings) await r.close();
  await database.dispose();
});

/** A routing with a logger whose lines are kept. */
async function routing(replicaUrl?: string) {
  const lines: string[] = [];
  const log = pino({ level: "info" }, { write: (l: string) => void lines.push(JSON.parse(l).msg) });
  const r = await createReadRouting({ primary: database, replicaUrl, log, metrics: createMetrics() });
  routings.push(r);
  return { r, lines };
}
/** Which database `run` handed the read. */
const target = (r: ReadRouting, ws: string | null) => r.run(ws, async (db) => (db === database.db ? "primary" : "replica"));

describe("read routing", () => {
  it("without DATABASE_READ_URL every read is answered by the primary", async () => {
    const { r } = await routing();
    expect(r.hasReplica).toBe(false);
    expect(await target(r, "w1")).toBe("primary");
  });

  describe.skipIf(!process.env.DATABASE_URL)("with a replica (PostgreSQL)", () => {
    it("a workspace without a write in flight reads from the replica", async () => {
      const { r } = await routing(database.url);
      expect(await target(r, "w-quiet")).toBe("replica");
    });

    it("a workspace's reads go to the primary from the start of its write until its WAL position is recorded", async () => {
      const { r } = await routing(database.url);
      const done = await r.writeStarted("w-writer");
      expect(await target(r, "w-writer")).toBe("primary");
      expect(await target(r, "w-other"), "another workspace is not held back").toBe("replica");
      done();
      // The position is read from the primary after `done`; this replica has replayed everything.
      for (let i = 0; i < 50 && (await target(r, "w-writer")) === "primary"; i++) await new Promise((s) => setTimeout(s, 20));
      expect(await target(r, "w-writer")).toBe("replica");
    });

    it("a read the replica fails is answered by the primary at once; a refusal (AppError) is the answer, not retried", async () => {
      const { r, lines } = await routing(database.url);
      let tries = 0;
      const answer = await r.run("w-fail", async (db) => {
        tries++;
        if (db !== database.db) throw new Error("connection terminated");
        return "from the primary";
      });
      expect([answer, tries]).toEqual(["from the primary", 2]);
      expect(lines.filter((l) => l.startsWith("read replica unavailable"))).toHaveLength(1);
      const refused = r.run("w-none", async () => {
        tries++;
        throw new AppError("NOT_FOUND");
      });
      await expect(refused).rejects.toBeInstanceOf(AppError);
    });

    it("an unreachable replica sends every read to the primary, with one log line however many probes fail", async () => {
      const { r, lines } = await routing(`postgres://postgres@127.0.0.1:${await freePort()}/nothing`);
      expect(r.hasReplica).toBe(true);
      expect(await target(r, "w1")).toBe("primary");
      await new Promise((s) => setTimeout(s, PROBE_MS * 4));
      expect(await target(r, "w1")).toBe("primary");
      expect(lines.filter((l) => l.startsWith("read replica"))).toEqual(["read replica unavailable: analytics and listings read from the primary"]);
    });
  });
});
