import { and, asc, count, desc, eq, gte, isNull, lte, sql, type SQL } from "drizzle-orm";
import type { DbOrTx } from "../../../db/client";
import { links, linktreeItems, linktrees, type LinktreeColors, type LinktreeSocial } from "../../../db/schema";
import { notFound, validation } from "../../domain/errors";
import { newPublicId } from "../../lib/ids";
import { linkCacheKey } from "../../core/lookup";
import type { AppServices } from "../../core/services";
import type { Actor } from "../../trpc/context";
import { countClicks } from "../analytics";
import { domainNames, usableDomain } from "../domains";
import { checkNoLoops, shortUrl } from "../links";
import { deleteLinks, inLinkTransaction, insertLink, nextUpdatedAt, updateLink, type LinkTx } from "../links";
import { lockWorkspaceOrNotFound } from "../workspaces";
import { contrastProblems, resolvePalette, SOCIAL_LABELS, type ButtonStyle, type SocialPlatform, type Theme } from "./look";
import { shownTheme } from "../../domain/page-theme";
import {
  NO_URL_MESSAGE,
  titleLimit,
  WINDOW_MESSAGE,
  type AnalyticsInput,
  type CreateItemInput,
  type CreateLinktreeInput,
  type ItemDto,
  type ItemKind,
  type LinktreeAnalyticsDto,
  type LinktreeDetailDto,
  type LinktreeDto,
  type PublicPageDto,
  type UpdateItemInput,
  type UpdateLinktreeInput,
} from "./linktrees.schema";

// Linktree-owned link records are hard-deleted with their linktree (rows gone, not marked deleted), which
// frees their slugs; click events have no foreign key and stay.
//
// Headings and text items have no short link, but `linktree_items.link_id` cannot be null: they point
// at the page's own link record instead, which they never delete, count or show.

const treeColumns = {
  id: linktrees.id,
  workspaceId: linktrees.workspaceId,
  linkId: linktrees.linkId,
  slug: links.slug,
  title: linktrees.title,
  bio: linktrees.bio,
  avatarUrl: linktrees.avatarUrl,
  published: linktrees.published,
  theme: linktrees.theme,
  colors: linktrees.colors,
  buttonStyle: linktrees.buttonStyle,
  socials: linktrees.socials,
  domainId: linktrees.domainId,
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
  theme: Theme | null;
  colors: LinktreeColors | null;
  buttonStyle: ButtonStyle | null;
  socials: LinktreeSocial[] | null;
  domainId: string | null;
  createdAt: number;
  updatedAt: number;
};

const itemColumns = {
  id: linktreeItems.id,
  linkId: linktreeItems.linkId,
  slug: links.slug,
  url: links.url,
  title: linktreeItems.title,
  kind: linktreeItems.kind,
  position: linktreeItems.position,
  active: linktreeItems.active,
  startsAt: linktreeItems.startsAt,
  endsAt: linktreeItems.endsAt,
  createdAt: linktreeItems.createdAt,
  updatedAt: linktreeItems.updatedAt,
};
type ItemRow = {
  id: string;
  linkId: string;
  slug: string;
  url: string;
  title: string;
  kind: ItemKind;
  position: number;
  active: boolean;
  startsAt: number | null;
  endsAt: number | null;
  createdAt: number;
  updatedAt: number;
};

// The look is stored as jsonb, which keeps an object's members in an order of its own (by length): the
// answer lists them in the documented order, the same whatever the database read back.
const COLOR_MEMBERS = ["background", "text", "button", "button_text"] as const;
const orderedColors = (c: LinktreeColors): LinktreeColors => Object.fromEntries(COLOR_MEMBERS.filter((k) => c[k] !== undefined).map((k) => [k, c[k]]));
const orderedSocials = (s: LinktreeSocial[]) => s.map(({ platform, url }) => ({ platform, url })) as LinktreeDto["socials"];

