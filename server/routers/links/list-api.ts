import { createHash } from "node:crypto";
import { and, desc, eq, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "../../../db/client";
import { domains, links } from "../../../db/schema";
import { validation } from "../../domain/errors";
import type { AppServices } from "../../core/services";
import type { Actor } from "../../trpc/context";
import { linkDtos } from "./links.service";
import { expiredAt } from "./link-status";
import { healthIs } from "../health";
import { allTimeClicks, filterConditions } from "./list";
import type { ApiListInput, ApiListDto, ApiSort } from "./list.schema";

const CURSOR_VERSION = 1;

/**
 * The key of the last link of a page: `[created_at, id]`, or `[clicks, created_at, id]` when sorting
 * by clicks. The count is the one read for that page, so the next page starts below it even if the
 * link was clicked meanwhile.
 */
type Key = [number, string] | [number, number, string];

const cursorShape = z.object({
  v: z.literal(CURSOR_VERSION),
  sort: z.enum(["created", "clicks"]),
  key: z.union([z.tuple([z.number().int(), z.string()]), z.tuple([z.number().int(), z.number().int(), z.string()])]),
  h: z.string(),
});

/**
 * Binds a cursor to its query and workspace: a cursor read back with other filters, another sort, in
 * another workspace or with edited keys fails the check instead of answering a wrong page.
 */
function queryHash(workspaceId: string, input: ApiListInput, sort: ApiSort, key: Key): string {
  const filters = [workspaceId, sort, input.q ?? null, input.tag ?? null, input.domain ?? null, input.slug ?? null, input.status ?? "live", key];
  if (input.health) filters.push(`health:${input.health}`);
  return createHash("sha256").update(JSON.stringify(filters)).digest("base64url").slice(0, 22);
}

function encodeCursor(workspaceId: string, input: ApiListInput, sort: ApiSort, key: Key): string {
  const body = { v: CURSOR_VERSION, sort, key, h: queryHash(workspaceId, input, sort, key) };
  return Buffer.from(JSON.stringify(body)).toString("base64url");
}

function decodeCursor(workspaceId: string, input: ApiListInput, sort: ApiSort, cursor: string): Key {
  const bad = () => validation({ cursor: ["must be the next_cursor of the previous page of this same query"] });
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw bad();
  let parsed: z.infer<typeof cursorShape>;
  try {
    parsed = cursorShape.parse(JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")));
  } catch {
    throw bad();
  }
  const key = parsed.key as Key;
  const keyFits = sort === "clicks" ? key.length === 3 : key.length === 2;
  if (parsed.sort !== sort || !keyFits || parsed.h !== queryHash(workspaceId, input, sort, key)) throw bad();
  return key;
}

/**
 * Rows strictly after `key` in the list's order (every part of it descending). A row comparison, so
 * the keyset index seeks to the cursor instead of reading every newer link first.
 */
function after(key: Key): SQL {
  if (key.length === 2) return sql`(${links.createdAt}, ${links.id}) < (${key[0]}, ${key[1]})`;
  return sql`(${allTimeClicks}, ${links.createdAt}, ${links.id}) < (${key[0]}, ${key[1]}, ${key[2]})`;
}

/** A `domain` value is `default` or one of the workspace's verified domains; anything else is a 400. */
async function domainFilter(db: Db, app: Pick<AppServices, "config">, workspaceId: string, domain: string | undefined): Promise<string | undefined> {
  if (domain === undefined) return undefined;
  if (domain === "default") return app.config.redirectDomain;
  const [d] = await db
    .select({ id: domains.id })
    .from(domains)
    .where(and(eq(domains.workspaceId, workspaceId), eq(domains.name, domain.toLowerCase()), eq(domains.verified, true)))
    .limit(1);
  if (!d) throw validation({ domain: ["must be `default` or a verified domain of this workspace"] });
  return domain.toLowerCase();
}

/**
 * REST `GET /links`. Without parameters: every live link, newest first, as `{links}`. With `limit`:
 * one page by keyset (never by offset), so links created or deleted between two pages make the
 * later pages neither repeat nor skip a link.
 */
export async function listApiLinks(
  app: Pick<AppServices, "answers" | "config" | "reads">,
  actor: Actor,
  input: ApiListInput,
  now = Date.now(),
): Promise<ApiListDto> {
  const ws = actor.workspaceId;
  const sort: ApiSort = input.sort ?? "created";
  if (input.cursor !== undefined && input.limit === undefined) throw validation({ cursor: ["needs limit: give the same limit as the previous page"] });
  const start = input.cursor === undefined ? null : decodeCursor(ws, input, sort, input.cursor);
  const key = answerKey(app, ws, input, sort);
  if (key === null) return readApiLinks(app, ws, input, sort, start, now);
  const cached = app.answers.get(key) as ApiListDto | undefined;
  if (cached) return cached;
  const generation = app.answers.generation;
  const answer = await readApiLinks(app, ws, input, sort, start, now);
  app.answers.set(key, answer, answer.links.length, generation);
  return answer;
}

/**
 * The answer-cache key of a listing that only the workspace's links and domains decide (no filter,
 * newest first; `limit` and `cursor` allowed), or null. Filters by time (expired), health, clicks
 * or text are read every time. With a replica nothing is kept: a replica lagging behind a write
 * made outside a request (the admin command line) could fill the cache with what it no longer is.
 */
function answerKey(app: Pick<AppServices, "reads">, ws: string, input: ApiListInput, sort: ApiSort): string | null {
  if (app.reads.hasReplica || sort !== "created") return null;
  const { limit, cursor, sort: _sort, ...rest } = input;
  for (const v of Object.values(rest)) if (v !== undefined) return null;
  return `links\u0000${ws}\u0000${limit ?? ""}\u0000${cursor ?? ""}`;
}

async function readApiLinks(
  app: Pick<AppServices, "config" | "reads">,
  ws: string,
  input: ApiListInput,
  sort: ApiSort,
  start: Key | null,
  now: number,
): Promise<ApiListDto> {
  return app.reads.run(ws, async (db) => {
    const domain = await domainFilter(db, app, ws, input.domain);
    // `archived` lists archived links only; `live` and `expired` leave them out (filterConditions does both).
    const archived = input.status === "archived" ? ("archived" as const) : undefined;
    const where = await filterConditions(db, app, ws, { q: input.q, tag: input.tag, domain, slug: input.slug, status: archived }, now);
    const paged = input.limit !== undefined;
    if (!where) return paged ? { links: [], next_cursor: null } : { links: [] };
    if (input.status === "expired") where.push(expiredAt(now));
    if (input.health) where.push(healthIs(input.health));
    if (start) where.push(after(start));
    const order = sort === "clicks" ? [desc(allTimeClicks), desc(links.createdAt), desc(links.id)] : [desc(links.createdAt), desc(links.id)];
    const q = db
      .select({ row: links, clicks: sort === "clicks" ? allTimeClicks : sql<number>`0`.mapWith(Number) })
      .from(links)
      .where(and(...where))
      .orderBy(...order);
    // One row more than the page tells whether another page follows.
    const found = paged ? await q.limit(input.limit! + 1) : await q;
    const rows = paged ? found.slice(0, input.limit) : found;
    const dtos = await linkDtos(
      db,
      app.config,
      rows.map((r) => r.row),
    );
    if (!paged) return { links: dtos };
    const last = rows[rows.length - 1];
    const more = found.length > rows.length;
    const key: Key | null = !more ? null : sort === "clicks" ? [last.clicks, last.row.createdAt, last.row.id] : [last.row.createdAt, last.row.id];
    return { links: dtos, next_cursor: key && encodeCursor(ws, input, sort, key) };
  });
}
