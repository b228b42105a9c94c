import { hash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { logSafeError, type Rule } from "../core/clicks";
import type { CachedLink } from "../core/lookup";
import type { AppServices } from "../core/services";
import { utcDay } from "../core/visitor-keys";
import { isDatabaseUnavailable } from "../domain/errors";
import { lookupGeo, type GeoInfo } from "../lib/geo";
import { decide, needsCountry, needsVariantPoint, type Answer, type VisitorFacts } from "./decide";
import { expiredPage, notFoundPage, unavailablePage } from "./html";
import { passwordFormPage } from "./password-form";
import { NOT_FOUND, PASSWORD_FORM_HEADERS, sendError, sendHtml, sendRedirect } from "./respond";
import { shareCardPage } from "./share-card";
import { languagesOf, type RequestVisitor } from "./visitor";

/**
 * A decided answer, with what was worked out for it and is stored with its click: the GeoIP facts,
 * and the visitor's daily key when the link's A/B variants needed it (`at`: the time it is the key of).
 */
export type Decided = { answer: Answer; geo?: GeoInfo; visitor?: { key: string; at: number } };

const DAY_MS = 86_400_000;

export function createVisits(app: AppServices, redirectBase: string): Visits {
  return new Visits(app, redirectBase);
}

/** What every redirect-host route does with a visit: answer it, count it, say why it failed. Built once per app. */
export class Visits {
  /** Pre-bound counter children: no label hashing per request. */
  private readonly outcomes = new Map<string, { inc(): void }>();
  // During a database outage every uncached slug fails alike: one line per 10 s with a count,
  // not one per request (and not the driver's error, which repeats the query).
  private outageLoggedAt = 0;
  private outageUnlogged = 0;

  constructor(
    private readonly app: AppServices,
    private readonly redirectBase: string,
  ) {}

  outcome(name: string): void {
    let c = this.outcomes.get(name);
    if (!c) this.outcomes.set(name, (c = this.app.metrics.redirects.labels(name)));
    c.inc();
  }

  /**
   * Counts a visit unless it is a bot's or a HEAD request; true when counted. `variant`: the A/B
   * variant that chose the destination; `d.visitor`, the daily key the decision worked out, goes to
   * the writer when the click falls on the same day (so the key is not worked out twice).
   */
  count(req: IncomingMessage, link: CachedLink, v: RequestVisitor, rule: Rule, d?: Omit<Decided, "answer">, variant?: number): boolean {
    const { clicks } = this.app;
    if (req.method === "HEAD" || v.agent.isBot || !clicks) return false;
    const timestamp = Date.now();
    // Every visit one shape (absent members undefined, which the spool's JSON leaves out).
    clicks.recordVisit({
      linkId: link.id,
      workspaceId: link.workspaceId,
      timestamp,
      userAgent: v.userAgent,
      ip: v.ip,
      referer: v.referer,
      rule,
      variant,
      trigger: v.trigger === "qr" ? "qr" : undefined,
      edge: v.edge,
      geo: d?.geo,
      visitor: d?.visitor && Math.floor(d.visitor.at / DAY_MS) === Math.floor(timestamp / DAY_MS) ? d.visitor.key : undefined,
    });
    return true;
  }

  /**
   * Sends a counted visit's answer once its click is in the write-ahead spool (a crash then loses
   * no answered click). The spool writes the clicks of one event-loop turn together, at its end.
   */
  afterCount(counted: boolean, send: () => void): void {
    if (counted && this.app.clicks) this.app.clicks.afterSpooled(send);
    else send();
  }

  /** The visitor's location when the answer depends on the country: the edge's, else GeoIP. */
  async visitorGeo(v: RequestVisitor): Promise<{ country: string | null; geo?: GeoInfo }> {
    if (this.app.config.edgeHeaders !== "none") return { country: v.edge?.country ?? null };
    const geo = await lookupGeo(v.ip);
    return { country: geo.country, geo };
  }

  /** Sends the decided answer; counts the visit when it is one. `shortBase`: the origin of the short link (a branded domain's, or REDIRECT_URL). */
  answer(req: IncomingMessage, res: ServerResponse, link: CachedLink, v: RequestVisitor, d: Decided, shortBase = this.redirectBase): void {
    const head = req.method === "HEAD";
    const a = d.answer;
    switch (a.kind) {
      // Counted first: the click is in the spool before the visitor has the answer (a crash loses none).
      case "redirect":
        this.afterCount(this.count(req, link, v, a.rule, d, a.variant), () => sendRedirect(res, a.status, a.location));
        return this.outcome(a.rule);
      case "expired":
        this.afterCount(this.count(req, link, v, a.rule, d), () => sendError(req, res, 404, NOT_FOUND, expiredPage));
        return this.outcome(a.rule);
      case "card":
        sendHtml(res, 200, shareCardPage(link, this.redirectBase, shortBase), head);
        return this.outcome("card");
      case "password_form":
        sendHtml(res, 200, passwordFormPage(link.slug, "ask", undefined, v.query), head, PASSWORD_FORM_HEADERS);
        return this.outcome("password_form");
    }
  }

  notFound(req: IncomingMessage, res: ServerResponse): void {
    sendError(req, res, 404, NOT_FOUND, notFoundPage);
    this.outcome("not_found");
  }

  unavailable(req: IncomingMessage, res: ServerResponse, err: unknown): void {
    if (!isDatabaseUnavailable(err)) this.app.log.error({ err }, "redirect lookup failed");
    else if (Date.now() - this.outageLoggedAt < 10_000) this.outageUnlogged++;
    else {
      this.app.log.error({ ...logSafeError(err), notLogged: this.outageUnlogged }, "redirect lookup failed: database unavailable");
      this.outageLoggedAt = Date.now();
      this.outageUnlogged = 0;
    }
    if (!res.headersSent) sendError(req, res, 503, { error: "SERVICE_UNAVAILABLE" }, unavailablePage, { "Retry-After": "5" });
    this.outcome("unavailable");
  }

  /**
   * The visitor's daily key at `now` without waiting, when the day's salt is at hand (every visit
   * after the day's first): undefined when it must be read first, null without a click recorder.
   */
  private knownKey(v: RequestVisitor, now: number): string | null | undefined {
    const { clicks } = this.app;
    return clicks ? clicks.knownVisitorKey(now, v.ip, v.userAgent) : null;
  }

  /** The visitor's daily key, waiting for the day's salt when it is not at hand yet (null: none). */
  private async keyOf(v: RequestVisitor, now: number): Promise<string | null> {
    const { clicks } = this.app;
    return clicks ? await clicks.visitorKey(now, v.ip, v.userAgent).catch(() => null) : null;
  }

  /**
   * The decision for this visitor: synchronous unless it needs the country (GeoIP), or the variant
   * point before the day's visitor salt is read, which are looked up only for links whose answer can
   * depend on them. The daily key behind the point is worked out even when a targeting rule answers
   * first: the click is stored with it anyway, and it goes along (`Decided.visitor`).
   */
  decideVisit(link: CachedLink, v: RequestVisitor, now: number, opts: { passwordPassed?: boolean } = {}): Decided | Promise<Decided> {
    const facts: VisitorFacts = {
      os: v.os,
      country: null,
      socialCrawler: !opts.passwordPassed && v.agent.isSocialCrawler,
      languages: link.targeting?.languages ? languagesOf(v.acceptLanguage) : undefined,
      query: v.query,
    };
    const geoNeeded = needsCountry(link, now);
    const pointNeeded = needsVariantPoint(link, now);
    const key = pointNeeded ? this.knownKey(v, now) : undefined;
    if (!geoNeeded && (!pointNeeded || key !== undefined)) return this.decided(link, v, facts, now, opts, key);
    return Promise.all([
      geoNeeded ? this.visitorGeo(v) : { country: null, geo: undefined },
      pointNeeded ? (key !== undefined ? key : this.keyOf(v, now)) : undefined,
    ]).then(([g, k]) => {
      facts.country = g.country;
      return { ...this.decided(link, v, facts, now, opts, k), geo: g.geo };
    });
  }

  /** The decision, with the variant point from the visitor's daily key when there is one (null: no key to be had). */
  private decided(
    link: CachedLink,
    v: RequestVisitor,
    facts: VisitorFacts,
    now: number,
    opts: { passwordPassed?: boolean },
    key: string | null | undefined,
  ): Decided {
    if (key === undefined) return { answer: decide(link, facts, now, opts) };
    facts.variantPoint = pointOf(key, link, v, now);
    const answer = decide(link, facts, now, opts);
    return key === null ? { answer } : { answer, visitor: { key, at: now } };
  }
}

/**
 * The visitor's point on the 0–100 line of a link's variant weights: from the daily visitor key
 * (the one its clicks are stored with) and the link id, so a visitor keeps one variant all day and
 * each link splits its visitors independently. The key is already a secret-salted SHA-256, so mixing
 * the link id into it needs no second SHA-256: a 32-bit FNV-1a with murmur's finaliser spreads it
 * evenly, at a fraction of the cost, on the path of every visit to a link with variants. Without the
 * day's key (no click recorder), a SHA-256 of the day, address and User-Agent stands in for it.
 */
function pointOf(key: string | null, link: CachedLink, v: RequestVisitor, now: number): number {
  if (key === null) return (hash("sha256", `${utcDay(now)}\n${v.ip}\n${v.userAgent}\n${link.id}`, "buffer").readUInt32BE(0) / 2 ** 32) * 100;
  return ((mix32(mix32(0x811c9dc5, key), link.id) >>> 0) / 2 ** 32) * 100;
}

/** FNV-1a over a string's UTF-16 units, then murmur3's 32-bit finaliser. */
function mix32(seed: number, s: string): number {
  let h = seed;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}