/** The Linktree answer; `domainName` is the name of the branded domain it is on, if any. */
const toTreeDto = (r: TreeRow, domainName?: string | null): LinktreeDto => ({
  id: r.id,
  slug: r.slug,
  title: r.title,
  bio: r.bio,
  avatar_url: r.avatarUrl,
  published: r.published,
  ...(r.theme ? { theme: r.theme } : {}),
  ...(r.colors && Object.keys(r.colors).length ? { colors: orderedColors(r.colors) } : {}),
  ...(r.buttonStyle ? { button_style: r.buttonStyle } : {}),
  ...(r.socials?.length ? { socials: orderedSocials(r.socials) } : {}),
  ...(r.domainId && domainName ? { domain: domainName } : {}),
  created_at: r.createdAt,
  updated_at: r.updatedAt,
});

/** Trees' answers with their domains' names (one query, none when no tree is on a branded domain). */
async function treeDtos(db: DbOrTx, rows: TreeRow[]): Promise<LinktreeDto[]> {
  const names = await domainNames(
    db,
    rows.flatMap((r) => (r.domainId ? [r.domainId] : [])),
  );
  return rows.map((r) => toTreeDto(r, r.domainId ? names.get(r.domainId) : null));
}

const toItemDto = (app: Pick<AppServices, "config">, r: ItemRow): ItemDto => ({
  id: r.id,
  title: r.title,
  ...(r.kind === "link" ? { url: r.url, short_url: shortUrl(app.config, r.slug) } : {}),
  position: r.position,
  active: r.active,
  ...(r.kind !== "link" ? { kind: r.kind } : {}),
  ...(r.startsAt !== null ? { starts_at: r.startsAt } : {}),
  ...(r.endsAt !== null ? { ends_at: r.endsAt } : {}),
  created_at: r.createdAt,
  updated_at: r.updatedAt,
});

/** An item is on the public page while active and inside its window (`ends_at` itself is past it). */
const shownAt = (i: Pick<ItemRow, "active" | "startsAt" | "endsAt">, now: number) =>
  i.active && (i.startsAt === null || i.startsAt <= now) && (i.endsAt === null || now < i.endsAt);

/** The first window edge of an active item after `now` (an item appearing or going), or null when none is ahead. */
function nextEdge(items: Pick<ItemRow, "active" | "startsAt" | "endsAt">[], now: number): number | null {
  let next: number | null = null;
  for (const i of items) {
    if (!i.active) continue;
    for (const edge of [i.startsAt, i.endsAt]) if (edge !== null && edge > now && (next === null || edge < next)) next = edge;
  }
  return next;
}

/**
 * Marks the page's own link record as changed in `lt`: once the write commits, its cache entry is
 * dropped on every instance, and with it the rendered page kept for that entry (server/http/linktree-page.ts).
 */
const pageChanged = (lt: LinkTx, tree: Pick<TreeRow, "domainId" | "slug">) => lt.changed.push(linkCacheKey(tree.domainId, tree.slug));

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
const pageUrl = (app: Pick<AppServices, "config">, slug: string, domainName?: string | null) => shortUrl(app.config, slug, domainName);

/** The contrast rule on the colours the page will show (theme and overrides as they result). */
function checkContrast(theme: Theme | null, colors: LinktreeColors | null): void {
  const problems = contrastProblems(resolvePalette(theme, colors));
  if (problems.length) throw validation({ colors: problems });
}

/** Stored forms: an empty object or list is none. */
const colorsValue = (c: LinktreeColors | null | undefined) => (c && Object.keys(c).length ? c : null);
const socialsValue = (s: LinktreeSocial[] | null | undefined) => (s?.length ? s : null);
/**
 * The default button style is stored as none, so it reads as unset, as on a page made without one. (A
 * theme has no default among its values: unset follows the visitor's light or dark mode.)
 */
const buttonStyleValue = (b: ButtonStyle | null | undefined) => (b && b !== "rounded" ? b : null);

/** The branded domain named `name` (checked and share-locked in `lt`), or null for the default domain. */
async function domainFor(lt: LinkTx, workspaceId: string, name: string | null | undefined) {
  if (!name) return null;
  return usableDomain(lt.db, workspaceId, name);
}

