// The redirect decision: which answer a visit to a link gets. Pure and import-free, so every
// door (the redirect host's fast path, the password form's post) decides the same way.

/** Which rule of the redirect table sent a visitor where it went (stored with its click). */
export type Rule = "ios" | "android" | "geo" | "language" | "variant" | "url" | "expiration_url" | "expired_404";

/** What the decision needs of a link (a cached link snapshot has these and more). */
export type LinkSnapshot = {
  url: string;
  /** Epoch milliseconds; null: never expires. */
  expiresAt: number | null;
  expirationUrl: string | null;
  /** Per operating system, per upper-case country code and per lower-case primary language subtag. */
  targeting: { geo?: Record<string, string>; ios?: string; android?: string; languages?: Record<string, string> } | null;
  /** The visitor's query string is added to the chosen destination (absent: false). */
  forwardQuery?: boolean;
  /** Weighted destinations (weights summing to 100) for visits no targeting rule catches (absent or null: `url`). */
  variants?: { url: string; weight: number }[] | null;
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
  /** Primary language subtags of Accept-Language, most preferred first (absent: none). */
  languages?: readonly string[];
  /**
   * Where the visitor falls on the 0–100 line of variant weights, fixed for the day per visitor and
   * link (see needsVariantPoint); absent: the first variant.
   */
  variantPoint?: number;
  /** The visit's raw query string without `?` (forwarded when the link says so). */
  query?: string;
};

export type Answer =
  | { kind: "redirect"; status: 301 | 302; location: string; rule: Rule; variant?: number }
  | { kind: "expired"; rule: "expired_404" }
  | { kind: "card" }
  | { kind: "password_form" };

export const isExpired = (link: Pick<LinkSnapshot, "expiresAt">, now: number) => link.expiresAt !== null && now >= link.expiresAt;
export const hasCard = (link: LinkSnapshot) => Boolean(link.ogTitle || link.ogDescription || link.ogImage);

/** Whether the answer can depend on the visitor's country (so a GeoIP lookup is worth it). */
export const needsCountry = (link: LinkSnapshot, now: number) => !isExpired(link, now) && hasKeys(link.targeting?.geo);

/** Whether an object has an own key, without listing them (this runs on every visit). */
function hasKeys(o: Record<string, string> | undefined): boolean {
  if (o) for (const k in o) if (Object.hasOwn(o, k)) return true;
  return false;
}

/** Whether the answer can depend on the variant point (so the visitor's daily key is worth computing). */
export const needsVariantPoint = (link: LinkSnapshot, now: number) => !isExpired(link, now) && (link.variants?.length ?? 0) > 0;

/** The variant whose share of the 0–100 line holds `point`: weights are consecutive intervals, in the link's order. */
export function pickVariant(variants: { weight: number }[], point: number): number {
  let edge = 0;
  for (let i = 0; i < variants.length; i++) {
    edge += variants[i].weight;
    if (point < edge) return i;
  }
  return variants.length - 1;
}

/** A query part's name (before `=`), decoded only when it has escapes (`%`, or `+` for a space). */
function nameOf(part: string): string {
  const eq = part.indexOf("=");
  const raw = eq < 0 ? part : part.slice(0, eq);
  if (!raw.includes("%") && !raw.includes("+")) return raw;
  try {
    return decodeURIComponent(raw.replace(/\+/g, " "));
  } catch {
    return raw;
  }
}

/** Parts without escapes, none empty. */
const PLAIN_QUERY = /^[^&%]+(?:&[^&%]+)*$/;
const QR_PART = /(?:^|&)qr(?:[=&]|$)/;

/**
 * `location` with the visitor's query parameters added, as they were sent: a name the destination
 * already has keeps the destination's value, and `qr` (the QR code's marker) is never passed on.
 * A fragment stays at the end. It runs on every visit to a link that forwards its query: the parts
 * are walked with indexOf (no arrays of parts), and a name is decoded only when it has escapes.
 */
export function forwardQuery(location: string, query: string | undefined): string {
  if (!query) return location;
  const hashAt = location.indexOf("#");
  const head = hashAt < 0 ? location : location.slice(0, hashAt);
  const fragment = hashAt < 0 ? "" : location.slice(hashAt);
  const queryAt = head.indexOf("?");
  // The common case, a destination without its own query and a plain visitor query with no `qr` and
  // no empty part: appended as it is, without taking either apart.
  if (queryAt < 0 && PLAIN_QUERY.test(query) && !QR_PART.test(query)) return `${head}?${query}${fragment}`;
  const own: string[] = [];
  for (let from = queryAt + 1, to = 0; queryAt >= 0 && from < head.length; from = to + 1) {
    to = head.indexOf("&", from);
    if (to < 0) to = head.length;
    if (to > from) own.push(nameOf(head.slice(from, to)));
  }
  // A destination has a few names: a list beats a Set's hashing, and a long one gets the Set.
  const ownSet = own.length > 16 ? new Set(own) : null;
  let added = "";
  for (let from = 0, to = 0; from < query.length; from = to + 1) {
    to = query.indexOf("&", from);
    if (to < 0) to = query.length;
    if (to === from) continue;
    const part = query.slice(from, to);
    const name = nameOf(part);
    if (name !== "qr" && !(ownSet ? ownSet.has(name) : own.includes(name))) added = added ? `${added}&${part}` : part;
  }
  if (!added) return location;
  const joint = queryAt < 0 ? "?" : head.endsWith("?") || head.endsWith("&") ? "" : "&";
  return head + joint + added + fragment;
}

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
  const to = (location: string) => (link.forwardQuery ? forwardQuery(location, visitor.query) : location);
  // An expired link ignores targeting (and variants).
  if (expired) {
    return link.expirationUrl
      ? { kind: "redirect", status: 302, location: to(link.expirationUrl), rule: "expiration_url" }
      : { kind: "expired", rule: "expired_404" };
  }
  const status = opts.passwordPassed ? 302 : 301;
  const t = link.targeting;
  // Precedence: operating system, then country, then language, then variants, then `url`.
  if (visitor.os === "ios" && t?.ios) return { kind: "redirect", status, location: to(t.ios), rule: "ios" };
  if (visitor.os === "android" && t?.android) return { kind: "redirect", status, location: to(t.android), rule: "android" };
  const geo = visitor.country ? t?.geo?.[visitor.country.toUpperCase()] : undefined;
  if (geo) return { kind: "redirect", status, location: to(geo), rule: "geo" };
  if (t?.languages && visitor.languages) {
    for (const lang of visitor.languages) {
      const dest = Object.hasOwn(t.languages, lang) ? t.languages[lang] : undefined;
      if (dest) return { kind: "redirect", status, location: to(dest), rule: "language" };
    }
  }
  if (link.variants?.length) {
    const variant = pickVariant(link.variants, visitor.variantPoint ?? 0);
    return { kind: "redirect", status, location: to(link.variants[variant].url), rule: "variant", variant };
  }
  return { kind: "redirect", status, location: to(link.url), rule: "url" };
}
