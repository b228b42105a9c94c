import { and, eq } from "drizzle-orm";
import { expect } from "vitest";
import { links } from "../../../db/schema";
import { http, type TestServer, type TestUser } from "../../test/harness";

/** A seeded random sequence, so a failure can be replayed. */
export function random(seed: number) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

/**
 * What random clicks land on: `n` links of `u`, and the link of a new linktree page of theirs
 * (slug `<slugPrefix>-…`), whose views the link counts must leave out.
 */
export async function linksAndPage(t: TestServer, u: TestUser, n: number, slugPrefix: string) {
  const ids = await Promise.all(
    Array.from({ length: n }, () =>
      t
        .caller(u.auth)
        .link.create({ url: "https://dest.example/" })
        .then((l) => l.id),
    ),
  );
  const tree = await http(`${t.api}/linktrees`, { method: "POST", json: { slug: `${slugPrefix}-${Date.now().toString(36)}`, title: "Page" }, headers: u.auth });
  expect(tree.status, tree.text).toBe(201);
  const [page] = await t.app.db
    .select({ id: links.id })
    .from(links)
    .where(and(eq(links.slug, tree.json.slug), eq(links.kind, "linktree")));
  return { ids, page };
}
