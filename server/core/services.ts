import type { Role } from "../domain/types";
import type { Config } from "../config";
import type { Database, Db } from "../../db/client";
import { createLucia, type AppLucia } from "../lib/lucia";
import { createRateLimits, type RateLimits } from "../lib/rate-limit";
import { createMailer, type Mailer } from "../lib/mail";
import { createLogger, type Logger } from "../lib/log";
import { createMetrics, type Metrics } from "../lib/metrics";
import { LruCache } from "../lib/lru";
import type { CacheEntry, DomainEntry } from "./lookup";
import { startClickRecorder, type ClickRecorder } from "./clicks";
import { startClickMaintenance } from "./click-pipeline/partitions";
import { startAuditRetention } from "./audit-retention";
import { createReadRouting, type ReadRouting } from "./read-routing";
import { createInvalidation, type Announcement } from "./invalidation";
import { AnswerCache } from "./answer-cache";

export const LINK_CHANNEL = "link_changed";
/** Payload on LINK_CHANNEL meaning "branded domains changed" (no slug or cache key has a `!`). */
export const DOMAINS_CHANGED = "!domains";
/** Payload on LINK_CHANNEL meaning "a token, user or membership changed" (auth.ts token cache; migration 0007 sends it too). */
export const CREDENTIALS_CHANGED = "!credentials";

/** What a token's look-up found (auth.ts): the token, its user and the user's membership of the token's workspace. */
export type TokenEntry = {
  id: string;
  revokedAt: number | null;
  lastUsedAt: number | null;
  workspaceId: string;
  userId: string;
  plan: "free" | "pro";
  isAdmin: boolean;
  role: Role;
  /** When this copy stops being trusted without asking the database again. */
  until: number;
};

/** Everything a procedure may use, built once at start (or per test file). */
export type AppServices = {
  config: Config;
  database: Database;
  db: Db;
  /** Analytics and listing reads: the replica of DATABASE_READ_URL, or the primary (read-routing.ts). */
  reads: ReadRouting;
  /** Set on SIGTERM: `/_/health` answers 503 so a load balancer stops sending requests here. */
  draining?: boolean;
  lucia: AppLucia;
  limits: RateLimits;
  mail: Mailer;
  log: Logger;
  metrics: Metrics;
  /** slug → link snapshot or known miss, for the redirect host. */
  linkCache: LruCache<CacheEntry>;
  /**
   * Drop cached slugs here and in every other instance. Call after every committed link write.
   * A branded domain's link is keyed `<domainId>/<slug>` (lookup.ts `linkCacheKey`).
   */
  invalidateSlugs(slugs: string[]): Promise<void>;
  /** `invalidateSlugs` for a write that sends the NOTIFY inside its own statement (invalidation.ts `announce`). */
  announceSlugs(): Announcement;
  /** host name → verified branded domain or known miss, for the redirect host. */
  domainCache: LruCache<DomainEntry>;
  /** Drop every cached domain here and in every other instance. Call after every committed domain write. */
  invalidateDomains(): Promise<void>;
  /** token hash → what its look-up found (auth.ts), dropped on every credential change. */
  tokenCache: LruCache<TokenEntry>;
  /**
   * Drop every cached token look-up here and in every other instance. Call after every committed
   * change that can end a token's access (revoke, membership role or removal, account or workspace
   * deleted); migration 0007's triggers send the same, unconfirmed, for changes made elsewhere.
   */
  invalidateCredentials(): Promise<void>;
  /** Whole listing answers, cleared by every link or domain invalidation (answer-cache.ts). */
  answers: AnswerCache<unknown>;
  /** Set by the redirect host at start: where counted visits go. */
  clicks?: ClickRecorder;
  /**
   * Stops everything started here, in order: click upkeep and invalidation, then the buffered
   * clicks (flushed, or spilled to disk), rate limits, mail and the read routing. The database
   * itself is its owner's to close. Safe to call twice.
   */
  close(): Promise<void>;
};

export async function createServices(
  config: Config,
  database: Database,
  opts: { logger?: Logger; cacheSize?: number; rateLimitPrefix?: string; rateLimitTimeoutMs?: number } = {},
): Promise<AppServices> {
  const log = opts.logger ?? createLogger(config.logLevel);
  // 20,000 links (about 1.3 KB of heap each, with V8's headroom): a miss costs one prepared query,
  // and at 50,000 a miss-heavy load kept the process above 200 MB (docs/performance.md).
  const linkCache = new LruCache<CacheEntry>(opts.cacheSize ?? 20_000);
  const domainCache = new LruCache<DomainEntry>(10_000);
  const tokenCache = new LruCache<TokenEntry>(10_000);
  // Counted in links: 10,000 listed links are a few MB of heap.
  const answers = new AnswerCache<unknown>(10_000);
  const metrics = createMetrics();
  const reads = await createReadRouting({ primary: database, replicaUrl: config.databaseReadUrl, redisUrl: config.redisUrl, log, metrics });
  const services: AppServices = {
    config,
    database,
    db: database.db,
    reads,
    lucia: createLucia(database.db, config),
    limits: createRateLimits(config.redisUrl, opts.rateLimitPrefix, { log, metrics, timeoutMs: opts.rateLimitTimeoutMs }),
    mail: createMailer({ smtpUrl: config.smtpUrl, dataDir: config.dataDir, from: config.mailFrom, log }),
    log,
    metrics,
    linkCache,
    invalidateSlugs: (slugs) => invalidation.invalidate(slugs),
    announceSlugs: () => invalidation.announce(),
    domainCache,
    invalidateDomains: () => invalidation.invalidate([DOMAINS_CHANGED]),
    tokenCache,
    invalidateCredentials: () => invalidation.invalidate([CREDENTIALS_CHANGED]),
    answers,
    close: () => (closing ??= closeAll()),
  };
  let closing: Promise<void> | undefined;
  const closeAll = async () => {
    await services.clicks?.close();
    await services.limits.close();
    services.mail.close();
    await services.reads.close();
  };
  // Confirmed by every other instance before a write answers (invalidation.ts).
  const invalidation = await createInvalidation({
    database,
    channel: LINK_CHANNEL,
    log,
    drop: (key) => {
      if (key !== CREDENTIALS_CHANGED) answers.clear();
      return key === DOMAINS_CHANGED ? domainCache.clear() : key === CREDENTIALS_CHANGED ? tokenCache.clear() : linkCache.delete(key);
    },
    reset: () => (linkCache.clear(), domainCache.clear(), tokenCache.clear(), answers.clear()),
  });
  // Click partitions for this month and the next ones (and retention), before the first click.
  const upkeep = await startClickMaintenance(services);
  const auditUpkeep = startAuditRetention(services);
  const clicks = startClickRecorder(services);
  // Closing the recorder also stops what feeds the redirect host (callers may close only that).
  const closeClicks = clicks.close.bind(clicks);
  clicks.close = () => (upkeep.stop(), auditUpkeep.stop(), invalidation.close(), closeClicks());
  services.clicks = clicks;
  return services;
}
