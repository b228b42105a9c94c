import { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import { AppError } from "../domain/errors";
import type { Actor, ResponseSink } from "../domain/types";
import type { Logger } from "./log";
import type { Metrics } from "./metrics";

/** Every rate limit of the service, in one place. */
export const LIMITS = {
  tokenFree: { points: 100, duration: 3600 },
  tokenPro: { points: 10_000, duration: 3600 },
  /** The same budgets for a signed-in user's writes (see planLimit: a session's reads are not counted). */
  sessionWritesFree: { points: 100, duration: 3600 },
  sessionWritesPro: { points: 10_000, duration: 3600 },
  anonymousCreate: { points: 30, duration: 3600 },
  reportPerAddress: { points: 10, duration: 3600 },
  reportPerSlug: { points: 20, duration: 3600 },
  passwordPerAddress: { points: 10, duration: 900 },
  passwordPerLink: { points: 100, duration: 900 },
  /** Code mails one client address may ask for, to any e-mail addresses. */
  signInPerAddress: { points: 30, duration: 3600 },
  /** Code mails one client address may ask for one e-mail address. */
  signInPerEmailAndAddress: { points: 5, duration: 900 },
  /**
   * Code mails to one e-mail address from every client address together, against mail floods. One
   * client address alone sends at most 20 an hour to an address (the limit above), far from this.
   */
  signInPerEmail: { points: 100, duration: 3600 },
  /** Invitation mails a workspace may send in an hour (each one is a mail to an address the owner typed). */
  invitesPerWorkspace: { points: 50, duration: 3600 },
  /** Invitation mails one account may send in an hour over all its workspaces: more workspaces give no more mail. */
  invitesPerUser: { points: 50, duration: 3600 },
  /** Shared workspaces one account may create in a day. */
  workspacesPerUser: { points: 10, duration: 86400 },
  /** Share-card images a client address may fetch in a minute, and how many of them may need a render. */
  ogImagePerAddress: { points: 300, duration: 60 },
  ogRenderPerAddress: { points: 20, duration: 60 },
  /** Destination checks on request a workspace may ask in a minute (each one is outgoing requests to its links' hosts). */
  healthCheckPerWorkspace: { points: 10, duration: 60 },
} as const;
export type LimitName = keyof typeof LIMITS;

/**
 * Where the limits count now: in Redis (shared by every instance), in this process's memory because
 * no Redis is configured, or in memory because the configured Redis cannot be reached.
 */
export type LimitStore = "redis" | "memory" | "memory fallback";

export type RateLimits = {
  get(name: LimitName): RateLimiterAbstract;
  store(): LimitStore;
  close(): Promise<void>;
};

/** Longest a rate-limit check waits for Redis before it falls back to memory. */
export const REDIS_TIMEOUT_MS = 300;

/**
 * The limits, in Redis when `redisUrl` is set. Losing Redis is said once (a warning line, the
 * `rate_limit_redis_fallback` gauge at 1, the fallbacks counter up by one) and its return once more:
 * until then each instance counts on its own, so a client spread over N instances gets N budgets.
 */
export function createRateLimits(redisUrl?: string, keyPrefix = "rl", report: { log?: Logger; metrics?: Metrics; timeoutMs?: number } = {}): RateLimits {
  const timeoutMs = report.timeoutMs ?? REDIS_TIMEOUT_MS;
  // A Redis that stops answering must not hold requests: commands time out fast and a silent
  // socket is dropped (then reconnected), so callers fall back to the in-memory insurance
  // limiter just as for a closed connection (no offline queue: nothing waits for a reconnect).
  const redis = redisUrl
    ? new Redis(redisUrl, {
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
        lazyConnect: false,
        commandTimeout: timeoutMs,
        socketTimeout: timeoutMs,
        connectTimeout: 1000,
      })
    : undefined;
  let fallback = false;
  let closing = false;
  const lost = (e?: unknown) => {
    if (fallback || closing) return;
    fallback = true;
    report.metrics?.redisFallback.set(1);
    report.metrics?.redisFallbacks.inc();
    const code = (e as { code?: unknown } | undefined)?.code;
    report.log?.warn(
      { redis: "unreachable", ...(typeof code === "string" ? { errorCode: code } : {}) },
      "Redis is unreachable: rate limits count in this process's memory until it is back",
    );
  };
  // Every error and closed connection passes through here; the limiters fall back on their own.
  redis?.on("error", lost).on("close", () => lost());
  redis?.on("ready", () => {
    if (!fallback) return;
    fallback = false;
    report.metrics?.redisFallback.set(0);
    report.log?.info({ redis: "ok" }, "Redis is reachable again: rate limits are shared again");
  });
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
    store: () => (!redis ? "memory" : fallback ? "memory fallback" : "redis"),
    async close() {
      closing = true;
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

/**
 * Whether a code may be mailed to `email` at the request of client address `requester` (sign-in,
 * e-mail change). Past the requester's own limits (in total, and for this e-mail address) it throws
 * 429. Past the e-mail address's cap over every requester it answers false: no mail, and the caller
 * answers as if it had sent one, so the answer says nothing about the address. Counting per requester
 * first means that starts sent by someone else for an address do not stop its owner getting a code.
 */
export async function consumeCodeMail(limits: RateLimits, requester: string, email: string): Promise<boolean> {
  await consume(limits, "signInPerAddress", requester);
  await consume(limits, "signInPerEmailAndAddress", `${requester} ${email}`);
  try {
    await limits.get("signInPerEmail").consume(email, 1);
    return true;
  } catch (e) {
    if (e instanceof RateLimiterRes) return false;
    throw e;
  }
}

/**
 * The plan's limit a request counts against, or null when it is not counted. A token counts every
 * request, per token. A session counts only its writes, per user: a dashboard page reads many things
 * at once (a read budget of 100 an hour would stop an ordinary visit), while writes are what use up
 * shared things such as the generated-slug namespace; so a script cannot get around the limit by
 * using a browser's cookie. Operators' sessions (admins reviewing reports) are not counted.
 */
export function planLimit(actor: Actor, write: boolean): { name: LimitName; key: string } | null {
  if (actor.via === "token") return { name: actor.plan === "pro" ? "tokenPro" : "tokenFree", key: actor.tokenId! };
  if (!write || actor.isAdmin) return null;
  return { name: actor.plan === "pro" ? "sessionWritesPro" : "sessionWritesFree", key: actor.userId };
}

/** Counts the request against the caller's plan (planLimit), with RateLimit-* headers on every counted answer. */
export async function consumePlanRequest(app: { limits: RateLimits; metrics?: Metrics }, sink: ResponseSink, actor: Actor, write: boolean): Promise<void> {
  const limit = planLimit(actor, write);
  if (!limit) return;
  const { name, key } = limit;
  let res: RateLimiterRes;
  let over = false;
  try {
    res = await app.limits.get(name).consume(key, 1);
  } catch (e) {
    if (!(e instanceof RateLimiterRes)) throw e;
    res = e;
    over = true;
  }
  sink.setHeader("RateLimit-Limit", String(LIMITS[name].points));
  sink.setHeader("RateLimit-Remaining", String(Math.max(0, res.remainingPoints)));
  sink.setHeader("RateLimit-Reset", String(retryAfterSeconds(res)));
  if (over) {
    app.metrics?.rateLimited.inc({ limit: name });
    throw rateLimited(res);
  }
}
