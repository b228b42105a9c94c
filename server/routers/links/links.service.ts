import { and, desc, eq, isNull } from "drizzle-orm";
import type { DbOrTx } from "../../../db/client";
import { links } from "../../../db/schema";
import { base, type Config } from "../../config";
import { AppError, isUniqueViolation, notFound, validation, type Fields } from "../../domain/errors";
import { hashPassword } from "../../lib/crypto";
import { newLinkId } from "../../lib/ids";
import { consume } from "../../lib/rate-limit";
import { DOMAIN_SLUG_INDEX, SLUG_INDEX, withGeneratedSlug } from "../../lib/slugs";
import { isOnHost } from "../../lib/urls";
import { isObject, type FieldIssue } from "../../lib/input";
import { linkCacheKey } from "../../core/lookup";
import type { AppServices } from "../../core/services";
import { domainNames, usableDomain } from "../domains/domains.service";
import { lockWorkspaceOrNotFound } from "../workspaces/workspace-lock";
import type { Actor, Context } from "../../trpc/context";
import type { CreateLinkInput, LinkDto, UpdateLinkInput } from "./links.schema";

export type LinkRow = typeof links.$inferSelect;
export const PUBLIC_WORKSPACE_ID = "public";

/** The short URL on the default redirect domain, or on the branded domain `domainName`. */
export const shortUrl = (config: Config, slug: string, domainName?: string | null) =>
  domainName ? `${config.customDomainScheme ?? "https"}://${domainName}/${slug}` : `${base(config.redirectUrl)}/${slug}`;

/**
 * The public shape of a link. The password hash never leaves this module. A link on a branded
 * domain needs that domain's name (`linkDtos` looks names up); a deleted link whose domain was
 * removed since has none left and shows the default domain.
 */
export function toLinkDto(row: LinkRow, config: Config, domainName?: string | null): LinkDto {
  return {
    id: row.id,
    slug: row.slug,
    url: row.url,
    short_url: shortUrl(config, row.slug, domainName),
    redirect_domain: domainName || config.redirectDomain,
    tags: row.tags ?? [],
    expires_at: row.expiresAt,
    expiration_url: row.expirationUrl,
    targeting: row.targeting ?? null,
    has_password: row.passwordHash !== null,
    og_title: row.ogTitle,
    og_description: row.ogDescription,
    og_image: row.ogImage,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    deleted_at: row.deletedAt,
    // Absent rather than null when unset, so links without one read as they always did.
    ...(row.title !== null ? { title: row.title } : {}),
  };
}

/** `toLinkDto` for rows of any domain: one query for the names of their branded domains, none when there are none. */
export async function linkDtos(db: DbOrTx, config: Config, rows: LinkRow[]): Promise<LinkDto[]> {
  const ids = rows.flatMap((r) => (r.domainId === null ? [] : [r.domainId]));
  const names = await domainNames(db, ids);
  return rows.map((r) => toLinkDto(r, config, r.domainId === null ? null : names.get(r.domainId)));
}

/** A slug taken in its namespace: the default domain's or a branded domain's. */
const isSlugConflict = (e: unknown) => isUniqueViolation(e, SLUG_INDEX) || isUniqueViolation(e, DOMAIN_SLUG_INDEX);

export type SlugConflictCode = "LINK_ID_ALREADY_IN_USE" | "SLUG_ALREADY_IN_USE";

/**
 * Runs a write that claims `slug` inside a savepoint, so a taken slug (the unique index decides)
 * answers 409 `code` without aborting the caller's transaction. Links and linktrees word it differently.
 */
export async function withSlug<T>(db: DbOrTx, slug: string, code: SlugConflictCode, write: (sp: DbOrTx) => Promise<T>): Promise<T> {
  try {
    return await db.transaction(write);
  } catch (e) {
    if (isSlugConflict(e)) throw new AppError(code, { message: `slug ${slug} is taken` });
    throw e;
  }
}

/** Strictly increasing, so every write shows in `updated_at`, even within one millisecond. */
export const nextUpdatedAt = (previous: number, now = Date.now()) => Math.max(now, previous + 1);

