import { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import { AppError } from "../domain/errors";
import type { Actor, ResponseSink } from "../domain/types";
import type { Metrics } from "./metrics";

/** Every limit of service.md and decisions, in one place. */
export const LIMITS = {
  tokenFree: { points: 100, duration: 3600 },
  tokenPro: { points: 10_000, duration: 3600 },
  anonymousCreate: { points: 30, duration: 3600 },
  reportPerAddress: { points: 10, duration: 3600 },
  reportPerSlug: { points: 20, duration: 3600 },
  passwordPerAddress: { points: 10, duration: 900 },
  passwordPerLink: { points: 100, duration: 900 },
  signInPerEmail: { points: 5, duration: 900 },
  signInPerAddress: { points: 30, duration: 3600 },
  /** Invitation mails a workspace may send in an hour (each one is a mail to an address the owner typed). */
  invitesPerWorkspace: { points: 50, duration: 3600 },
  /** Share-card images a client address may fetch in a minute, and how many of them may need a render. */
  ogImagePerAddress: { points: 300, duration: 60 },
  ogRenderPerAddress: { points: 20, duration: 60 },
} as const;
export type LimitName = keyof typeof LIMITS;

export type RateLimits = {
  get(name: LimitName): RateLimiterAbstract;
  close(): Promise<void>;
};

/** Longest a rate-limit check waits for Redis before it falls back to memory. */
export const REDIS_TIMEOUT_MS = 300;

export function createRateLimits(redisUrl?: string, keyPrefix = "rl"): RateLimits {
  // A Redis that stops answering must not hold requests: commands time out fast and a silent
  // socket is dropped (then reconnected), so callers fall back to the in-memory insurance
  // limiter just as for a closed connection (no offline queue: nothing waits for a reconnect).
  const redis = redisUrl
    ? new Redis(redisUrl, {
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
        lazyConnect: false,
        commandTimeout: REDIS_TIMEOUT_MS,
        socketTimeout: REDIS_TIMEOUT_MS,
        connectTimeout: 1000,
      })
    : undefined;
  redis?.on("error", () => {}); // reported through insuranceLimiter fallbacks, not crashes
  const limiters = new Map<LimitName, RateLimiterAbstract>();
  return {
    get(name) {
      let l = limiters.get(name);
      if (!l) {
        const opts = { ...LIMITS[name], keyPrefix: `${keyPrefix}:${name}` };
        l = redis ? new RateLimiterRedis({ ...opts, storeClient: redis, insuranceLimiter: new RateLimiterMemory(opts) }) : new RateLimiterMemory(opts);
        limiters.set(name, l);
      }
      return l;
    },
    async close() {
      redis?.disconnect();
    },
  };
}

export const retryAfterSeconds = (res: RateLimiterRes) => Math.max(1, Math.ceil(res.msBeforeNext / 1000));

export function rateLimited(res: RateLimiterRes): AppError {
  return new AppError("RATE_LIMITED", { headers: { "Retry-After": String(retryAfterSeconds(res)) } });
}

/** Consumes one point; throws 429 RATE_LIMITED with Retry-After when over the limit. */
export async function consume(limits: RateLimits, name: LimitName, key: string, points = 1): Promise<RateLimiterRes> {
  try {
    return await limits.get(name).consume(key, points);
  } catch (e) {
    if (e instanceof RateLimiterRes) throw rateLimited(e);
    throw e;
  }
}

/** Remaining points without consuming (for checks that only count failures). */
export async function check(limits: RateLimits, name: LimitName, key: string): Promise<void> {
  const res = await limits.get(name).get(key);
  if (res && res.remainingPoints <= 0) throw rateLimited(res);
}

/** Token requests per hour by plan, with RateLimit-* headers on every token answer. */
export async function consumeTokenRequest(app: { limits: RateLimits; metrics?: Metrics }, sink: ResponseSink, actor: Actor): Promise<void> {
  const name: LimitName = actor.plan === "pro" ? "tokenPro" : "tokenFree";
  const limit = LIMITS[name].points;
  let res: RateLimiterRes;
  let over = false;
  try {
    res = await app.limits.get(name).consume(actor.tokenId!, 1);
  } catch (e) {
    if (!(e instanceof RateLimiterRes)) throw e;
    res = e;
    over = true;
  }
  sink.setHeader("RateLimit-Limit", String(limit));
  sink.setHeader("RateLimit-Remaining", String(Math.max(0, res.remainingPoints)));
  sink.setHeader("RateLimit-Reset", String(retryAfterSeconds(res)));
  if (over) {
    app.metrics?.rateLimited.inc({ limit: name });
    throw rateLimited(res);
  }
}
