import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { and, eq, sql } from "drizzle-orm";
import { auditEvents, links } from "../../../db/schema";
import { newId } from "../../lib/ids";
import { auditWriter } from "../../trpc/audit";
import { inAuditedTransaction, rollBack } from "../../trpc/audited-transaction";
import { createTestServer, type TestServer } from "../../test/harness";
import { caller, person, type Person } from "../workspaces/teams.test-helper";

/** The audit log and the change it records land in one transaction: both or neither. */
let t: TestServer;
let call: ReturnType<typeof caller>;
let owner: Person;
const realWrite = auditWriter.write;

beforeAll(async () => {
  t = await createTestServer();
  call = caller(() => t.api);
  owner = await person(t);
});
afterEach(() => {
  auditWriter.write = realWrite;
});
afterAll(() => t?.close());

const slug = () => `tx-${newId().slice(0, 8)}`;
const linkBySlug = (s: string) => t.app.db.select({ id: links.id }).from(links).where(eq(links.slug, s));
const eventsOf = (action: string) =>
  t.app.db
    .select({ id: auditEvents.id, targetId: auditEvents.targetId })
    .from(auditEvents)
    .where(and(eq(auditEvents.workspaceId, owner.workspaceId), eq(auditEvents.action, action)));

describe("the audit event is written in the change's transaction", () => {
  it("a change whose event cannot be written is not kept (no change without its event)", async () => {
    const s = slug();
    const id = (await call("POST", "/links", owner.cookie, { url: "https://example.com/lost", slug: s })).json.id;
    auditWriter.write = async () => {
      throw new Error("audit store refused the event");
    };
    const r = await call("PATCH", `/links/${id}`, owner.cookie, { slug: `${s}-moved` });
    expect(r.status).toBe(500);
    expect(await linkBySlug(s)).toEqual([{ id }]);
    expect(await linkBySlug(`${s}-moved`)).toEqual([]);
  });

  it("a link made in one statement with its event is not kept when the event cannot be stored", async () => {
    // The database itself refuses the event: the link, its webhook events and its NOTIFY share the statement.
    await t.app.db.execute(sql`alter table audit_events add constraint refuse_created check (action <> 'link.created') not valid`);
    try {
      const s = slug();
      const r = await call("POST", "/links", owner.cookie, { url: "https://example.com/lost", slug: s });
      expect(r.status).toBe(500);
      expect(await linkBySlug(s)).toEqual([]);
      const generated = await call("POST", "/links", owner.cookie, { url: "https://example.com/lost-too" });
      expect(generated.status).toBe(500);
      expect(await t.app.db.select({ id: links.id }).from(links).where(eq(links.url, "https://example.com/lost-too"))).toEqual([]);
    } finally {
      await t.app.db.execute(sql`alter table audit_events drop constraint refuse_created`);
    }
    expect((await call("POST", "/links", owner.cookie, { url: "https://example.com/kept-again" })).status).toBe(201);
  });

  it("an event whose change rolls back after it was written is not kept (no event without its change)", async () => {
    const before = (await eventsOf("link.updated")).length;
    const id = (await call("POST", "/links", owner.cookie, { url: "https://example.com/kept" })).json.id;
    auditWriter.write = async (db, actor, events) => {
      await realWrite(db, actor, events);
      throw new Error("the commit did not happen");
    };
    const r = await call("PATCH", `/links/${id}`, owner.cookie, { url: "https://example.com/changed" });
    expect(r.status).toBe(500);
    auditWriter.write = realWrite;
    expect((await call("GET", `/links/${id}`, owner.cookie)).json.url).toBe("https://example.com/kept");
    expect((await eventsOf("link.updated")).length).toBe(before);
  });

  it("a change that succeeds is kept with its event", async () => {
    const s = slug();
    const r = await call("POST", "/links", owner.cookie, { url: "https://example.com/both", slug: s });
    expect(r.status).toBe(201);
    expect(await linkBySlug(s)).toEqual([{ id: r.json.id }]);
    expect((await eventsOf("link.created")).filter((e) => e.targetId === r.json.id)).toHaveLength(1);
  });

  it("cache invalidation asked for inside the transaction runs only once it has committed", async () => {
    const dropped: string[][] = [];
    const app = Object.assign(Object.create(t.app) as typeof t.app, { invalidateSlugs: async (s: string[]) => void dropped.push(s) });
    await inAuditedTransaction(app, async (scope) => {
      await scope.app.invalidateSlugs(["a"]);
      expect(dropped).toEqual([]);
    });
    expect(dropped).toEqual([["a"]]);
  });

  it("cache invalidation asked for inside a transaction that rolls back never runs", async () => {
    const dropped: string[][] = [];
    const app = Object.assign(Object.create(t.app) as typeof t.app, { invalidateSlugs: async (s: string[]) => void dropped.push(s) });
    const answer = await inAuditedTransaction(app, async (scope) => {
      await scope.app.invalidateSlugs(["b"]);
      return rollBack("undone");
    });
    expect(answer).toBe("undone");
    expect(dropped).toEqual([]);
  });
});
