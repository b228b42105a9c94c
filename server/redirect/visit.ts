import type { IncomingMessage, ServerResponse } from "node:http";
import { logSafeError, type Rule } from "../core/clicks";
import type { CachedLink } from "../core/lookup";
import type { AppServices } from "../core/services";
import { isDatabaseUnavailable } from "../domain/errors";
import { lookupGeo, type GeoInfo } from "../lib/geo";
import type { Answer } from "./decide";
import { expiredPage, notFoundPage, page } from "./html";
import { passwordFormPage } from "./password-form";
import { PASSWORD_FORM_HEADERS, sendHtml, sendRedirect } from "./respond";
import { shareCardPage } from "./share-card";
import type { RequestVisitor } from "./visitor";

/** What every redirect-host route does with a visit: answer it, count it, say why it failed. Built once per app. */
export type Visits = ReturnType<typeof createVisits>;

export function createVisits(app: AppServices, redirectBase: string) {
  const { config } = app;

  // Pre-bound counter children: no label hashing per request.
  const outcomes = new Map<string, { inc(): void }>();
  const outcome = (name: string) => {
    let c = outcomes.get(name);
    if (!c) outcomes.set(name, (c = app.metrics.redirects.labels(name)));
    c.inc();
  };

  /** Counts a visit unless it is a bot's or a HEAD request; true when counted. */
  const count = (req: IncomingMessage, link: CachedLink, v: RequestVisitor, rule: Rule, geo?: GeoInfo) => {
    if (req.method === "HEAD" || v.agent.isBot || !app.clicks) return false;
    app.clicks.recordVisit({
      linkId: link.id,
      workspaceId: link.workspaceId,
      timestamp: Date.now(),
      userAgent: v.userAgent,
      ip: v.ip,
      referer: v.referer,
      rule,
      edge: v.edge,
      geo,
    });
    return true;
  };

  /**
   * Sends a counted visit's answer once its click is in the write-ahead spool (a crash then loses
   * no answered click). The spool writes the clicks of one event-loop turn together, at its end.
   */
  const afterCount = (counted: boolean, send: () => void) => (counted && app.clicks ? app.clicks.afterSpooled(send) : send());

  /** The visitor's location when the answer depends on the country: the edge's, else GeoIP. */
  const visitorGeo = async (v: RequestVisitor): Promise<{ country: string | null; geo?: GeoInfo }> => {
    if (config.edgeHeaders !== "none") return { country: v.edge?.country ?? null };
    const geo = await lookupGeo(v.ip);
    return { country: geo.country, geo };
  };

  /** Sends the decided answer; counts the visit when it is one. `shortBase`: the origin of the short link (a branded domain's, or REDIRECT_URL). */
  function answer(req: IncomingMessage, res: ServerResponse, link: CachedLink, v: RequestVisitor, a: Answer, geo?: GeoInfo, shortBase = redirectBase) {
    const head = req.method === "HEAD";
    switch (a.kind) {
      // Counted first: the click is in the spool before the visitor has the answer (a crash loses none).
      case "redirect":
        afterCount(count(req, link, v, a.rule, geo), () => sendRedirect(res, a.status, a.location));
        return outcome(a.rule);
      case "expired":
        afterCount(count(req, link, v, a.rule, geo), () => sendHtml(res, 404, expiredPage(), head));
        return outcome(a.rule);
      case "card":
        sendHtml(res, 200, shareCardPage(link, redirectBase, shortBase), head);
        return outcome("card");
      case "password_form":
        sendHtml(res, 200, passwordFormPage(link.slug), head, PASSWORD_FORM_HEADERS);
        return outcome("password_form");
    }
  }

  const notFound = (req: IncomingMessage, res: ServerResponse) => {
    sendHtml(res, 404, notFoundPage(), req.method === "HEAD");
    outcome("not_found");
  };

  // During a database outage every uncached slug fails alike: one line per 10 s with a count,
  // not one per request (and not the driver's error, which repeats the query).
  let outageLoggedAt = 0;
  let outageUnlogged = 0;
  const unavailable = (req: IncomingMessage, res: ServerResponse, err: unknown) => {
    if (!isDatabaseUnavailable(err)) app.log.error({ err }, "redirect lookup failed");
    else if (Date.now() - outageLoggedAt < 10_000) outageUnlogged++;
    else {
      app.log.error({ ...logSafeError(err), notLogged: outageUnlogged }, "redirect lookup failed: database unavailable");
      outageLoggedAt = Date.now();
      outageUnlogged = 0;
    }
    if (!res.headersSent)
      sendHtml(res, 503, page("Unavailable", "<h1>Temporarily unavailable</h1><p>Please try again in a moment.</p>"), req.method === "HEAD", {
        "Retry-After": "5",
      });
    outcome("unavailable");
  };

  return { outcome, count, afterCount, visitorGeo, answer, notFound, unavailable };
}
