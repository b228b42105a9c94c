// The edge network's viewer headers, as readEdgeHeaders reads them (trusted only with EDGE_HEADERS).
import { describe, expect, it } from "vitest";
import { readEdgeHeaders } from "./edge";

describe("EDGE_HEADERS=cloudflare", () => {
  it("takes the device from CF-Device-Type (mobile, tablet, desktop), any other value as none", () => {
    for (const [sent, device] of [
      ["mobile", "mobile"],
      ["Tablet", "tablet"],
      ["desktop", "desktop"],
      ["toaster", null],
    ] as const)
      expect(readEdgeHeaders({ "cf-ipcountry": "DE", "cf-device-type": sent }, "cloudflare"), sent).toMatchObject({ country: "DE", device });
    expect(readEdgeHeaders({ "cf-ipcountry": "DE" }, "cloudflare").device).toBeNull();
  });

  it("reads the visitor location headers", () => {
    const h = {
      "cf-ipcountry": "pt",
      "cf-region-code": "11",
      "cf-region": "Lisboa",
      "cf-ipcity": "Lisbon",
      "cf-timezone": "Europe/Lisbon",
      "cf-iplatitude": "38.72",
      "cf-iplongitude": "-9.14",
    };
    expect(readEdgeHeaders(h, "cloudflare")).toMatchObject({
      country: "PT",
      region: "11",
      regionName: "Lisboa",
      city: "Lisbon",
      timezone: "Europe/Lisbon",
      lat: 38.72,
      lng: -9.14,
    });
  });
});

describe("edge place headers: a value no place has is none", () => {
  const cloudfront = (extra: Record<string, string>) => readEdgeHeaders({ "cloudfront-viewer-country": "DE", ...extra }, "cloudfront");

  it("a latitude beyond ±90 or a longitude beyond ±180", () => {
    expect(cloudfront({ "cloudfront-viewer-latitude": "-95", "cloudfront-viewer-longitude": "500" })).toMatchObject({ lat: null, lng: null });
    expect(cloudfront({ "cloudfront-viewer-latitude": "1e5", "cloudfront-viewer-longitude": "-180.5" })).toMatchObject({ lat: null, lng: null });
    expect(cloudfront({ "cloudfront-viewer-latitude": "-90", "cloudfront-viewer-longitude": "180" })).toMatchObject({ lat: -90, lng: 180 });
  });

  it("a time zone that is no IANA zone name", () => {
    expect(cloudfront({ "cloudfront-viewer-time-zone": "Mars/Olympus" }).timezone).toBeNull();
    expect(cloudfront({ "cloudfront-viewer-time-zone": "+01:00" }).timezone).toBeNull();
    expect(cloudfront({ "cloudfront-viewer-time-zone": "America/Sao_Paulo" }).timezone).toBe("America/Sao_Paulo");
    expect(readEdgeHeaders({ "cf-ipcountry": "DE", "cf-timezone": "Nowhere/Land" }, "cloudflare").timezone).toBeNull();
  });

  it("a region or city name longer than any place's", () => {
    const long = "x".repeat(129);
    expect(cloudfront({ "cloudfront-viewer-city": long, "cloudfront-viewer-country-region-name": long })).toMatchObject({ city: null, regionName: null });
    expect(cloudfront({ "cloudfront-viewer-city": "Llanfairpwllgwyngyll" }).city).toBe("Llanfairpwllgwyngyll");
  });
});
