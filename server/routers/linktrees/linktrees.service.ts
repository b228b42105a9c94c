import { and, asc, count, desc, eq, gte, isNull, lte, sql, type SQL } from "drizzle-orm";
import type { DbOrTx } from "../../../db/client";
import { links, linktreeItems, linktrees } from "../../../db/schema";
import { notFound, validation } from "../../domain/errors";
import { newId } from "../../lib/ids";
import type { AppServices } from "../../core/services";
import type { Actor } from "../../trpc/context";
import { countClicks } from "../analytics";
import { checkNoLoops, shortUrl } from "../links";
import { deleteLinks, inLinkTransaction, insertLink, nextUpdatedAt, updateLink } from "../links";
import { lockWorkspaceOrNotFound } from "../workspaces";
import type {
  AnalyticsInput,
  CreateItemInput,
  CreateLinktreeInput,
  ItemDto,
  LinktreeAnalyticsDto,
  LinktreeDetailDto,
  LinktreeDto,
  PublicPageDto,
  UpdateItemInput,
  UpdateLinktreeInput,
} from "./linktrees.schema";

// Linktree-owned link records are hard-deleted with their linktree (rows gone, not marked deleted), which
// frees their slugs; click events have no foreign key and stay.

const treeColumns = {
  id: linktrees.id,
  workspaceId: linktrees.workspaceId,
  linkId: linktrees.linkId,
  slug: links.slug,
  title: linktrees.title,
  bio: linktrees.bio,
  avatarUrl: linktrees.avatarUrl,
  published: linktrees.published,
  createdAt: linktrees.createdAt,
  updatedAt: linktrees.updatedAt,
};
type TreeRow = {
  id: string;
  workspaceId: string;
  linkId: string;
  slug: string;
  title: string;
  bio: string | null;
  avatarUrl: string | null;
  published: boolean;
  createdAt: number;
  updatedAt: number;
};

const itemColumns = {
  id: linktreeItems.id,
  linkId: linktreeItems.linkId,
  slug: links.slug,
  url: links.url,
  title: linktreeItems.title,
  position: linktreeItems.position,
  active: linktreeItems.active,
  createdAt: linktreeItems.createdAt,
  updatedAt: linktreeItems.updatedAt,
};
type ItemRow = {
  id: string;
  linkId: string;
  slug: string;
  url: string;
  title: string;
  position: number;
  active: boolean;
  createdAt: number;
  updatedAt: number;
};

const toTreeDto = (r: TreeRow): LinktreeDto => ({
  id: r.id,
  slug: r.slug,
  title: r.title,
  bio: r.bio,
  avatar_url: r.avatarUrl,
  published: r.published,
  created_at: r.createdAt,
  updated_at: r.updatedAt,
});

const toItemDto = (app: AppServices, r: ItemRow): ItemDto => ({
  id: r.id,
  title: r.title,
  url: r.url,
  short_url: shortUrl(app.config, r.slug),
  position: r.position,
  active: r.active,
  created_at: r.createdAt,
  updated_at: r.updatedAt,
});

const clamp = (v: number, lo: number, hi: number) => Math.min(Math.max(v, lo), hi);

/**
 * A linktree of the actor's workspace, or 404. `forUpdate` locks the linktree row: every change of
 * its items takes this lock first, so concurrent edits serialise and positions stay dense.
 */
async function findOwnTree(db: DbOrTx, actor: Actor, id: string, forUpdate = false): Promise<TreeRow> {
  const q = db
    .select(treeColumns)
    .from(linktrees)
    .innerJoin(links, eq(links.id, linktrees.linkId))
    .where(and(eq(linktrees.id, id), eq(linktrees.workspaceId, actor.workspaceId)))
    .limit(1);
  const [row] = forUpdate ? await q.for("update", { of: linktrees }) : await q;
  if (!row) throw notFound();
  return row;
}

