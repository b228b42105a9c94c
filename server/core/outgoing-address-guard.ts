import dns from "node:dns";
import net from "node:net";
import ipaddr from "ipaddr.js";

/**
 * Outbound requests to addresses a caller chose (webhook endpoints, destination checks) must not
 * reach this service's own network: loopback, private, link-local, multicast, unspecified and the
 * other special-purpose ranges. Only plain public unicast passes; an IPv4 address inside IPv6
 * (`::ffff:10.0.0.1`) is judged as the IPv4 address it is.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range() === "unicast";
}

/** The host of a URL as a connection uses it: IPv6 literals without their brackets. */
export const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, "$1");

/**
 * A host refused before any connection: an IP literal outside the public range (Node connects to a
 * literal without a look-up, so `guardedLookup` never sees it) or a `localhost` name. Other names
 * are judged by `guardedLookup` on the addresses the connection uses.
 */
export const isBlockedLiteral = (host: string): boolean => (net.isIP(host) ? !isPublicAddress(host) : /(^|\.)localhost\.?$/i.test(host));

export class BlockedAddressError extends Error {
  readonly code = "EBLOCKEDADDRESS";
  constructor(readonly address: string) {
    super(`${address} is not a public address`);
  }
}

/** How long a look-up may take before the answer is "did not resolve". */
const LOOKUP_MS = 3000;

/** Every address `host` resolves to; [] when it does not resolve (or not in time). */
export async function resolveAll(host: string): Promise<string[]> {
  if (net.isIP(host)) return [host];
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string[]>((resolve) => (timer = setTimeout(() => resolve([]), LOOKUP_MS)));
  const lookup = dns.promises
    .lookup(host, { all: true, verbatim: true })
    .then((rows) => rows.map((r) => r.address))
    .catch(() => [] as string[]);
  try {
    return await Promise.race([lookup, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Why `raw` may not be a webhook endpoint, or [] when it may. https only, unless private addresses
 * are allowed (tests, closed networks), when http is fine too. A host that resolves to any address
 * outside the public range is refused; one that does not resolve (yet) is accepted, since every
 * delivery checks the address again when it connects.
 */
export async function endpointProblems(raw: string, allowPrivate: boolean): Promise<string[]> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return ["must be an absolute https URL"];
  }
  if (url.protocol !== "https:" && !(allowPrivate && url.protocol === "http:")) {
    return [allowPrivate ? "must be an http or https URL" : "must be an https URL"];
  }
  if (url.username || url.password) return ["must not contain a user name or password"];
  if (allowPrivate) return [];
  const host = hostOf(url);
  // `localhost.` is `localhost`: the root label's dot changes no name.
  const name = host.toLowerCase().replace(/\.$/, "");
  if (name === "" || name === "localhost" || name.endsWith(".localhost")) return ["must not point at a loopback address"];
  const blocked = (await resolveAll(host)).filter((a) => !isPublicAddress(a));
  return blocked.length
    ? [`must not resolve to a loopback, private, link-local or multicast address (${host === blocked[0] ? host : `${host} is ${blocked[0]}`})`]
    : [];
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A `lookup` for `net.connect` (and so http.request) that refuses non-public addresses: the check
 * and the connection use the same resolved address, so a name that resolves to a public address
 * when checked and to an internal one a moment later (DNS rebinding) cannot reach inside.
 */
export function guardedLookup(hostname: string, options: dns.LookupOptions, callback: LookupCallback): void {
  dns.lookup(hostname, { ...options, all: true, verbatim: true }, (err, addresses) => {
    if (err) return callback(err, "", 4);
    const list = addresses as dns.LookupAddress[];
    const bad = list.find((a) => !isPublicAddress(a.address));
    if (bad) return callback(new BlockedAddressError(bad.address), "", 4);
    if (options.all) return callback(null, list);
    const first = list[0];
    if (!first) return callback(Object.assign(new Error(`${hostname} did not resolve`), { code: "ENOTFOUND" }), "", 4);
    callback(null, first.address, first.family);
  });
}
