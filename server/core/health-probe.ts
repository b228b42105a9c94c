import http from "node:http";
import https from "node:https";
import { BlockedAddressError, guardedLookup, hostOf, isBlockedLiteral } from "./outgoing-address-guard";

/**
 * One destination's health: `ok`, `failed` (network error, timeout, more than 5 redirects, 404, 410
 * or 5xx), or `unknown` when it was not checked because it is on an address the service may not reach.
 */
export type ProbeResult = { url: string; status: "ok" | "failed" | "unknown"; http_status: number | null; error: string | null };

export type ProbeOptions = {
  /** Requests in flight at the same time from this process. */
  concurrency?: number;
  /** Least time between a host's answer and the next request to it. */
  hostIntervalMs?: number;
  /** Longest wait for an answer's status line, per request. */
  timeoutMs?: number;
  /** Redirects followed; one more is a failure. */
  maxRedirects?: number;
};

export type Prober = {
  /**
   * Checks one destination. `allowPrivate`: WEBHOOK_ALLOW_PRIVATE. `urgent` (a person waiting for the
   * answer) goes ahead of the scheduled checks waiting for a slot. Never throws.
   */
  probe(url: string, allowPrivate: boolean, urgent?: boolean): Promise<ProbeResult>;
};

const USER_AGENT = "Mozilla/5.0 (compatible; LinksHealthCheck/1.0; destination check)";
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Statuses answering HEAD after which GET is asked: servers that refuse HEAD, or route only GET (a 404 or 5xx for HEAD alone). */
const RETRY_WITH_GET = (status: number) => status === 400 || status === 404 || status === 405 || status === 406 || status === 410 || status >= 500;
/** 401, 403 and 429 mean the destination exists and only refuses us: not failures. */
export const isFailureStatus = (status: number) => status === 404 || status === 410 || status >= 500;

type Answer = { status: number; location: string | null };

class ProbeError extends Error {
  constructor(
    message: string,
    readonly blocked = false,
  ) {
    super(message);
  }
}

/** A short, stable description of a network failure (no stack, no internal addresses). */
function describeNetworkError(e: NodeJS.ErrnoException): ProbeError {
  if (e instanceof BlockedAddressError) return new ProbeError("not checked: the destination is on a private or local address", true);
  switch (e.code) {
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return new ProbeError("host not found");
    case "ECONNREFUSED":
      return new ProbeError("connection refused");
    case "ECONNRESET":
    case "EPIPE":
      return new ProbeError("connection reset");
    case "ETIMEDOUT":
      return new ProbeError("timeout");
    default:
      if (typeof e.code === "string" && /CERT|SSL|TLS/.test(e.code)) return new ProbeError(`TLS error (${e.code})`);
      return new ProbeError(e.code ? `network error (${e.code})` : "network error");
  }
}

/** Refuses a blocked literal host before anything is sent; names are checked on connect by `guardedLookup`. */
function assertPublicHost(url: URL, allowPrivate: boolean): void {
  if (allowPrivate) return;
  const host = hostOf(url);
  if (isBlockedLiteral(host)) throw describeNetworkError(new BlockedAddressError(host));
}

/** One request: the status and Location, without reading the body. */
function request(url: URL, method: "HEAD" | "GET", allowPrivate: boolean, timeoutMs: number): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const hostname = hostOf(url);
    try {
      assertPublicHost(url, allowPrivate);
    } catch (e) {
      return reject(e as Error);
    }
    const mod = url.protocol === "https:" ? https : http;
    let settled = false;
    const req = mod.request(
      {
        method,
        hostname,
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        headers: { "user-agent": USER_AGENT, accept: "*/*" },
        agent: false,
        // Checked on the very addresses the socket connects to (DNS rebinding cannot slip past).
        lookup: allowPrivate ? undefined : (guardedLookup as never),
      },
      (res) => {
        settled = true;
        clearTimeout(timer);
        const location = typeof res.headers.location === "string" ? res.headers.location : null;
        resolve({ status: res.statusCode ?? 0, location });
        // The body is not needed: close instead of downloading it.
        res.destroy();
        req.destroy();
      },
    );
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      req.destroy();
      reject(new ProbeError("timeout"));
    }, timeoutMs);
    req.on("error", (e: NodeJS.ErrnoException) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(e instanceof ProbeError ? e : describeNetworkError(e));
    });
    req.end();
  });
}

/** Counting semaphore: at most `n` holders at once, served in arrival order, urgent ones first. */
function semaphore(n: number) {
  let free = n;
  const waiting: (() => void)[] = [];
  let urgentWaiting = 0;
  return async <T>(fn: () => Promise<T>, urgent = false): Promise<T> => {
    if (free > 0) free--;
    else if (urgent)
      await new Promise<void>((r) =>
        waiting.splice(urgentWaiting++, 0, () => {
          urgentWaiting--;
          r();
        }),
      );
    else await new Promise<void>((r) => waiting.push(r));
    try {
      return await fn();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else free++;
    }
  };
}