export async function listLinktrees(app: Pick<AppServices, "db">, actor: Actor): Promise<LinktreeDto[]> {
  const rows = await app.db
    .select(treeColumns)
    .from(linktrees)
    .innerJoin(links, eq(links.id, linktrees.linkId))
    .where(eq(linktrees.workspaceId, actor.workspaceId))
    .orderBy(desc(linktrees.createdAt), desc(linktrees.id));
  return treeDtos(app.db, rows);
}

export async function createLinktree(
  app: Pick<AppServices, "config" | "db" | "invalidateSlugs">,
  actor: Actor,
  input: CreateLinktreeInput,
): Promise<LinktreeDto> {
  checkNoLoops(app.config, { avatar_url: input.avatar_url });
  const colors = colorsValue(input.colors);
  checkContrast(input.theme ?? null, colors);
  const [row, domainName] = await inLinkTransaction(app, async (lt) => {
    const tx = lt.db;
    await lockWorkspaceOrNotFound(tx, actor.workspaceId); // a workspace deletion waits, or this finds it gone
    const domain = await domainFor(lt, actor.workspaceId, input.domain);
    const link = await insertLink(
      lt,
      { workspaceId: actor.workspaceId, kind: "linktree", slug: input.slug, url: pageUrl(app, input.slug, domain?.name), domainId: domain?.id ?? null },
      "SLUG_ALREADY_IN_USE",
    );
    const now = link.createdAt;
    const values = {
      id: newPublicId(),
      workspaceId: actor.workspaceId,
      linkId: link.id,
      title: input.title,
      bio: input.bio ?? null,
      avatarUrl: input.avatar_url ?? null,
      published: false,
      theme: input.theme ?? null,
      colors,
      buttonStyle: buttonStyleValue(input.button_style),
      socials: socialsValue(input.socials),
      domainId: domain?.id ?? null,
      createdAt: now,
      updatedAt: now,
    };
    await tx.insert(linktrees).values(values);
    return [{ ...values, slug: link.slug }, domain?.name ?? null] as const;
  });
  return toTreeDto(row, domainName);
}

export async function getLinktree(app: Pick<AppServices, "config" | "db">, actor: Actor, id: string): Promise<LinktreeDetailDto> {
  const tree = await findOwnTree(app.db, actor, id);
  const items = await treeItems(app.db, tree.id);
  const [dto] = await treeDtos(app.db, [tree]);
  return { ...dto, items: items.map((i) => toItemDto(app, i)) };
}

