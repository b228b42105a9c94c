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

/** Reads the trusted edge network's viewer headers; `none` ignores them (they can be forged). */
export function readEdgeHeaders(h: IncomingHttpHeaders, mode: "none" | "cloudfront" | "cloudflare"): EdgeInfo {
  if (mode === "cloudfront") {
    let device: Device | null = null;
    if (yes(h, "cloudfront-is-smarttv-viewer")) device = "smarttv";
    else if (yes(h, "cloudfront-is-tablet-viewer")) device = "tablet";
    else if (yes(h, "cloudfront-is-mobile-viewer")) device = "mobile";
    else if (yes(h, "cloudfront-is-desktop-viewer")) device = "desktop";
    return {
      country: country(one(h, "cloudfront-viewer-country")),
      region: name(h, "cloudfront-viewer-country-region"),
      regionName: name(h, "cloudfront-viewer-country-region-name"),
      city: name(h, "cloudfront-viewer-city"),
      timezone: timeZone(one(h, "cloudfront-viewer-time-zone")),
      lat: coordinate(one(h, "cloudfront-viewer-latitude"), 90),
      lng: coordinate(one(h, "cloudfront-viewer-longitude"), 180),
      device,
      os: yes(h, "cloudfront-is-ios-viewer") ? "ios" : yes(h, "cloudfront-is-android-viewer") ? "android" : null,
    };
  }
  if (mode === "cloudflare") {
    // Cloudflare: CF-IPCountry always; the place with "Add visitor location headers" enabled, the
    // device (mobile, tablet or desktop) with "Cache by device type".
    const device = one(h, "cf-device-type")?.toLowerCase();
    return {
      ...EMPTY,
      country: country(one(h, "cf-ipcountry")),
      region: name(h, "cf-region-code"),
      regionName: name(h, "cf-region"),
      city: name(h, "cf-ipcity"),
      timezone: timeZone(one(h, "cf-timezone")),
      lat: coordinate(one(h, "cf-iplatitude"), 90),
      lng: coordinate(one(h, "cf-iplongitude"), 180),
      device: device !== undefined && DEVICES.includes(device) ? (device as Device) : null,
    };
  }
  return EMPTY;
}