async function treeItems(db: DbOrTx, treeId: string): Promise<ItemRow[]> {
  return db
    .select(itemColumns)
    .from(linktreeItems)
    .innerJoin(links, eq(links.id, linktreeItems.linkId))
    .where(eq(linktreeItems.linktreeId, treeId))
    .orderBy(asc(linktreeItems.position), asc(linktreeItems.id));
}

async function findItem(db: DbOrTx, treeId: string, itemId: string): Promise<ItemRow> {
  const [row] = await db
    .select(itemColumns)
    .from(linktreeItems)
    .innerJoin(links, eq(links.id, linktreeItems.linkId))
    .where(and(eq(linktreeItems.id, itemId), eq(linktreeItems.linktreeId, treeId)))
    .limit(1);
  if (!row) throw notFound();
  return row;
}

async function itemCount(db: DbOrTx, treeId: string): Promise<number> {
  const [{ n }] = await db.select({ n: count() }).from(linktreeItems).where(eq(linktreeItems.linktreeId, treeId));
  return Number(n);
}

/** Adds `delta` to the positions in [from, to] (inclusive, `to` open-ended when undefined). */
async function shiftPositions(db: DbOrTx, treeId: string, delta: 1 | -1, from: number, to?: number): Promise<void> {
  const where: SQL[] = [eq(linktreeItems.linktreeId, treeId), gte(linktreeItems.position, from)];
  if (to !== undefined) where.push(lte(linktreeItems.position, to));
  await db
    .update(linktreeItems)
    .set({ position: sql`${linktreeItems.position} + ${delta}` })
    .where(and(...where));
}

/** The page's own link record points at the page itself; the redirect host serves it, never redirects. */
const pageUrl = (app: AppServices, slug: string) => shortUrl(app.config, slug);

export async function listLinktrees(app: AppServices, actor: Actor): Promise<LinktreeDto[]> {
  const rows = await app.db
    .select(treeColumns)
    .from(linktrees)
    .innerJoin(links, eq(links.id, linktrees.linkId))
    .where(eq(linktrees.workspaceId, actor.workspaceId))
    .orderBy(desc(linktrees.createdAt), desc(linktrees.id));
  return rows.map(toTreeDto);
}

export async function createLinktree(app: AppServices, actor: Actor, input: CreateLinktreeInput): Promise<LinktreeDto> {
  checkNoLoops(app.config, input);
  const row = await inLinkTransaction(app, async (lt) => {
    const tx = lt.db;
    await lockWorkspaceOrNotFound(tx, actor.workspaceId); // a workspace deletion waits, or this finds it gone
    const link = await insertLink(
      lt,
      { workspaceId: actor.workspaceId, kind: "linktree", slug: input.slug, url: pageUrl(app, input.slug) },
      "SLUG_ALREADY_IN_USE",
    );
    const now = link.createdAt;
    const values = {
      id: newId(),
      workspaceId: actor.workspaceId,
      linkId: link.id,
      title: input.title,
      bio: input.bio ?? null,
      avatarUrl: input.avatar_url ?? null,
      published: false,
      createdAt: now,
      updatedAt: now,
    };
    await tx.insert(linktrees).values(values);
    return { ...values, slug: link.slug };
  });
  return toTreeDto(row);
}

export async function getLinktree(app: AppServices, actor: Actor, id: string): Promise<LinktreeDetailDto> {
  const tree = await findOwnTree(app.db, actor, id);
  const items = await treeItems(app.db, tree.id);
  return { ...toTreeDto(tree), items: items.map((i) => toItemDto(app, i)) };
}