/** Stored URLs must not point back at the redirect domain (no loops), nor at the branded domain the link is on. */
export function loopIssues(config: Config, input: Record<string, unknown>, domainName?: unknown): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const hosts = typeof domainName === "string" && domainName ? [config.redirectDomain, domainName] : [config.redirectDomain];
  const check = (field: string, value: unknown, label = field) => {
    for (const host of hosts) {
      if (typeof value === "string" && isOnHost(value, host)) issues.push({ field, message: `${label} must not point at the redirect domain ${host}` });
    }
  };
  for (const name of ["url", "expiration_url", "og_image", "avatar_url"]) check(name, input[name]);
  // Raw input too (runtimeChecks): members are not yet known to have their types.
  const t = isObject(input.targeting) ? input.targeting : null;
  if (t) {
    check("targeting", t.ios, "targeting.ios");
    check("targeting", t.android, "targeting.android");
    if (isObject(t.geo)) for (const [k, v] of Object.entries(t.geo)) check("targeting", v, `targeting.geo.${k}`);
  }
  return issues;
}

export function checkNoLoops(config: Config, input: Record<string, unknown>, domainName?: string | null): void {
  const issues = loopIssues(config, input, domainName);
  if (!issues.length) return;
  const fields: Fields = {};
  for (const i of issues) (fields[i.field] ??= []).push(i.message);
  throw validation(fields);
}

/** The columns a new expiry sets: clearing it clears its fallback URL too, for one link or many. */
export const expirySet = (expiresAt: number | null): Partial<LinkRow> => (expiresAt === null ? { expiresAt, expirationUrl: null } : { expiresAt });

export const EXPIRY_REQUIRED_MESSAGE = "requires expires_at, sent in the same request or already stored";

const expiryRequired = () => new AppError("EXPIRATION_URL_WITHOUT_EXPIRY", { fields: { expiration_url: [EXPIRY_REQUIRED_MESSAGE] } });

type NewLink = { workspaceId: string; url: string; kind?: LinkRow["kind"]; slug?: string; domainId?: string | null } & Partial<
  Pick<LinkRow, "title" | "tags" | "expiresAt" | "expirationUrl" | "targeting" | "passwordHash" | "ogTitle" | "ogDescription" | "ogImage">
>;

/**
 * Inserts one link row with the given slug, or a generated one, in the namespace of its domain
 * (`domainId`; none: the default redirect domain's). A taken slug answers `conflictCode` (links and
 * linktrees word it differently). Used by links and linktrees alike.
 */
export async function insertLink(db: DbOrTx, values: NewLink, conflictCode: SlugConflictCode = "LINK_ID_ALREADY_IN_USE"): Promise<LinkRow> {
  const now = Date.now();
  const row = (slug: string) => ({ ...values, id: newLinkId(), slug, kind: values.kind ?? "link", createdAt: now, updatedAt: now });
  if (values.slug === undefined) {
    return withGeneratedSlug(db, async (slug, tx) => (await tx.insert(links).values(row(slug)).returning())[0], isSlugConflict, values.domainId ?? null);
  }
  const slug = values.slug;
  return withSlug(db, slug, conflictCode, async (sp) => (await sp.insert(links).values(row(slug)).returning())[0]);
}

export async function createLink(ctx: Context, actor: Actor | null, input: CreateLinkInput): Promise<LinkDto> {
  const { app } = ctx;
  if (!actor) await consume(app.limits, "anonymousCreate", ctx.req.ip);
  checkNoLoops(app.config, input, input.domain);
  const workspaceId = actor?.workspaceId ?? PUBLIC_WORKSPACE_ID;
  const values = {
    workspaceId,
    url: input.url,
    slug: input.slug,
    tags: input.tags ?? [],
    expiresAt: input.expires_at ?? null,
    expirationUrl: input.expiration_url ?? null,
    targeting: input.targeting ?? null,
    passwordHash: input.password !== undefined ? await hashPassword(input.password) : null,
    ogTitle: input.og_title || null,
    ogDescription: input.og_description || null,
    ogImage: input.og_image ?? null,
    title: input.title || null,
  };
  // On a branded domain: checked and share-locked in the same transaction as the insert, so the
  // domain cannot be removed under the new link (DELETE /domains takes the row's update lock).
  const domainName = input.domain ?? null;
  const row =
    domainName === null
      ? await insertLink(app.db, values)
      : await app.db.transaction(async (tx) => {
          await lockWorkspaceOrNotFound(tx, workspaceId); // before the domain's lock, in the order a workspace deletion takes them
          return insertLink(tx, { ...values, domainId: (await usableDomain(tx, workspaceId, domainName)).id });
        });
  await app.invalidateSlugs([linkCacheKey(row.domainId, row.slug)]); // drops a cached "unknown slug"
  return toLinkDto(row, app.config, domainName);
}

