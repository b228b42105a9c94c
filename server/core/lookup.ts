import { and, eq, isNull, sql, type SQL } from "drizzle-orm";
import { domains, links, type Targeting, type Variant } from "../../db/schema";
import type { Config } from "../config";
import { isDatabaseUnavailable } from "../domain/errors";
import type { Db } from "../../db/client";
import type { LruCache } from "../lib/lru";
import { CacheReader } from "./cache-reader";

/** What a lookup needs of the app (the services container provides it). */
export type LookupDeps = { db: Db; linkCache: LruCache<CacheEntry> };

/**
 * The link cache's key: the plain slug on the default redirect domain (so nothing changes there),
 * `<domainId>/<slug>` on a branded domain (a slug has no `/`, so the two never meet).
 */
export const linkCacheKey = (domainId: string | null, slug: string) => (domainId === null ? slug : `${domainId}/${slug}`);

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
  /** Absent (older snapshots, tests' fixtures): false. */
  forwardQuery?: boolean;
  /** Absent: none. */
  variants?: Variant[] | null;
  updatedAt: number;
  /** When this snapshot was read (entries are re-read after CACHE_TTL_MS as a safety net). */
  cachedAt: number;
};

export const CACHE_TTL_MS = 60_000;

/** A known miss ("no live link has this slug"), kept with its time like a hit. */
export type CachedMiss = { miss: true; cachedAt: number };
export type CacheEntry = CachedLink | CachedMiss;

/** After a read fails because the database is unavailable, how long expired entries are served as they are. */
export const OUTAGE_RETRY_MS = 5_000;

/** One reader per cache: its outage state is the cache's. */
const ttlReaders = new WeakMap<object, CacheReader<never, unknown>>();

/** Entries are re-read after CACHE_TTL_MS; while the database is away they are served as they are. */
function ttlEntries<V extends { cachedAt: number }>(cache: LruCache<V | CachedMiss>, answerAtOnce: boolean): CacheReader<V | CachedMiss, V | null> {
  let reader = ttlReaders.get(cache) as CacheReader<V | CachedMiss, V | null> | undefined;
  if (reader) return reader;
  reader = new CacheReader<V | CachedMiss, V | null>({
    cache,
    fresh: (entry, now) => now - entry.cachedAt < CACHE_TTL_MS,
    valueOf: (entry) => ("miss" in entry ? null : (entry as V)),
    entryOf: (value, now) => value ?? { miss: true, cachedAt: now },
    staleWhileError: { isUnavailable: isDatabaseUnavailable, retryMs: OUTAGE_RETRY_MS, answerAtOnce },
  });
  ttlReaders.set(cache, reader as unknown as CacheReader<never, unknown>);
  return reader;
}

/**
 * The cached answer for a slug without touching the database: the link, null for a known miss,
 * undefined when it must be read. Lets the hot path answer a cache hit without awaiting.
 */
export function peekLinkBySlug(app: LookupDeps, slug: string, now = Date.now()): CachedLink | null | undefined {
  return ttlEntries<CachedLink>(app.linkCache, true).peek(slug, now);
}

/** `peekLinkBySlug` on a branded domain: that domain's namespace only. */
export function peekLinkOnDomain(app: LookupDeps, domain: ServedDomain, slug: string, now = Date.now()): CachedLink | null | undefined {
  return ttlEntries<CachedLink>(app.linkCache, true).peek(domain.keyPrefix + slug, now);
}

/**
 * The live (not deleted, not archived) link with this slug, through the cache. Null when there is none. Without
 * `domain`, the default redirect domain's namespace; with it, that branded domain's. While the
 * database is away, cached links keep redirecting (invalidations still drop them).
 */
export async function lookupLinkBySlug(app: LookupDeps, slug: string, domain?: ServedDomain): Promise<CachedLink | null> {
  const now = Date.now();
  const domainId = domain ? domain.id : null;
  const key = domain ? domain.keyPrefix + slug : slug;
  return ttlEntries<CachedLink>(app.linkCache, true).read(
    key,
    async () => {
      const [row] = await readLink(app, domainId, slug);
      return row ? { ...row, targeting: row.targeting ?? null, cachedAt: now } : null;
    },
    now,
  );
}

/**
 * The two link reads of the redirect host, built once per database handle: drizzle then only binds
 * the parameters, where building the query anew cost CPU and garbage on every cache miss.
 */
const linkReads = new WeakMap<Db, ReturnType<typeof prepareLinkReads>>();

function prepareLinkReads(db: Db) {
  const columns = {
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
    forwardQuery: links.forwardQuery,
    variants: links.variants,
    updatedAt: links.updatedAt,
  };
  // `domain_id IS NULL` is also what lets the default namespace's partial unique index answer. An
  // archived link keeps its slug but is read as no link: the visit answers as for an unknown slug.
  const bySlug = (inDomain: SQL) =>
    db
      .select(columns)
      .from(links)
      .where(and(eq(links.slug, sql.placeholder("slug")), isNull(links.deletedAt), isNull(links.archivedAt), inDomain))
      .limit(1);
  return {
    onDefault: bySlug(isNull(links.domainId)).prepare("link_on_default_domain"),
    onDomain: bySlug(eq(links.domainId, sql.placeholder("domainId"))).prepare("link_on_branded_domain"),
  };
}

function readLink(app: LookupDeps, domainId: string | null, slug: string) {
  let reads = linkReads.get(app.db);
  if (!reads) linkReads.set(app.db, (reads = prepareLinkReads(app.db)));
  return domainId === null ? reads.onDefault.execute({ slug }) : reads.onDomain.execute({ slug, domainId });
}

/** A verified branded domain as the redirect host serves it; cached per host name. */
export type ServedDomain = {
  id: string;
  name: string;
  notFoundUrl: string | null;
  /** `<id>/`: the prefix of its slugs' link cache keys. */
  keyPrefix: string;
  /** `${CUSTOM_DOMAIN_SCHEME}://<name>`: the base of its short links. */
  base: string;
  cachedAt: number;
};
export type DomainEntry = ServedDomain | CachedMiss;
export type DomainLookupDeps = { db: Db; config: Config; domainCache: LruCache<DomainEntry> };

/**
 * The verified domain of this host name from the cache without touching the database: the domain,
 * null for a known miss (no verified domain has that name), undefined when it must be read.
 * Every domain write clears the cache here and, through NOTIFY, in every other instance.
 */
export function peekDomainByHost(app: DomainLookupDeps, host: string, now = Date.now()): ServedDomain | null | undefined {
  return ttlEntries<ServedDomain>(app.domainCache, false).peek(host, now);
}

/** The verified domain of this host name (lower case, no port), through the cache. Null when there is none. */
export async function lookupDomainByHost(app: DomainLookupDeps, host: string): Promise<ServedDomain | null> {
  const now = Date.now();
  return ttlEntries<ServedDomain>(app.domainCache, false).read(
    host,
    async () => {
      const [row] = await app.db
        .select({ id: domains.id, name: domains.name, notFoundUrl: domains.notFoundUrl })
        .from(domains)
        .where(and(eq(domains.name, host), eq(domains.verified, true)))
        .limit(1);
      return row ? { ...row, keyPrefix: `${row.id}/`, base: `${app.config.customDomainScheme ?? "https"}://${row.name}`, cachedAt: now } : null;
    },
    now,
  );
}