export async function updateLinktree(
  app: Pick<AppServices, "config" | "db" | "invalidateSlugs">,
  actor: Actor,
  input: UpdateLinktreeInput,
): Promise<LinktreeDto> {
  const { id, ...patch } = input;
  checkNoLoops(app.config, { avatar_url: patch.avatar_url });
  const [after, domainName] = await inLinkTransaction(app, async (lt) => {
    const tx = lt.db;
    if (patch.domain) await lockWorkspaceOrNotFound(tx, actor.workspaceId); // before the domain's lock, in the order a workspace deletion takes them
    const current = await findOwnTree(tx, actor, id, true);
    const updatedAt = nextUpdatedAt(current.updatedAt);
    const theme = patch.theme !== undefined ? patch.theme : current.theme;
    const colors = patch.colors !== undefined ? colorsValue(patch.colors) : current.colors;
    // Judged on what the page will show: a new theme under stored colours counts as much as new colours.
    if (patch.theme !== undefined || patch.colors !== undefined) checkContrast(theme, colors);

    let slug = current.slug;
    let domainId = current.domainId;
    let name = current.domainId ? ((await domainNames(tx, [current.domainId])).get(current.domainId) ?? null) : null;
    const slugMoves = patch.slug !== undefined && patch.slug !== current.slug;
    if (patch.domain !== undefined) {
      const domain = await domainFor(lt, current.workspaceId, patch.domain);
      domainId = domain?.id ?? null;
      name = domain?.name ?? null;
    }
    if (slugMoves || domainId !== current.domainId) {
      // Moves the reservation, into the new domain's namespace too: the unique slug indexes decide.
      slug = patch.slug ?? current.slug;
      const page = { id: current.linkId, slug: current.slug, domainId: current.domainId, updatedAt: current.updatedAt };
      await updateLink(lt, page, { slug, domainId, url: pageUrl(app, slug, name), updatedAt }, "SLUG_ALREADY_IN_USE");
    }
    const set: Partial<typeof linktrees.$inferInsert> = { updatedAt };
    if (patch.title !== undefined) set.title = patch.title;
    if (patch.bio !== undefined) set.bio = patch.bio;
    if (patch.avatar_url !== undefined) set.avatarUrl = patch.avatar_url;
    if (patch.published !== undefined) set.published = patch.published;
    if (patch.theme !== undefined) set.theme = theme;
    if (patch.colors !== undefined) set.colors = colors;
    if (patch.button_style !== undefined) set.buttonStyle = buttonStyleValue(patch.button_style);
    if (patch.socials !== undefined) set.socials = socialsValue(patch.socials);
    if (patch.domain !== undefined) set.domainId = domainId;
    await tx.update(linktrees).set(set).where(eq(linktrees.id, id));
    pageChanged(lt, current);
    const after: TreeRow = {
      ...current,
      slug,
      title: set.title ?? current.title,
      bio: set.bio !== undefined ? set.bio : current.bio,
      avatarUrl: set.avatarUrl !== undefined ? set.avatarUrl : current.avatarUrl,
      published: set.published ?? current.published,
      theme,
      colors,
      buttonStyle: set.buttonStyle !== undefined ? set.buttonStyle : current.buttonStyle,
      socials: set.socials !== undefined ? set.socials : current.socials,
      domainId,
      updatedAt,
    };
    return [after, name] as const;
  });
  return toTreeDto(after, domainName);
}

export async function deleteLinktree(app: Pick<AppServices, "db" | "invalidateSlugs">, actor: Actor, id: string): Promise<void> {
  await inLinkTransaction(app, async (lt) => {
    const tx = lt.db;
    const tree = await findOwnTree(tx, actor, id, true);
    const items = await treeItems(tx, tree.id);
    // Children first: items and the linktree reference their link records.
    await tx.delete(linktreeItems).where(eq(linktreeItems.linktreeId, tree.id));
    await tx.delete(linktrees).where(eq(linktrees.id, tree.id));
    const itemLinks = items.filter((i) => i.kind === "link").map((i) => ({ id: i.linkId, slug: i.slug }));
    await deleteLinks(lt, [{ id: tree.linkId, slug: tree.slug, domainId: tree.domainId }, ...itemLinks]);
  });
}

/** The kind rules the body alone cannot settle: what a PATCH leaves stored counts as sent. */
function checkItem(kind: ItemKind, title: string, url: string | null, startsAt: number | null, endsAt: number | null): void {
  const fields: Record<string, string[]> = {};
  if ([...title].length > titleLimit(kind)) fields.title = [`must be 1-${titleLimit(kind)} characters for a ${kind} item`];
  if (kind === "link" && url === null) fields.url = ["a link item needs a url"];
  if (kind !== "link" && url !== null) fields.url = [NO_URL_MESSAGE(kind)];
  if (startsAt !== null && endsAt !== null && endsAt <= startsAt) fields.ends_at = [WINDOW_MESSAGE];
  if (Object.keys(fields).length) throw validation(fields);
}

