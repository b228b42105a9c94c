import { count, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { clicks } from "../../db/schema";
import { PEOPLE } from "../redirect/ua-fixtures";
import { createTestApp } from "../test/harness";

describe("services close", () => {
  it("close() stores the buffered clicks before it stops, and a second close() is harmless", async () => {
    const t = await createTestApp();
    t.app.clicks!.recordVisit({
      linkId: "svc00001",
      workspaceId: "public",
      timestamp: Date.now(),
      userAgent: PEOPLE.macSafari,
      ip: "127.0.0.1",
      referer: null,
      rule: "url",
      edge: null,
    });
    await t.app.close();
    await t.app.close();
    expect(t.app.clicks!.buffered).toBe(0);
    const [{ n }] = await t.app.db.select({ n: count() }).from(clicks).where(eq(clicks.linkId, "svc00001"));
    expect(Number(n)).toBe(1);
    await t.close();
  });
});