export async function updateLinktree(app: AppServices, actor: Actor, input: UpdateLinktreeInput): Promise<LinktreeDto> {
  const { id, ...patch } = input;
  checkNoLoops(app.config, patch);
  const after = await inLinkTransaction(app, async (lt) => {
    const tx = lt.db;
    const current = await findOwnTree(tx, actor, id, true);
    const updatedAt = nextUpdatedAt(current.updatedAt);
    let slug = current.slug;
    if (patch.slug !== undefined && patch.slug !== current.slug) {
      // Moves the reservation: the unique slug index decides.
      const next = patch.slug;
      const page = { id: current.linkId, slug: current.slug, domainId: null, updatedAt: current.updatedAt };
      await updateLink(lt, page, { slug: next, url: pageUrl(app, next), updatedAt }, "SLUG_ALREADY_IN_USE");
      slug = next;
    }
    const set: Partial<typeof linktrees.$inferInsert> = { updatedAt };
    if (patch.title !== undefined) set.title = patch.title;
    if (patch.bio !== undefined) set.bio = patch.bio;
    if (patch.avatar_url !== undefined) set.avatarUrl = patch.avatar_url;
    if (patch.published !== undefined) set.published = patch.published;
    await tx.update(linktrees).set(set).where(eq(linktrees.id, id));
    const after: TreeRow = {
      ...current,
      slug,
      title: set.title ?? current.title,
      bio: set.bio !== undefined ? set.bio : current.bio,
      avatarUrl: set.avatarUrl !== undefined ? set.avatarUrl : current.avatarUrl,
      published: set.published ?? current.published,
      updatedAt,
    };
    return after;
  });
  return toTreeDto(after);
}

export async function deleteLinktree(app: AppServices, actor: Actor, id: string): Promise<void> {
  await inLinkTransaction(app, async (lt) => {
    const tx = lt.db;
    const tree = await findOwnTree(tx, actor, id, true);
    const items = await treeItems(tx, tree.id);
    // Children first: items and the linktree reference their link records.
    await tx.delete(linktreeItems).where(eq(linktreeItems.linktreeId, tree.id));
    await tx.delete(linktrees).where(eq(linktrees.id, tree.id));
    await deleteLinks(lt, [{ id: tree.linkId, slug: tree.slug }, ...items.map((i) => ({ id: i.linkId, slug: i.slug }))]);
  });
}

export async function createItem(app: AppServices, actor: Actor, input: CreateItemInput): Promise<ItemDto> {
  checkNoLoops(app.config, input);
  const item = await inLinkTransaction(app, async (lt) => {
    const tx = lt.db;
    await lockWorkspaceOrNotFound(tx, actor.workspaceId); // before the tree's lock, in the order a workspace deletion takes them
    const tree = await findOwnTree(tx, actor, input.id, true);
    const n = await itemCount(tx, tree.id);
    const position = clamp(input.position ?? n, 0, n);
    if (position < n) await shiftPositions(tx, tree.id, 1, position);
    const link = await insertLink(lt, { workspaceId: tree.workspaceId, kind: "linktree_item", url: input.url });
    const row = {
      id: newId(),
      linktreeId: tree.id,
      linkId: link.id,
      title: input.title,
      position,
      active: true,
      createdAt: link.createdAt,
      updatedAt: link.createdAt,
    };
    await tx.insert(linktreeItems).values(row);
    return { ...row, slug: link.slug, url: link.url };
  });
  return toItemDto(app, item);
}

export async function updateItem(app: AppServices, actor: Actor, input: UpdateItemInput): Promise<ItemDto> {
  const { id, itemId, ...patch } = input;
  checkNoLoops(app.config, patch);
  const after = await inLinkTransaction(app, async (lt) => {
    const tx = lt.db;
    const tree = await findOwnTree(tx, actor, id, true);
    const item = await findItem(tx, tree.id, itemId);
    const updatedAt = nextUpdatedAt(item.updatedAt);
    let position = item.position;
    if (patch.position !== undefined) {
      const n = await itemCount(tx, tree.id);
      position = clamp(patch.position, 0, n - 1);
      // Close the gap at the old place and open one at the new place.
      if (position < item.position) await shiftPositions(tx, tree.id, 1, position, item.position - 1);
      if (position > item.position) await shiftPositions(tx, tree.id, -1, item.position + 1, position);
    }
    if (patch.url !== undefined && patch.url !== item.url) {
      await updateLink(lt, { id: item.linkId, slug: item.slug, domainId: null, updatedAt: item.updatedAt }, { url: patch.url, updatedAt });
    }
    const set: Partial<typeof linktreeItems.$inferInsert> = { updatedAt, position };
    if (patch.title !== undefined) set.title = patch.title;
    if (patch.active !== undefined) set.active = patch.active;
    await tx.update(linktreeItems).set(set).where(eq(linktreeItems.id, item.id));
    return { ...item, ...set, url: patch.url ?? item.url } as ItemRow;
  });
  return toItemDto(app, after);
}