export async function createItem(app: Pick<AppServices, "config" | "db" | "invalidateSlugs">, actor: Actor, input: CreateItemInput): Promise<ItemDto> {
  checkNoLoops(app.config, { url: input.url });
  const kind = input.kind ?? "link";
  checkItem(kind, input.title, input.url ?? null, input.starts_at ?? null, input.ends_at ?? null);
  const item = await inLinkTransaction(app, async (lt) => {
    const tx = lt.db;
    await lockWorkspaceOrNotFound(tx, actor.workspaceId); // before the tree's lock, in the order a workspace deletion takes them
    const tree = await findOwnTree(tx, actor, input.id, true);
    const n = await itemCount(tx, tree.id);
    const position = clamp(input.position ?? n, 0, n);
    if (position < n) await shiftPositions(tx, tree.id, 1, position);
    const now = Date.now();
    const link =
      kind === "link"
        ? await insertLink(lt, { workspaceId: tree.workspaceId, kind: "linktree_item", url: input.url! })
        : { id: tree.linkId, slug: tree.slug, url: "", createdAt: now };
    const row = {
      id: newPublicId(),
      linktreeId: tree.id,
      linkId: link.id,
      title: input.title,
      kind,
      position,
      active: true,
      startsAt: input.starts_at ?? null,
      endsAt: input.ends_at ?? null,
      createdAt: link.createdAt,
      updatedAt: link.createdAt,
    };
    await tx.insert(linktreeItems).values(row);
    pageChanged(lt, tree);
    return { ...row, slug: link.slug, url: link.url };
  });
  return toItemDto(app, item);
}

export async function updateItem(app: Pick<AppServices, "config" | "db" | "invalidateSlugs">, actor: Actor, input: UpdateItemInput): Promise<ItemDto> {
  const { id, itemId, ...patch } = input;
  checkNoLoops(app.config, { url: patch.url });
  const after = await inLinkTransaction(app, async (lt) => {
    const tx = lt.db;
    if (patch.kind === "link") await lockWorkspaceOrNotFound(tx, actor.workspaceId); // a new short link: in the order a workspace deletion locks
    const tree = await findOwnTree(tx, actor, id, true);
    const item = await findItem(tx, tree.id, itemId);
    const updatedAt = nextUpdatedAt(item.updatedAt);
    const kind = patch.kind ?? item.kind;
    const startsAt = patch.starts_at !== undefined ? patch.starts_at : item.startsAt;
    const endsAt = patch.ends_at !== undefined ? patch.ends_at : item.endsAt;
    const url = patch.url !== undefined ? patch.url : kind === "link" && item.kind === "link" ? item.url : null;
    checkItem(kind, patch.title ?? item.title, url, startsAt, endsAt);
    // A change of kind makes or removes the item's short link (its clicks stay); headings and text use the page's record.
    let link = { id: item.linkId, slug: item.slug, url: item.url };
    if (kind === "link" && item.kind !== "link") {
      const made = await insertLink(lt, { workspaceId: tree.workspaceId, kind: "linktree_item", url: url! });
      link = { id: made.id, slug: made.slug, url: made.url };
    } else if (kind !== "link" && item.kind === "link") {
      await tx.update(linktreeItems).set({ linkId: tree.linkId }).where(eq(linktreeItems.id, item.id));
      await deleteLinks(lt, [{ id: item.linkId, slug: item.slug }]);
      link = { id: tree.linkId, slug: tree.slug, url: "" };
    } else if (kind === "link" && url !== null && url !== item.url) {
      await updateLink(lt, { id: item.linkId, slug: item.slug, domainId: null, updatedAt: item.updatedAt }, { url, updatedAt });
      link.url = url;
    }
    let position = item.position;
    if (patch.position !== undefined) {
      const n = await itemCount(tx, tree.id);
      position = clamp(patch.position, 0, n - 1);
      // Close the gap at the old place and open one at the new place.
      if (position < item.position) await shiftPositions(tx, tree.id, 1, position, item.position - 1);
      if (position > item.position) await shiftPositions(tx, tree.id, -1, item.position + 1, position);
    }
    const set: Partial<typeof linktreeItems.$inferInsert> = { updatedAt, position, kind, linkId: link.id, startsAt, endsAt };
    if (patch.title !== undefined) set.title = patch.title;
    if (patch.active !== undefined) set.active = patch.active;
    await tx.update(linktreeItems).set(set).where(eq(linktreeItems.id, item.id));
    pageChanged(lt, tree);
    return { ...item, ...set, slug: link.slug, url: link.url } as ItemRow;
  });
  return toItemDto(app, after);
}

