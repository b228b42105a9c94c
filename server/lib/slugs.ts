import { eq, sql, type Placeholder, type SQL } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { slugBlocks } from "../../db/schema";
import { AppError } from "../domain/errors";
import { BASE36 } from "./ids";
import { randomInt } from "node:crypto";

const BLOCKS = 36 ** 3;
const blockPrefix = (n: number) => BASE36[Math.floor(n / 1296)] + BASE36[Math.floor(n / 36) % 36] + BASE36[n % 36];

/** Where a pick starts: a random block (its prefix) and a random slot in it (0 to 35). */
export type PickStart = { start: string; turn: number };
export const randomPickStart = (): PickStart => ({ start: blockPrefix(randomInt(0, BLOCKS)), turn: randomInt(0, 36) });

/**
 * The query of `pickFreeSlug`, answering one row (prefix, slug) or none (every block is full); `slug`
 * is null when the block's free count was stale. A caller may run it inside its own statement, and
 * prepare it with placeholders for where it starts (given `randomPickStart()` at each run).
 */
export function freeSlugPick({ start, turn }: PickStart | { start: Placeholder; turn: Placeholder } = randomPickStart()): SQL {
  // "offset 0" keeps each candidate's check a probe of the slug index: as a join, the planner hashed
  // every live link (a sequential scan of the table per pick) once there were a few thousand.
  // The block's slots are tried in order from a random one and the first free one is taken, so a
  // block with room (nearly all of them) costs one probe instead of one for each of its 36 slots.
  return sql`
    with block as (
      (select prefix from slug_blocks where free > 0 and prefix >= ${start} order by prefix limit 1)
      union all
      (select prefix from slug_blocks where free > 0 and prefix < ${start} order by prefix limit 1)
      limit 1
    )
    select block.prefix, (
      select s.slug from generate_series(0, 35) i
      cross join lateral (select block.prefix || substr(${BASE36}, 1 + (${turn}::int + i) % 36, 1) as slug) s
      where not exists (select 1 from links where links.slug = s.slug and links.deleted_at is null and links.domain_id is null offset 0)
      limit 1
    ) as slug
    from block`;
}

/**
 * Picks a free generated slug: exactly 4 characters of [0-9a-z], never one in use (links and
 * linktrees share the namespace). A trigger keeps a free count per 3-character prefix, so a
 * block with room is found by one index lookup from a random starting point, and then its first
 * free slot from a random one is taken: O(log n) even when the namespace is 99% full,
 * and one round trip to the database.
 *
 * The caller inserts the slug in the same transaction; the unique index is the final arbiter
 * (a concurrent insert of the same slug fails and the caller retries).
 */
export async function pickFreeSlug(db: DbOrTx): Promise<string> {
  const result = await db.execute(freeSlugPick());
  // postgres.js answers an array of rows, PGlite an object with `rows`.
  const rows = (Array.isArray(result) ? result : (result as unknown as { rows: unknown[] }).rows) as { prefix: string; slug: string | null }[];
  const [block] = rows;
  if (!block) throw new AppError("SLUGS_EXHAUSTED");
  if (block.slug) return block.slug;
  // The count said there was room; recount this block so the next pick is right.
  await db.update(slugBlocks).set({ free: 0 }).where(eq(slugBlocks.prefix, block.prefix));
  return pickFreeSlug(db);
}

/**
 * Up to `n` distinct free generated slugs of the default domain at once (for imports), in one query
 * per round: blocks with room are taken in prefix order from a random start (wrapping around), and
 * `n` of their free slots are chosen at random. A round sized for mostly empty blocks can come back
 * short where the blocks after the start are nearly full; then the next round looks at four times
 * as many blocks. Fewer than `n` come back only when every block with room was looked at: the
 * namespace really has no more.
 */
