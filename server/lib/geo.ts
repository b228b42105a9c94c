import { BlockList, isIP } from "node:net";
import geoip from "fast-geoip";
import { LruCache } from "./lru";
import { NO_PLACE, type Place } from "./edge";

export type GeoInfo = Place;
export const NO_GEO: GeoInfo = NO_PLACE;

// Loopback, private, link-local, CGNAT and unique-local ranges have no place on the map.
const LOCAL_V4 = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.168.0.0", 16],
] as const;
const localV6 = new BlockList();
for (const [net, bits] of [
  ["::", 127],
  ["fc00::", 7],
  ["fe80::", 10],
] as const)
  localV6.addSubnet(net, bits, "ipv6");

/** A valid dotted-quad IPv4 address as an unsigned 32-bit number. */
function ipv4Number(a: string): number {
  let n = 0;
  let octet = 0;
  for (let i = 0; i < a.length; i++) {
    const c = a.charCodeAt(i);
    if (c === 46) {
      n = n * 256 + octet;
      octet = 0;
    } else octet = octet * 10 + c - 48;
  }
  return n * 256 + octet;
}

// Every stored click asks this of its address: IPv4 ranges are compared as numbers (BlockList builds
// a SocketAddress per call: 3 µs against 0.1, a few percent of a redirect's CPU); IPv6 keeps the BlockList.
const localV4 = LOCAL_V4.map(([net, bits]) => ({ shift: 32 - bits, prefix: ipv4Number(net) >>> (32 - bits) }));
const isLocalV4 = (a: string) => {
  const n = ipv4Number(a);
  return localV4.some((r) => n >>> r.shift === r.prefix);
};

/** The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:1.2.3.4`), else the address. */
export const unmapIp = (ip: string) => (ip.startsWith("::ffff:") && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip);

export function isPublicIp(ip: string): boolean {
  const a = unmapIp(ip);
  const v = isIP(a);
  if (!v) return false;
  return v === 4 ? !isLocalV4(a) : !localV6.check(a, "ipv6");
}

/**
 * Location of an address from the GeoIP database shipped in fast-geoip (on disk, no network).
 * None for loopback and private addresses, or when the database knows nothing.
 */
export function lookupGeo(ip: string): Promise<GeoInfo> {
  const a = unmapIp(ip);
  if (!isPublicIp(a) || isIP(a) !== 4) return Promise.resolve(NO_GEO); // the shipped database covers IPv4
  // Each lookup reads and parses several JSON files: memoise per address (the database is static).
  let hit = memo.get(a);
  if (!hit) memo.set(a, (hit = readGeo(a)));
  return hit;
}

const memo = new LruCache<Promise<GeoInfo>>(20_000);

async function readGeo(a: string): Promise<GeoInfo> {
  try {
    const r = await geoip.lookup(a);
    if (!r || !r.country) return NO_GEO;
    return {
      country: r.country.toUpperCase(),
      region: r.region || null,
      regionName: null,
      city: r.city || null,
      timezone: r.timezone || null,
      lat: Number.isFinite(r.ll?.[0]) ? r.ll[0] : null,
      lng: Number.isFinite(r.ll?.[1]) ? r.ll[1] : null,
    };
  } catch {
    return NO_GEO;
  }
}
