import { sql } from "drizzle-orm";
import { bigint, boolean, check, index, integer, jsonb, pgTable, primaryKey, real, smallint, text, uniqueIndex } from "drizzle-orm/pg-core";
import { workspaces } from "./accounts";

const ms = (name: string) => bigint(name, { mode: "number" });

export type Targeting = { geo?: Record<string, string>; ios?: string; android?: string; languages?: Record<string, string> };

/** A/B variant of a link's destination: `weight` in percent, the weights of a link summing to 100. */
export type Variant = { url: string; weight: number };

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
    /** The visitor's query string is added to the chosen destination. */
    forwardQuery: boolean("forward_query").notNull().default(false),
    /** 2–5 weighted destinations for visits no targeting rule catches; null: `url` alone. */
    variants: jsonb("variants").$type<Variant[]>(),
    /** Out of service without being deleted: the slug stays taken, the redirect answers as for an unknown slug. */
    archivedAt: ms("archived_at"),
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
    /** Index (from 0) of the A/B variant the visit went to; null when no variant chose the destination. */
    variant: smallint("variant"),
    /** `qr` for a visit through the link's QR code (`?qr=1`), else `link`. */
    trigger: text("trigger", { enum: ["link", "qr"] })
      .notNull()
      .default("link"),
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

export type LinktreeColors = { background?: string; text?: string; button?: string; button_text?: string };
export type LinktreeSocial = { platform: string; url: string };

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
    /** Page look: null is the `light` theme, rounded buttons, the theme's own colours, no socials. */
    theme: text("theme", { enum: ["light", "dark", "bold", "soft", "minimal"] }),
    colors: jsonb("colors").$type<LinktreeColors>(),
    buttonStyle: text("button_style", { enum: ["rounded", "square", "pill", "outline"] }),
    socials: jsonb("socials").$type<LinktreeSocial[]>(),
    /** A verified branded domain the page is served on (its slug then lives in that domain's namespace); null: the default domain. */
    domainId: text("domain_id"),
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
    /** `link` (a short link), `heading` (a section title) or `text` (plain text); only `link` has a url and clicks. */
    kind: text("kind", { enum: ["link", "heading", "text"] })
      .notNull()
      .default("link"),
    position: integer("position").notNull(),
    active: boolean("active").notNull().default(true),
    /** Shown only from / until these instants (ms); null: no bound. */
    startsAt: ms("starts_at"),
    endsAt: ms("ends_at"),
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

/**
 * Destination health of a live link, one row per checked link. Written only by the health checker;
 * `next_check_at` orders the scheduled checks and `lease_until` keeps a check on one instance.
 */
export const linkHealth = pgTable(
  "link_health",
  {
    linkId: text("link_id").primaryKey(),
    workspaceId: text("workspace_id").notNull(),
    status: text("status", { enum: ["ok", "broken", "unknown"] })
      .notNull()
      .default("unknown"),
    checkedAt: ms("checked_at"),
    httpStatus: integer("http_status"),
    error: text("error"),
    destinations: jsonb("destinations").$type<{ url: string; status: "ok" | "failed"; http_status: number | null; error?: string | null }[]>(),
    /** Failed checks in a row (two make the link broken). */
    failures: integer("failures").notNull().default(0),
    nextCheckAt: ms("next_check_at").notNull(),
    leaseUntil: ms("lease_until"),
    /** When the link last turned broken (null while it is not broken): what the daily digest reports. */
    brokenAt: ms("broken_at"),
  },
  (t) => [index("link_health_due_idx").on(t.nextCheckAt), index("link_health_workspace_status_idx").on(t.workspaceId, t.status)],
);

/**
 * The broken-links digest of each workspace that got one: the UTC day of the last mail (at most one
 * a day) and the time up to which links that turned broken have been reported.
 */
export const healthDigests = pgTable("health_digests", {
  workspaceId: text("workspace_id")
    .primaryKey()
    .references(() => workspaces.id, { onDelete: "cascade" }),
  sentDay: text("sent_day").notNull(),
  reportedUntil: ms("reported_until").notNull(),
});
