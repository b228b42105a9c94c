import { domainToASCII } from "node:url";
import { isIP } from "node:net";

export const MAX_HOST_NAME = 253;
export const MAX_LABEL = 63;
const LABEL_RE = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

/**
 * What is wrong with `name` as a branded domain, or [] when nothing is: a lower-case
 * host name, IDN as punycode (`xn--…`: only that form is accepted, never converted), at least two
 * labels of letters, digits and hyphens (1-63 each), at most 253 characters, not an IP address and
 * not one of `ownHosts` (the service's own host names, without port).
 */
export function hostNameProblems(name: string, ownHosts: readonly string[]): string[] {
  if (name.length === 0) return ["must not be empty"];
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(name) || name.startsWith("//")) return ["must be a host name only, without a scheme such as https://"];
  if (name.includes("/") || name.includes("?") || name.includes("#")) return ["must be a host name only, without a path"];
  const bare = name.startsWith("[") && name.endsWith("]") ? name.slice(1, -1) : name;
  if (isIP(bare)) return ["must be a domain name, not an IP address"];
  if (/:\d*$/.test(name)) return ["must be a host name only, without a port"];
  if (/[^\x21-\x7e]/.test(name)) {
    return /\s/.test(name) ? ["must not contain spaces"] : ["must be written in ASCII: an internationalised name as punycode (xn--…), in lower case"];
  }
  if (/[A-Z]/.test(name)) return ["must be in lower case"];
  const problems: string[] = [];
  if (name.length > MAX_HOST_NAME) problems.push(`must be at most ${MAX_HOST_NAME} characters`);
  if (name.endsWith(".")) problems.push("must not end with a dot");
  const labels = (name.endsWith(".") ? name.slice(0, -1) : name).split(".");
  if (labels.length < 2) problems.push("must have at least two labels, such as go.example.com");
  if (labels.some((l) => l.length === 0)) problems.push("must not have empty labels (two dots in a row, or a leading dot)");
  if (labels.some((l) => l.length > MAX_LABEL)) problems.push(`each label must be at most ${MAX_LABEL} characters`);
  if (labels.some((l) => l.length > 0 && !LABEL_RE.test(l)))
    problems.push("each label must be letters a-z, digits and hyphens, not starting or ending with a hyphen");
  if (problems.length) return problems;
  if (/^\d+$/.test(labels[labels.length - 1])) return ["must be a domain name, not an IP address (its last label is all digits)"];
  // Punycode labels must decode: `xn--` followed by garbage is no internationalised name.
  if (labels.some((l) => l.startsWith("xn--")) && domainToASCII(name) !== name) return ["is not valid punycode (xn--…)"];
  if (ownHosts.includes(name)) return ["is one of this service's own host names"];
  return [];
}

/** A `Host` header's host part: lower case, without port or the root label's trailing dot (`[::1]` keeps its brackets). */
export function hostPart(host: string): string {
  let h = host.toLowerCase();
  const colon = h.lastIndexOf(":");
  if (colon >= 0 && colon > h.lastIndexOf("]")) h = h.slice(0, colon);
  return h.endsWith(".") ? h.slice(0, -1) : h;
}

/**
 * The host name of a request's `Host` header as a branded domain is stored: lower case, without
 * port or the root label's trailing dot. Null when it cannot be a served domain at all (empty, an
 * IP address, characters no host name has), so such requests never reach the database.
 */
export function hostFromHeader(host: string): string | null {
  const h = hostPart(host);
  if (h.length < 3 || h.length > MAX_HOST_NAME || !/^[a-z0-9.-]+$/.test(h) || !h.includes(".") || isIP(h)) return null;
  return h;
}

/** The host name of a URL (lower case, no port, no trailing dot). */
export function hostNameOf(url: URL): string {
  return url.hostname.toLowerCase().replace(/\.$/, "");
}