/** A listing read: the read replica when one is set and has the workspace's own writes (read-routing.ts). */
export async function listLinks(app: AppServices, actor: Actor): Promise<LinkDto[]> {
  return app.reads.run(actor.workspaceId, async (db) => {
    const rows = await db
      .select()
      .from(links)
      .where(and(eq(links.workspaceId, actor.workspaceId), eq(links.kind, "link"), isNull(links.deletedAt)))
      .orderBy(desc(links.createdAt), desc(links.id));
    return linkDtos(db, app.config, rows);
  });
}

/** A link of the actor's workspace (deleted ones included), or 404. */
export async function findOwnLink(db: DbOrTx, actor: Actor, id: string, forUpdate = false): Promise<LinkRow> {
  const q = db
    .select()
    .from(links)
    .where(and(eq(links.id, id), eq(links.workspaceId, actor.workspaceId)))
    .limit(1);
  const [row] = forUpdate ? await q.for("update") : await q;
  if (!row) throw notFound();
  return row;
}

export async function getLink(app: AppServices, actor: Actor, id: string): Promise<LinkDto> {
  return (await linkDtos(app.db, app.config, [await findOwnLink(app.db, actor, id)]))[0];
}

export async function updateLink(app: AppServices, actor: Actor, input: UpdateLinkInput): Promise<LinkDto> {
  const { id, domain, ...patch } = input;
  checkNoLoops(app.config, patch, domain);
  const passwordHash = typeof patch.password === "string" ? await hashPassword(patch.password) : patch.password;
  const { before, after } = await app.db.transaction(async (tx) => {
    const current = await findOwnLink(tx, actor, id, true);
    if (current.deletedAt !== null) throw notFound();
    if (current.kind !== "link") throw new AppError("LINKTREE_LINK_NOT_EDITABLE");
    const set: Partial<LinkRow> = { updatedAt: nextUpdatedAt(current.updatedAt) };
    if (patch.url !== undefined) set.url = patch.url;
    if (patch.slug !== undefined) set.slug = patch.slug;
    if (patch.tags !== undefined) set.tags = patch.tags;
    if (patch.expires_at !== undefined) Object.assign(set, expirySet(patch.expires_at));
    if (patch.expiration_url !== undefined) {
      const expiry = patch.expires_at !== undefined ? patch.expires_at : current.expiresAt;
      if (patch.expiration_url !== null && expiry === null) throw expiryRequired();
      set.expirationUrl = patch.expiration_url;
    }
    if (patch.targeting !== undefined) set.targeting = patch.targeting;
    if (passwordHash !== undefined) set.passwordHash = passwordHash;
    if (patch.og_title !== undefined) set.ogTitle = patch.og_title || null;
    if (patch.og_description !== undefined) set.ogDescription = patch.og_description || null;
    if (patch.og_image !== undefined) set.ogImage = patch.og_image;
    if (patch.title !== undefined) set.title = patch.title || null;
    // Another domain (null: the default one) moves the link, slug and all, into that namespace.
    if (domain !== undefined) set.domainId = domain === null ? null : (await usableDomain(tx, current.workspaceId, domain)).id;
    const [row] = await withSlug(tx, set.slug ?? current.slug, "LINK_ID_ALREADY_IN_USE", (sp) => sp.update(links).set(set).where(eq(links.id, id)).returning());
    return { before: current, after: row };
  });
  await app.invalidateSlugs([...new Set([linkCacheKey(before.domainId, before.slug), linkCacheKey(after.domainId, after.slug)])]);
  return (await linkDtos(app.db, app.config, [after]))[0];
}

/**
 * Soft delete: the slug is freed, the record and its clicks are kept. Linktree-owned links are
 * refused, since their page or item would keep pointing at a slug another link could then take.
 * Returns the freed slug's link cache key, or null when the link was already deleted. Run inside a transaction
 * that has the row locked.
 */
export async function softDeleteLink(
  tx: DbOrTx,
  row: Pick<LinkRow, "id" | "kind" | "slug" | "deletedAt"> & { domainId?: string | null },
): Promise<string | null> {
  if (row.kind !== "link") throw new AppError("LINKTREE_LINK_NOT_EDITABLE");
  if (row.deletedAt !== null) return null;
  const now = Date.now();
  await tx.update(links).set({ deletedAt: now, updatedAt: now }).where(eq(links.id, row.id));
  // The link cache's key: the slug itself on the default domain (lookup.ts `linkCacheKey`).
  return linkCacheKey(row.domainId ?? null, row.slug);
}

export async function deleteLink(app: AppServices, actor: Actor, id: string): Promise<void> {
  const slug = await app.db.transaction(async (tx) => softDeleteLink(tx, await findOwnLink(tx, actor, id, true)));
  if (slug) await app.invalidateSlugs([slug]); // null: already deleted, 204 again
}