export function createProber(opts: ProbeOptions = {}): Prober {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const hostIntervalMs = opts.hostIntervalMs ?? 1000;
  const maxRedirects = opts.maxRedirects ?? 5;
  const limit = semaphore(opts.concurrency ?? 4);
  /** Per host: a request in flight, when the last one had its answer, and the requests waiting, urgent ones apart. */
  type HostQueue = { running: boolean; at: number; timer: NodeJS.Timeout | null; urgent: (() => void)[]; scheduled: (() => void)[] };
  const hosts = new Map<string, HostQueue>();

  /** Lets the host's next request go once the one in flight has its answer and the interval has passed: an urgent one first. */
  function pump(q: HostQueue) {
    if (q.running || q.timer) return;
    const line = q.urgent.length ? q.urgent : q.scheduled;
    if (!line.length) return;
    const wait = q.at + hostIntervalMs - Date.now();
    if (wait > 0) {
      q.timer = setTimeout(() => {
        q.timer = null;
        pump(q);
      }, wait);
      return;
    }
    q.running = true;
    line.shift()!();
  }

  /**
   * Runs `fn` (one request to `host`) in the host's turn: after the host's previous request has its
   * answer and the interval has passed since. Spacing from the answer, not from the start, keeps
   * the requests as far apart at the destination as here, whatever each one's connection took. A
   * check someone waits for (`urgent`) takes the next turn, ahead of the scheduled ones waiting.
   */
  async function hostTurn<T>(host: string, fn: () => Promise<T>, urgent: boolean): Promise<T> {
    if (hostIntervalMs <= 0) return fn();
    let q = hosts.get(host);
    if (!q) {
      // Forget hosts idle for longer than the interval, so the map stays small.
      if (hosts.size > 10_000)
        for (const [h, o] of hosts)
          if (!o.running && !o.timer && !o.urgent.length && !o.scheduled.length && o.at + hostIntervalMs < Date.now()) hosts.delete(h);
      hosts.set(host, (q = { running: false, at: -Infinity, timer: null, urgent: [], scheduled: [] }));
    }
    const queue = q;
    await new Promise<void>((r) => {
      (urgent ? queue.urgent : queue.scheduled).push(r);
      pump(queue);
    });
    try {
      return await fn();
    } finally {
      queue.running = false;
      queue.at = Date.now();
      pump(queue);
    }
  }

  /**
   * One request: its host's turn first, then one of the slots. Waiting for a host holds no slot, so
   * the slots serve other hosts meanwhile.
   */
  async function ask(url: URL, method: "HEAD" | "GET", allowPrivate: boolean, urgent: boolean): Promise<Answer> {
    // An address refused outright sends nothing, so it takes no turn of its host.
    assertPublicHost(url, allowPrivate);
    return hostTurn(url.hostname.toLowerCase(), () => limit(() => request(url, method, allowPrivate, timeoutMs), urgent), urgent);
  }

  async function follow(start: string, allowPrivate: boolean, urgent: boolean): Promise<ProbeResult> {
    let url = new URL(start);
    for (let redirects = 0; ; redirects++) {
      let answer = await ask(url, "HEAD", allowPrivate, urgent);
      if (RETRY_WITH_GET(answer.status)) answer = await ask(url, "GET", allowPrivate, urgent);
      const { status, location } = answer;
      if (REDIRECTS.has(status) && location) {
        if (redirects >= maxRedirects) return { url: start, status: "failed", http_status: status, error: `more than ${maxRedirects} redirects` };
        let next: URL;
        try {
          next = new URL(location, url);
        } catch {
          return { url: start, status: "failed", http_status: status, error: "redirect to an invalid URL" };
        }
        // An app's own scheme (store links and the like) is where the visitor ends up: reached.
        if (next.protocol !== "http:" && next.protocol !== "https:") return { url: start, status: "ok", http_status: status, error: null };
        url = next;
        continue;
      }
      if (isFailureStatus(status)) return { url: start, status: "failed", http_status: status, error: `HTTP ${status}` };
      return { url: start, status: "ok", http_status: status, error: null };
    }
  }

  return {
    async probe(url, allowPrivate, urgent = false) {
      try {
        return await follow(url, allowPrivate, urgent);
      } catch (e) {
        const err = e instanceof ProbeError ? e : new ProbeError("network error");
        return { url, status: err.blocked ? "unknown" : "failed", http_status: null, error: err.message };
      }
    },
  };
}

/** The process's prober: scheduled checks and checks on request share its limits. */
export const prober: Prober = createProber();
