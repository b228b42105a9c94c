import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workspaces } from "../../db/schema";
import { createTestApp, type TestApp } from "../test/harness";

let t: TestApp;
beforeAll(async () => void (t = await createTestApp()));
afterAll(() => t?.close());

describe("personal workspaces", () => {
  it("a new personal workspace gets an 8-character id, as every id, and works as before", async () => {
    const u = await t.user();
    expect(u.workspaceId).toMatch(/^[0-9a-z]{8}$/);
    const caller = t.caller(u.auth);
    const [ws] = await t.app.db.select().from(workspaces).where(eq(workspaces.id, u.workspaceId));
    expect(ws.personal).toBe(true);
    const link = await caller.link.create({ url: "https://dest.example/personal" });
    expect(link.id).toMatch(/^[0-9a-z]{8}$/);
  });
});