export async function deleteItem(app: AppServices, actor: Actor, id: string, itemId: string): Promise<void> {
  await inLinkTransaction(app, async (lt) => {
    const tx = lt.db;
    const tree = await findOwnTree(tx, actor, id, true);
    const item = await findItem(tx, tree.id, itemId);
    await tx.delete(linktreeItems).where(eq(linktreeItems.id, item.id));
    await deleteLinks(lt, [{ id: item.linkId, slug: item.slug }]);
    await shiftPositions(tx, tree.id, -1, item.position + 1);
  });
}

/** Dashboard: sets the positions to the order of `itemIds`, which must name every item exactly once. */
export async function reorderItems(app: AppServices, actor: Actor, id: string, itemIds: string[]): Promise<ItemDto[]> {
  return app.db.transaction(async (tx) => {
    const tree = await findOwnTree(tx, actor, id, true);
    const items = await treeItems(tx, tree.id);
    const known = new Set(items.map((i) => i.id));
    if (new Set(itemIds).size !== itemIds.length || itemIds.length !== items.length || !itemIds.every((i) => known.has(i))) {
      throw validation({ itemIds: ["must list every item of the linktree exactly once"] });
    }
    const now = Date.now();
    const byId = new Map(items.map((i) => [i.id, i]));
    const out: ItemRow[] = [];
    for (const [position, itemId] of itemIds.entries()) {
      const item = byId.get(itemId)!;
      if (item.position === position) {
        out.push(item);
        continue;
      }
      const updatedAt = nextUpdatedAt(item.updatedAt, now);
      await tx.update(linktreeItems).set({ position, updatedAt }).where(eq(linktreeItems.id, itemId));
      out.push({ ...item, position, updatedAt });
    }
    return out.map((i) => toItemDto(app, i));
  });
}

export async function linktreeAnalytics(app: AppServices, actor: Actor, input: AnalyticsInput): Promise<LinktreeAnalyticsDto> {
  const tree = await findOwnTree(app.db, actor, input.id);
  const items = await treeItems(app.db, tree.id);
  const counts = await countClicks(app.db, [tree.linkId, ...items.map((i) => i.linkId)], input.from, input.to);
  const perItem = items.map((i) => ({ id: i.id, title: i.title, short_url: shortUrl(app.config, i.slug), active: i.active, count: counts.get(i.linkId) ?? 0 }));
  return {
    id: tree.id,
    slug: tree.slug,
    title: tree.title,
    published: tree.published,
    views: counts.get(tree.linkId) ?? 0,
    clicks: perItem.reduce((sum, i) => sum + i.count, 0),
    items: perItem,
  };
}

/** The published page for a slug (any case), or 404: unknown, not a linktree, or unpublished. */
export async function publicPage(app: AppServices, slug: string): Promise<PublicPageDto> {
  const [tree] = await app.db
    .select({ id: linktrees.id, slug: links.slug, title: linktrees.title, bio: linktrees.bio, avatarUrl: linktrees.avatarUrl })
    .from(links)
    .innerJoin(linktrees, eq(linktrees.linkId, links.id))
    .where(and(eq(links.slug, slug.toLowerCase()), eq(links.kind, "linktree"), isNull(links.deletedAt), eq(linktrees.published, true)))
    .limit(1);
  if (!tree) throw notFound();
  const items = (await treeItems(app.db, tree.id)).filter((i) => i.active);
  return {
    slug: tree.slug,
    title: tree.title,
    bio: tree.bio,
    avatar_url: tree.avatarUrl,
    url: shortUrl(app.config, tree.slug),
    items: items.map((i) => ({ id: i.id, title: i.title, short_url: shortUrl(app.config, i.slug) })),
  };
}