export async function pickFreeSlugs(db: DbOrTx, n: number): Promise<string[]> {
  const found = new Set<string>();
  let blocks = Math.ceil(n / 18) + 2;
  while (found.size < n) {
    const want = n - found.size;
    const start = blockPrefix(randomInt(0, BLOCKS));
    const [round] = rows<{ after: number; before: number; slugs: string[] | null }>(
      await db.execute(sql`
        with after as (select prefix from slug_blocks where free > 0 and prefix >= ${start} order by prefix limit ${blocks}),
        before as (select prefix from slug_blocks where free > 0 and prefix < ${start} order by prefix limit ${blocks}),
        cand as (
          select b.prefix || c as slug from (select prefix from after union all select prefix from before) b
          cross join unnest(string_to_array(${BASE36}, null)) c
        )
        select (select count(*) from after)::int as after, (select count(*) from before)::int as before,
          array(
            select slug from cand
            where not exists (select 1 from links l where l.slug = cand.slug and l.deleted_at is null and l.domain_id is null)
              and cand.slug <> all(array(select json_array_elements_text(${JSON.stringify([...found])}::json)))
            order by random() limit ${want * 2}
          ) as slugs`),
    );
    for (const s of round?.slugs ?? []) if (found.size < n) found.add(s);
    // Both halves ended before their limit: every block with room was in this round.
    if (!round || (round.after < blocks && round.before < blocks)) break;
    blocks *= 4;
  }
  return [...found];
}

/** The unique index of the default redirect domain's namespace (links and linktrees). */
export const SLUG_INDEX = "links_live_slug_idx";
/** The unique index of the branded domains' namespaces, one per domain (docs/decisions/003-one-slug-namespace.md). */
export const DOMAIN_SLUG_INDEX = "links_domain_slug_idx";

const SPACE = 36 ** 4;
const RANDOM_TRIES = 16;
const rows = <T>(result: unknown): T[] => (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as T[];

/**
 * A free generated slug on a branded domain: the same rule as on the default domain (exactly 4
 * characters of [0-9a-z], never one in use on that domain), without the default domain's block
 * counts: a domain's namespace is mostly empty, so random candidates checked in one query almost
 * always find one; when all of them are taken, a scan from a random point finds the next free one
 * (stopping at the first), and a full namespace is 503 SLUGS_EXHAUSTED. `length` is for tests.
 */
export async function pickFreeDomainSlug(db: DbOrTx, domainId: string, length = 4): Promise<string> {
  const space = length === 4 ? SPACE : 36 ** length;
  const candidates = Array.from({ length: RANDOM_TRIES }, () => slugOf(randomInt(0, space), length));
  const free = rows<{ slug: string }>(
    await db.execute(sql`
      select c as slug from unnest(array[${sql.join(
        candidates.map((c) => sql`${c}`),
        sql`, `,
      )}]::text[]) c
      where not exists (select 1 from links where links.domain_id = ${domainId} and links.slug = c and links.deleted_at is null offset 0)
      limit 1`),
  );
  if (free[0]) return free[0].slug;
  const start = randomInt(0, space);
  const scanned = rows<{ n: number }>(
    await db.execute(sql`
      select n from (
        (select n from generate_series(${start}::int, ${space - 1}::int) n)
        union all
        (select n from generate_series(0, ${start - 1}::int) n)
      ) s
      where not exists (
        select 1 from links where links.domain_id = ${domainId} and links.deleted_at is null and links.slug = ${slugSql(sql`s.n`, length)}
      )
      limit 1`),
  );
  if (!scanned[0]) throw new AppError("SLUGS_EXHAUSTED");
  return slugOf(Number(scanned[0].n), length);
}

/** The n-th slug of `length` characters of [0-9a-z], in order. */
function slugOf(n: number, length: number): string {
  let s = "";
  for (let i = 0; i < length; i++, n = Math.floor(n / 36)) s = BASE36[n % 36] + s;
  return s;
}

/** slugOf in SQL. */
function slugSql(n: SQL, length: number): SQL {
  const parts: SQL[] = [];
  for (let i = length - 1; i >= 0; i--) parts.push(sql`substr(${BASE36}, (${n} / ${36 ** i}::int) % 36 + 1, 1)`);
  return sql.join(parts, sql` || `);
}

/**
 * Runs `insert` with a generated slug, picking again on the rare race for the same slug. `insert` is
 * one statement with `on conflict do nothing`, answering `undefined` when the slug was taken: no
 * error, so a caller's transaction stays usable without a savepoint (two round trips fewer per link).
 */
export async function withGeneratedSlug<T>(db: DbOrTx, insert: (slug: string) => Promise<T | undefined>, domainId: string | null = null): Promise<T> {
  for (let attempt = 0; attempt < 8; attempt++) {
    const slug = domainId === null ? await pickFreeSlug(db) : await pickFreeDomainSlug(db, domainId);
    const inserted = await insert(slug);
    if (inserted !== undefined) return inserted;
  }
  // Eight picks each taken meanwhile: the namespace is all but full under heavy writing.
  throw new AppError("SLUGS_EXHAUSTED", { message: "every slug picked was taken meanwhile; try again" });
}
