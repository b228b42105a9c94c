import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { links } from "../../../db/schema";
import { createTestServer, http, type TestServer, type TestUser } from "../../test/harness";

// The public page's data says until when a rendering of it holds: the next scheduled item's edge.
let t: TestServer;
let alice: TestUser;
let seq = 0;

beforeAll(async () => {
  t = await createTestServer();
  alice = await t.user({ plan: "pro" });
});
afterAll(() => t?.close());

const api = (method: string, path: string, json?: unknown) => http(`${t.api}${path}`, { method, json, headers: alice.auth });

/** A published page with these items; answers its public data. */
async function pageWith(items: Record<string, unknown>[]) {
  const slug = `fresh-${Date.now().toString(36)}-${seq++}`;
  const tree = (await api("POST", "/linktrees", { slug, title: "Ana" })).json as { id: string };
  for (const i of items) {
    const { active, ...body } = i;
    const r = await api("POST", `/linktrees/${tree.id}/items`, { url: "https://example.com/", ...body });
    expect(r.status).toBe(201);
    if (active === false) await api("PATCH", `/linktrees/${tree.id}/items/${r.json.id}`, { active: false });
  }
  await api("PATCH", `/linktrees/${tree.id}`, { published: true });
  const [page] = await t.app.db
    .select({ id: links.id })
    .from(links)
    .where(and(eq(links.slug, slug), eq(links.kind, "linktree")));
  return t.caller({}).linktree.publicPage({ link_id: page.id });
}

describe("public page freshness", () => {
  it("changes_at is null when no item has a window edge ahead", async () => {
    const now = Date.now();
    expect((await pageWith([{ title: "Plain" }, { title: "Over", ends_at: now - 1_000 }, { title: "Begun", starts_at: now - 1_000 }])).changes_at).toBeNull();
  });

  it("changes_at is the nearest edge ahead of any active item, a start or an end", async () => {
    const now = Date.now();
    const page = await pageWith([
      { title: "Later", starts_at: now + 60_000 },
      { title: "Running", starts_at: now - 1_000, ends_at: now + 30_000 },
      { title: "Much later", starts_at: now + 90_000, ends_at: now + 120_000 },
    ]);
    expect(page.changes_at).toBe(now + 30_000);
  });

  it("an inactive item's window does not count: it shows at none of its edges", async () => {
    const now = Date.now();
    const page = await pageWith([
      { title: "Off", starts_at: now + 10_000, active: false },
      { title: "On", starts_at: now + 50_000 },
    ]);
    expect(page.changes_at).toBe(now + 50_000);
  });
});
