import { sql } from "drizzle-orm";
import { bigint, boolean, check, index, integer, jsonb, pgTable, primaryKey, real, text, uniqueIndex } from "drizzle-orm/pg-core";
import { workspaces } from "./accounts";

const ms = (name: string) => bigint(name, { mode: "number" });

export type Targeting = { geo?: Record<string, string>; ios?: string; android?: string };

/**
 * Every short link, including the link records owned by linktrees (the page itself and each item).
 * The partial unique index on `slug` is the one shared slug namespace of the redirect domain:
 * links and linktrees cannot race each other into the same slug.
 */
export const links = pgTable(
  "links",
  {
    id: text("id").primaryKey(),
    // No cascade: deleting a workspace deletes its links itself, to free their slugs in caches too.
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id),
    /** Branded domain; null is the default redirect domain and its shared namespace. */
    domainId: text("domain_id"),
    slug: text("slug").notNull(),
    url: text("url").notNull(),
    /** A label for people (dashboard list, search, exports); never a share card, which is `og_title`'s. */
    title: text("title"),
    kind: text("kind", { enum: ["link", "linktree", "linktree_item"] })
      .notNull()
      .default("link"),
    tags: text("tags")
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
    expiresAt: ms("expires_at"),
    expirationUrl: text("expiration_url"),
    targeting: jsonb("targeting").$type<Targeting>(),
    passwordHash: text("password_hash"),
    ogTitle: text("og_title"),
    ogDescription: text("og_description"),
    ogImage: text("og_image"),
    createdAt: ms("created_at").notNull(),
    updatedAt: ms("updated_at").notNull(),
    deletedAt: ms("deleted_at"),
  },
  (t) => [
    uniqueIndex("links_live_slug_idx")
      .on(t.slug)
      .where(sql`${t.deletedAt} IS NULL AND ${t.domainId} IS NULL`),
    uniqueIndex("links_domain_slug_idx")
      .on(t.domainId, t.slug)
      .where(sql`${t.deletedAt} IS NULL AND ${t.domainId} IS NOT NULL`),
    index("links_workspace_created_idx").on(t.workspaceId, t.createdAt.desc()),
    // The REST list's keyset pages: (created_at, id) after a cursor, live links only. NULLS FIRST is
    // what ORDER BY … DESC means; with NULLS LAST the planner would not use it for that order.
    index("links_workspace_keyset_idx")
      .on(t.workspaceId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.deletedAt} IS NULL`),
    // A CSV import skips a row without slug whose URL the workspace already links to (a second run
    // creates nothing): equality on URLs of up to 4096 characters, which a btree cannot hold.
    index("links_url_hash_idx").using("hash", t.url),
  ],
);

/**
 * Free-slot counts of the generated 4-character namespace, one row per 3-character prefix
 * (36 slugs each). Kept exact by a trigger on `links`, so the allocator finds a block with room
 * through an index instead of guessing.
 */
export const slugBlocks = pgTable(
  "slug_blocks",
  {
    prefix: text("prefix").primaryKey(),
    free: integer("free").notNull(),
  },
  (t) => [
    index("slug_blocks_free_idx")
      .on(t.prefix)
      .where(sql`${t.free} > 0`),
  ],
);

/**
 * Click events. No foreign key: clicks outlive deleted links and linktrees. Partitioned by month
 * on `ts` (migration 0005, by hand: drizzle cannot say it): `clicks_YYYY_MM` and `clicks_default`.
 */
export const clicks = pgTable(
  "clicks",
  {
    linkId: text("link_id").notNull(),
    ts: text("ts").notNull(),
    workspaceId: text("workspace_id").notNull(),
    timestamp: ms("timestamp").notNull(),
    country: text("country"),
    region: text("region"),
    regionName: text("region_name"),
    city: text("city"),
    timezone: text("timezone"),
    lat: real("lat"),
    lng: real("lng"),
    device: text("device").notNull(),
    platform: text("platform"),
    browser: text("browser"),
    referer: text("referer"),
    rule: text("rule").notNull(),
    /** Keyed hash of (address, User-Agent) with a salt of the day that is deleted when the day ends: unique visitors, no address stored. */
    visitor: text("visitor"),
  },
  // `ts` starts with the 13-digit ms timestamp, so (link_id, ts) orders clicks by time per link.
  (t) => [primaryKey({ columns: [t.linkId, t.ts] })],
);

/** Per-link, per-hour click counts, so `count` over millions of clicks stays cheap. */
export const clickRollups = pgTable(
  "click_rollups",
  {
    linkId: text("link_id").notNull(),
    hour: ms("hour").notNull(),
    count: integer("count").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.linkId, t.hour] }),
    // A link's all-time count (the links list's "most clicks") read from the index alone, no heap fetches.
    index("click_rollups_link_count_idx").on(t.linkId, t.count),
  ],
);

/** Retention's horizon (one row, once a month was dropped): clicks before it are counted from `click_rollups` only. */
export const clickRetention = pgTable(
  "click_retention",
  {
    id: boolean("id").primaryKey().default(true),
    droppedBefore: ms("dropped_before").notNull(),
  },
  (t) => [check("click_retention_one_row", sql`${t.id}`)],
);

export const linktrees = pgTable(
  "linktrees",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id),
    /** The page's own link record; its slug is the linktree's slug. */
    linkId: text("link_id")
      .notNull()
      .references(() => links.id),
    title: text("title").notNull(),
    bio: text("bio"),
    avatarUrl: text("avatar_url"),
    published: boolean("published").notNull().default(false),
    createdAt: ms("created_at").notNull(),
    updatedAt: ms("updated_at").notNull(),
  },
  (t) => [index("linktrees_workspace_idx").on(t.workspaceId, t.createdAt.desc()), uniqueIndex("linktrees_link_idx").on(t.linkId)],
);

export const linktreeItems = pgTable(
  "linktree_items",
  {
    id: text("id").primaryKey(),
    linktreeId: text("linktree_id")
      .notNull()
      .references(() => linktrees.id, { onDelete: "cascade" }),
    /** The item's short link; its url is the item's destination. */
    linkId: text("link_id")
      .notNull()
      .references(() => links.id),
    title: text("title").notNull(),
    position: integer("position").notNull(),
    active: boolean("active").notNull().default(true),
    createdAt: ms("created_at").notNull(),
    updatedAt: ms("updated_at").notNull(),
  },
  (t) => [index("linktree_items_tree_idx").on(t.linktreeId, t.position)],
);

export const abuseReports = pgTable(
  "abuse_reports",
  {
    id: text("id").primaryKey(),
    linkId: text("link_id").notNull(),
    slug: text("slug").notNull(),
    url: text("url").notNull(),
    reason: text("reason", { enum: ["phishing", "malware", "spam", "fraude", "outro"] }).notNull(),
    detail: text("detail"),
    email: text("email"),
    ip: text("ip"),
    userAgent: text("user_agent"),
    status: text("status", { enum: ["open", "dismissed", "link_deleted"] })
      .notNull()
      .default("open"),
    createdAt: ms("created_at").notNull(),
    reviewedAt: ms("reviewed_at"),
    reviewedBy: text("reviewed_by"),
  },
  (t) => [index("abuse_reports_status_idx").on(t.status, t.createdAt.desc())],
);

/** Today's (and at most yesterday's) visitor-key salts; older ones are deleted so keys cannot be linked across days. */
export const visitorSalts = pgTable("visitor_salts", {
  day: text("day").primaryKey(),
  salt: text("salt").notNull(),
});
