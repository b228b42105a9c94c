import type { IncomingHttpHeaders } from "node:http";
import type { Device } from "./user-agent";

/** Where a visitor is: from the edge's viewer headers or a GeoIP lookup. Absent members are null. */
export type Place = {
  country: string | null;
  region: string | null;
  regionName: string | null;
  city: string | null;
  timezone: string | null;
  lat: number | null;
  lng: number | null;
};
export const NO_PLACE: Place = { country: null, region: null, regionName: null, city: null, timezone: null, lat: null, lng: null };

/** What the edge network tells about the viewer (trusted only with EDGE_HEADERS set). */
export type EdgeInfo = Place & {
  device: Device | null;
  /** The edge says the viewer runs iOS/iPadOS or Android (beats the User-Agent, e.g. iPadOS as Mac). */
  os: "ios" | "android" | null;
};

const EMPTY: EdgeInfo = { ...NO_PLACE, device: null, os: null };

const one = (h: IncomingHttpHeaders, name: string): string | null => {
  const v = h[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s && s.trim() ? decodeHeader(s.trim()) : null;
};
function decodeHeader(s: string): string {
  // CloudFront URL-encodes non-ASCII names (e.g. "S%C3%A3o%20Paulo").
  try {
    return /%[0-9a-f]{2}/i.test(s) ? decodeURIComponent(s) : s;
  } catch {
    return s;
  }
}
/** A place name as the edge sends it; a value no place has (longer than any) is none. */
const name = (h: IncomingHttpHeaders, header: string) => {
  const v = one(h, header);
  return v !== null && v.length <= MAX_NAME ? v : null;
};
const MAX_NAME = 128;
const num = (s: string | null) => (s !== null && s !== "" && Number.isFinite(Number(s)) ? Number(s) : null);
/** A coordinate within its range (latitude ±90, longitude ±180), else none. */
const coordinate = (s: string | null, limit: number) => {
  const n = num(s);
  return n !== null && Math.abs(n) <= limit ? n : null;
};
const knownZones = new Map<string, boolean>();
/** An IANA time zone name the runtime knows (`Europe/Lisbon`), else none; answers kept per name (there are a few hundred). */
function timeZone(s: string | null): string | null {
  if (s === null || s.length > MAX_NAME) return null;
  let known = knownZones.get(s);
  if (known === undefined) {
    try {
      new Intl.DateTimeFormat("en", { timeZone: s });
      known = s.includes("/") || s === "UTC";
    } catch {
      known = false;
    }
    if (knownZones.size < 2_000) knownZones.set(s, known);
  }
  return known ? s : null;
}
const DEVICES: readonly string[] = ["mobile", "tablet", "desktop"] satisfies Device[];
const country = (s: string | null) => (s && /^[A-Za-z]{2}$/.test(s) && s.toUpperCase() !== "XX" && s.toUpperCase() !== "T1" ? s.toUpperCase() : null);
const yes = (h: IncomingHttpHeaders, name: string) => one(h, name)?.toLowerCase() === "true";

/** An edge network's place headers, by their names there. */
type PlaceHeaders = Record<keyof Place, string>;
const CLOUDFRONT_PLACE: PlaceHeaders = {
  country: "cloudfront-viewer-country",
  region: "cloudfront-viewer-country-region",
  regionName: "cloudfront-viewer-country-region-name",
  city: "cloudfront-viewer-city",
  timezone: "cloudfront-viewer-time-zone",
  lat: "cloudfront-viewer-latitude",
  lng: "cloudfront-viewer-longitude",
};
// Cloudflare: CF-IPCountry always; the rest with "Add visitor location headers" enabled.
const CLOUDFLARE_PLACE: PlaceHeaders = {
  country: "cf-ipcountry",
  region: "cf-region-code",
  regionName: "cf-region",
  city: "cf-ipcity",
  timezone: "cf-timezone",
  lat: "cf-iplatitude",
  lng: "cf-iplongitude",
};

/** The place an edge network's headers give, each value checked. */
const placeFrom = (h: IncomingHttpHeaders, n: PlaceHeaders): Place => ({
  country: country(one(h, n.country)),
  region: name(h, n.region),
  regionName: name(h, n.regionName),
  city: name(h, n.city),
  timezone: timeZone(one(h, n.timezone)),
  lat: coordinate(one(h, n.lat), 90),
  lng: coordinate(one(h, n.lng), 180),
});

/** Reads the trusted edge network's viewer headers; `none` ignores them (they can be forged). */
export function readEdgeHeaders(h: IncomingHttpHeaders, mode: "none" | "cloudfront" | "cloudflare"): EdgeInfo {
  if (mode === "cloudfront") {
    let device: Device | null = null;
    if (yes(h, "cloudfront-is-smarttv-viewer")) device = "smarttv";
    else if (yes(h, "cloudfront-is-tablet-viewer")) device = "tablet";
    else if (yes(h, "cloudfront-is-mobile-viewer")) device = "mobile";
    else if (yes(h, "cloudfront-is-desktop-viewer")) device = "desktop";
    const os = yes(h, "cloudfront-is-ios-viewer") ? "ios" : yes(h, "cloudfront-is-android-viewer") ? "android" : null;
    return { ...placeFrom(h, CLOUDFRONT_PLACE), device, os };
  }
  if (mode === "cloudflare") {
    // The device (mobile, tablet or desktop) with "Cache by device type" enabled.
    const device = one(h, "cf-device-type")?.toLowerCase();
    return { ...placeFrom(h, CLOUDFLARE_PLACE), device: device !== undefined && DEVICES.includes(device) ? (device as Device) : null, os: null };
  }
  return EMPTY;
}
