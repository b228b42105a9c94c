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
const num = (s: string | null) => (s !== null && s !== "" && Number.isFinite(Number(s)) ? Number(s) : null);
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
      region: one(h, "cloudfront-viewer-country-region"),
      regionName: one(h, "cloudfront-viewer-country-region-name"),
      city: one(h, "cloudfront-viewer-city"),
      timezone: one(h, "cloudfront-viewer-time-zone"),
      lat: num(one(h, "cloudfront-viewer-latitude")),
      lng: num(one(h, "cloudfront-viewer-longitude")),
      device,
      os: yes(h, "cloudfront-is-ios-viewer") ? "ios" : yes(h, "cloudfront-is-android-viewer") ? "android" : null,
    };
  }
  if (mode === "cloudflare") {
    // Cloudflare: CF-IPCountry always; the rest with "Add visitor location headers" enabled.
    return {
      ...EMPTY,
      country: country(one(h, "cf-ipcountry")),
      region: one(h, "cf-region-code"),
      regionName: one(h, "cf-region"),
      city: one(h, "cf-ipcity"),
      timezone: one(h, "cf-timezone"),
      lat: num(one(h, "cf-iplatitude")),
      lng: num(one(h, "cf-iplongitude")),
    };
  }
  return EMPTY;
}
