// The redirect decision: which answer a visit to a link gets. Pure and import-free, so every
// door (the redirect host's fast path, the password form's post) decides the same way.

/** Which rule of the redirect table sent a visitor where it went (stored with its click). */
export type Rule = "ios" | "android" | "geo" | "url" | "expiration_url" | "expired_404";

/** What the decision needs of a link (a cached link snapshot has these and more). */
export type LinkSnapshot = {
  url: string;
  /** Epoch milliseconds; null: never expires. */
  expiresAt: number | null;
  expirationUrl: string | null;
  /** Per operating system, and per upper-case country code. */
  targeting: { geo?: Record<string, string>; ios?: string; android?: string } | null;
  passwordHash: string | null;
  ogTitle: string | null;
  ogDescription: string | null;
  ogImage: string | null;
};

/** What the decision needs of the visitor. */
export type VisitorFacts = {
  /** iOS/iPadOS or Android, from the User-Agent or the edge. */
  os: "ios" | "android" | null;
  /** ISO 3166-1 alpha-2, upper case; null when unknown (or not looked up: see needsCountry). */
  country: string | null;
  /** A social-network preview crawler (gets the share card). */
  socialCrawler: boolean;
};

export type Answer =
  | { kind: "redirect"; status: 301 | 302; location: string; rule: Rule }
  | { kind: "expired"; rule: "expired_404" }
  | { kind: "card" }
  | { kind: "password_form" };

export const isExpired = (link: Pick<LinkSnapshot, "expiresAt">, now: number) => link.expiresAt !== null && now >= link.expiresAt;
export const hasCard = (link: LinkSnapshot) => Boolean(link.ogTitle || link.ogDescription || link.ogImage);

/** Whether the answer can depend on the visitor's country (so a GeoIP lookup is worth it). */
export const needsCountry = (link: LinkSnapshot, now: number) => !isExpired(link, now) && Object.keys(link.targeting?.geo ?? {}).length > 0;

/**
 * The redirect table, evaluated per request. Pure: the same link, visitor and
 * time give the same answer. `passwordPassed` is set when a correct password was just posted;
 * the redirect then is a 302 (the answer to a form post, never to be cached).
 */
export function decide(link: LinkSnapshot, visitor: VisitorFacts, now: number, opts: { passwordPassed?: boolean } = {}): Answer {
  const expired = isExpired(link, now);
  if (!opts.passwordPassed) {
    // An expired link ignores share cards, not the password: the form comes first (a password
    // link's visit counts only after the password), then the expiry answer.
    if (!expired && visitor.socialCrawler && hasCard(link)) return { kind: "card" };
    if (link.passwordHash) return { kind: "password_form" };
  }
  // An expired link ignores targeting.
  if (expired) {
    return link.expirationUrl
      ? { kind: "redirect", status: 302, location: link.expirationUrl, rule: "expiration_url" }
      : { kind: "expired", rule: "expired_404" };
  }
  const status = opts.passwordPassed ? 302 : 301;
  const t = link.targeting;
  // The operating-system rule wins over the country rule.
  if (visitor.os === "ios" && t?.ios) return { kind: "redirect", status, location: t.ios, rule: "ios" };
  if (visitor.os === "android" && t?.android) return { kind: "redirect", status, location: t.android, rule: "android" };
  const geo = visitor.country ? t?.geo?.[visitor.country.toUpperCase()] : undefined;
  if (geo) return { kind: "redirect", status, location: geo, rule: "geo" };
  return { kind: "redirect", status, location: link.url, rule: "url" };
}