export async function deleteItem(app: Pick<AppServices, "db" | "invalidateSlugs">, actor: Actor, id: string, itemId: string): Promise<void> {
  await inLinkTransaction(app, async (lt) => {
    const tx = lt.db;
    const tree = await findOwnTree(tx, actor, id, true);
    const item = await findItem(tx, tree.id, itemId);
    await tx.delete(linktreeItems).where(eq(linktreeItems.id, item.id));
    if (item.kind === "link") await deleteLinks(lt, [{ id: item.linkId, slug: item.slug }]);
    await shiftPositions(tx, tree.id, -1, item.position + 1);
    pageChanged(lt, tree);
  });
}

/** Dashboard: sets the positions to the order of `itemIds`, which must name every item exactly once. */
export async function reorderItems(
  app: Pick<AppServices, "config" | "db" | "invalidateSlugs">,
  actor: Actor,
  id: string,
  itemIds: string[],
): Promise<ItemDto[]> {
  return inLinkTransaction(app, async (lt) => {
    const tx = lt.db;
    const tree = await findOwnTree(tx, actor, id, true);
    const items = await treeItems(tx, tree.id);
    pageChanged(lt, tree);
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

export async function linktreeAnalytics(app: Pick<AppServices, "config" | "db">, actor: Actor, input: AnalyticsInput): Promise<LinktreeAnalyticsDto> {
  const tree = await findOwnTree(app.db, actor, input.id);
  const items = await treeItems(app.db, tree.id);
  const linkItems = items.filter((i) => i.kind === "link");
  const counts = await countClicks(app.db, [tree.linkId, ...linkItems.map((i) => i.linkId)], input.from, input.to);
  // Headings and text have no short link and no clicks.
  const perItem = items.map((i) =>
    i.kind === "link"
      ? { id: i.id, title: i.title, short_url: shortUrl(app.config, i.slug), active: i.active, count: counts.get(i.linkId) ?? 0 }
      : { id: i.id, title: i.title, short_url: null, active: i.active, count: 0 },
  );
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

/** The published page whose own link record is `linkId` (the redirect host found it in the visited domain's namespace), or 404. */
export async function publicPage(app: Pick<AppServices, "config" | "db">, linkId: string): Promise<PublicPageDto> {
  const [tree] = await app.db
    .select(treeColumns)
    .from(links)
    .innerJoin(linktrees, eq(linktrees.linkId, links.id))
    .where(and(eq(links.id, linkId), eq(links.kind, "linktree"), isNull(links.deletedAt), eq(linktrees.published, true)))
    .limit(1);
  if (!tree) throw notFound();
  const now = Date.now();
  const all = await treeItems(app.db, tree.id);
  const items = all.filter((i) => shownAt(i, now));
  const domainName = tree.domainId ? ((await domainNames(app.db, [tree.domainId])).get(tree.domainId) ?? null) : null;
  return {
    slug: tree.slug,
    title: tree.title,
    bio: tree.bio,
    avatar_url: tree.avatarUrl,
    url: pageUrl(app, tree.slug, domainName),
    // On the default redirect domain, whichever domain the page is on: the image path is the service's own.
    og_image: `${shortUrl(app.config, "_/og")}/${tree.linkId}.png`,
    theme: shownTheme(tree.theme, tree.colors),
    palette: resolvePalette(tree.theme, tree.colors),
    button_style: tree.buttonStyle ?? "rounded",
    socials: (tree.socials ?? []).map((s) => ({ platform: s.platform as SocialPlatform, label: SOCIAL_LABELS[s.platform as SocialPlatform], url: s.url })),
    items: items.map((i) =>
      i.kind === "link"
        ? { kind: "link" as const, id: i.id, title: i.title, short_url: shortUrl(app.config, i.slug) }
        : { kind: i.kind, id: i.id, title: i.title },
    ),
    changes_at: nextEdge(all, now),
  };
}
