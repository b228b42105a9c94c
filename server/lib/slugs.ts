import { and, asc, eq, gt, gte, inArray, isNull, lt } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { links, slugBlocks } from "../../db/schema";
import { AppError } from "../http/errors";
import { BASE36 } from "./ids";
import { randomInt } from "node:crypto";

const BLOCKS = 36 ** 3;
const blockPrefix = (n: number) => BASE36[Math.floor(n / 1296)] + BASE36[Math.floor(n / 36) % 36] + BASE36[n % 36];

/**
 * Picks a free generated slug: exactly 4 characters of [0-9a-z], never one in use (links and
 * linktrees share the namespace). A trigger keeps a free count per 3-character prefix, so a
 * block with room is found by one index lookup from a random starting point, and then one of
 * its at most 36 free slots is chosen at random: O(log n) even when the namespace is 99% full.
 *
 * The caller inserts the slug in the same transaction; the unique index is the final arbiter
 * (a concurrent insert of the same slug fails and the caller retries).
 */
export async function pickFreeSlug(db: DbOrTx): Promise<string> {
  const start = blockPrefix(randomInt(0, BLOCKS));
  const find = (after: boolean) =>
    db
      .select({ prefix: slugBlocks.prefix })
      .from(slugBlocks)
      .where(and(gt(slugBlocks.free, 0), after ? gte(slugBlocks.prefix, start) : lt(slugBlocks.prefix, start)))
      .orderBy(asc(slugBlocks.prefix))
      .limit(1);
  const [block] = (await find(true)).concat(await find(false));
  if (!block) throw new AppError("SLUGS_EXHAUSTED");
  const candidates = [...BASE36].map((c) => block.prefix + c);
  const taken = await db
    .select({ slug: links.slug })
    .from(links)
    .where(and(inArray(links.slug, candidates), isNull(links.deletedAt)));
  const takenSet = new Set(taken.map((r) => r.slug));
  const free = candidates.filter((c) => !takenSet.has(c));
  if (!free.length) {
    // The count said there was room; recount this block so the next pick is right.
    await db.update(slugBlocks).set({ free: 0 }).where(eq(slugBlocks.prefix, block.prefix));
    return pickFreeSlug(db);
  }
  return free[randomInt(0, free.length)];
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

