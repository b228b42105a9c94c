import { eq, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { slugBlocks } from "../../db/schema";
import { AppError } from "../domain/errors";
import { BASE36 } from "./ids";
import { randomInt } from "node:crypto";

const BLOCKS = 36 ** 3;
const blockPrefix = (n: number) => BASE36[Math.floor(n / 1296)] + BASE36[Math.floor(n / 36) % 36] + BASE36[n % 36];

/**
 * Picks a free generated slug: exactly 4 characters of [0-9a-z], never one in use (links and
 * linktrees share the namespace). A trigger keeps a free count per 3-character prefix, so a
 * block with room is found by one index lookup from a random starting point, and then one of
 * its at most 36 free slots is chosen at random: O(log n) even when the namespace is 99% full,
 * and one round trip to the database.
 *
 * The caller inserts the slug in the same transaction; the unique index is the final arbiter
 * (a concurrent insert of the same slug fails and the caller retries).
 */
export async function pickFreeSlug(db: DbOrTx): Promise<string> {
  const start = blockPrefix(randomInt(0, BLOCKS));
  const result = await db.execute(sql`
    with block as (
      (select prefix from slug_blocks where free > 0 and prefix >= ${start} order by prefix limit 1)
      union all
      (select prefix from slug_blocks where free > 0 and prefix < ${start} order by prefix limit 1)
      limit 1
    )
    select block.prefix, (
      select block.prefix || c from unnest(string_to_array(${BASE36}, null)) c
      where not exists (select 1 from links where links.slug = block.prefix || c and links.deleted_at is null)
      order by random() limit 1
    ) as slug
    from block`);
  // postgres.js answers an array of rows, PGlite an object with `rows`.
  const rows = (Array.isArray(result) ? result : (result as unknown as { rows: unknown[] }).rows) as { prefix: string; slug: string | null }[];
  const [block] = rows;
  if (!block) throw new AppError("SLUGS_EXHAUSTED");
  if (block.slug) return block.slug;
  // The count said there was room; recount this block so the next pick is right.
  await db.update(slugBlocks).set({ free: 0 }).where(eq(slugBlocks.prefix, block.prefix));
  return pickFreeSlug(db);
}

export const SLUG_INDEX = "links_live_slug_idx";

/**
 * Runs `insert` with a generated slug inside a savepoint, retrying on the rare race for the
 * same slug (a failed statement would otherwise abort the surrounding transaction).
 */
export async function withGeneratedSlug<T>(db: DbOrTx, insert: (slug: string, tx: DbOrTx) => Promise<T>, isSlugConflict: (e: unknown) => boolean): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const slug = await pickFreeSlug(db);
    try {
      return await db.transaction((sp) => insert(slug, sp));
    } catch (e) {
      if (attempt < 8 && isSlugConflict(e)) continue;
      throw e;
    }
  }
}
