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

/** The live (not deleted) link with this slug, through the cache. Null when there is none. */
export async function lookupLinkBySlug(app: AppServices, slug: string): Promise<CachedLink | null> {
  const hit = app.linkCache.get(slug);
  const now = Date.now();
  // Known misses stay cached until a create invalidates them; hits are re-read after the TTL.
  if (hit === null || (hit !== undefined && now - hit.cachedAt < CACHE_TTL_MS)) return hit;
  const [row] = await app.db
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
  const value: CachedLink | null = row ? { ...row, targeting: row.targeting ?? null, cachedAt: now } : null;
  app.linkCache.set(slug, value);
  return value;
}
