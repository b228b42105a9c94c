import { and, eq, isNull } from "drizzle-orm";
import { links, type Targeting } from "../../db/schema";
import type { AppServices } from "../services";

/** What the redirect host needs of a link; cached per slug. */
export type CachedLink = {
  id: string;
  workspaceId: string;
  slug: string;
  url: string;
  kind: "link" | "linktree" | "linktree_item";
  expiresAt: number | null;
  expirationUrl: string | null;
  targeting: Targeting | null;
  passwordHash: string | null;
  ogTitle: string | null;
  ogDescription: string | null;
  ogImage: string | null;
  updatedAt: number;
  /** When this snapshot was read (entries are re-read after CACHE_TTL_MS as a safety net). */
  cachedAt: number;
};

export const CACHE_TTL_MS = 60_000;

/**
 * The cached answer for a slug without touching the database: the link, null for a known miss,
 * undefined when it must be read. Lets the hot path answer a cache hit without awaiting.
 */
export function peekLinkBySlug(app: AppServices, slug: string, now = Date.now()): CachedLink | null | undefined {
  const hit = app.linkCache.get(slug);
  // Known misses stay cached until a create invalidates them; hits are re-read after the TTL.
  if (hit === null || (hit !== undefined && now - hit.cachedAt < CACHE_TTL_MS)) return hit;
  return undefined;
}

/** The live (not deleted) link with this slug, through the cache. Null when there is none. */
export async function lookupLinkBySlug(app: AppServices, slug: string): Promise<CachedLink | null> {
  const now = Date.now();
  const hit = peekLinkBySlug(app, slug, now);
  if (hit !== undefined) return hit;
  const version = app.linkCache.version;
  let rows;
  try {
    rows = await readLink(app, slug);
  } catch (e) {
    // Database away: the expired snapshot is the best answer there is (issue 8: cached links
    // keep redirecting during an outage); invalidations still drop it.
    const stale = app.linkCache.get(slug);
    if (stale) return stale;
    throw e;
  }
  const [row] = rows;
  const value: CachedLink | null = row ? { ...row, targeting: row.targeting ?? null, cachedAt: now } : null;
  // An invalidation that arrived while we read may mean this row is already stale: don't keep it.
  if (app.linkCache.version === version) app.linkCache.set(slug, value);
  return value;
}

function readLink(app: AppServices, slug: string) {
  return app.db
    .select({
      id: links.id,
      workspaceId: links.workspaceId,
      slug: links.slug,
      url: links.url,
      kind: links.kind,
      expiresAt: links.expiresAt,
      expirationUrl: links.expirationUrl,
      targeting: links.targeting,
      passwordHash: links.passwordHash,
      ogTitle: links.ogTitle,
      ogDescription: links.ogDescription,
      ogImage: links.ogImage,
      updatedAt: links.updatedAt,
    })
    .from(links)
    .where(and(eq(links.slug, slug), isNull(links.deletedAt)))
    .limit(1);
}
