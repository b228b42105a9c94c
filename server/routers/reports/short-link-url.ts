import { decodeUnreserved } from "../../lib/urls";
import { SLUG_RE } from "../links";

const SCHEME_RE = /^[a-z][a-z0-9+.-]*:/i;

/**
 * The slug of a reported short link, or null when `input` is not a link on the redirect
 * domain. Accepted forms: `https://{domain}/{slug}`, `http:` too, no scheme,
 * trailing slash, query or fragment, and a bare slug. Slugs are lower-cased.
 * `domain` null checks only the shape (for input validation before the config is known).
 */
export function slugFromReportedUrl(input: string, domain: string | null): string | null {
  const parsed = parseReportedUrl(input);
  if (!parsed) return null;
  if (domain !== null && parsed.url && !sameHost(parsed.url, domain)) return null;
  return parsed.slug;
}

/**
 * A reported short link taken apart: its slug and, unless it was a bare slug, its URL (whose host
 * says which domain: the redirect domain, a branded one, or none of ours). Null when it has no
 * short link's shape.
 */
export function parseReportedUrl(input: string): { slug: string; url: URL | null } | null {
  const value = input.trim();
  if (!value || /\s/.test(value)) return null;
  const bare = value.toLowerCase();
  if (SLUG_RE.test(bare)) return { slug: bare, url: null };
  let withScheme = value;
  if (value.startsWith("//")) withScheme = `https:${value}`;
  else if (!SCHEME_RE.test(value) || /^[^/?#]+:\d/.test(value)) withScheme = `https://${value}`; // "host:port/slug" is not a scheme
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return null;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  if (url.username || url.password) return null;
  const m = /^\/([^/]+)\/?$/.exec(decodeUnreserved(url.pathname));
  if (!m) return null;
  const slug = m[1].toLowerCase();
  return SLUG_RE.test(slug) ? { slug, url } : null;
}

/** The redirect domain carries its port only when it is not the default one; accept either scheme's default. */
export function sameHost(url: URL, domain: string): boolean {
  const want = domain.toLowerCase();
  // "go.example." is the same host as "go.example" (as for the loop check in lib/urls).
  const hostname = url.hostname.replace(/\.$/, "");
  if (`${hostname}${url.port ? `:${url.port}` : ""}` === want) return true;
  const [host, port] = want.split(":");
  if (port) return false;
  return hostname === host && (url.port === "" || url.port === "80" || url.port === "443");
}
