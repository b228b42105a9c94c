import type { ClickRecord } from "../core/clicks";
import type { AppServices } from "../core/services";
import { clickTs } from "../lib/ids";

const NOWHERE_KNOWN = { country: null, region: null, regionName: null, city: null, timezone: null, lat: null, lng: null };
const IN_BERLIN = { country: "DE", region: "BE", regionName: "Berlin", city: "Berlin", timezone: "Europe/Berlin", lat: 52.5, lng: 13.4 };

/**
 * A click as the recorder makes one: `linkId` of `workspaceId` at `timestamp`, from a desktop, sent
 * to the link's own URL, nothing else known about it; `over` sets what a test needs known.
 */
export const clickRecord = (linkId: string, workspaceId: string, timestamp: number, over: Partial<ClickRecord> = {}): ClickRecord => ({
  linkId,
  workspaceId,
  ts: clickTs(timestamp),
  timestamp,
  ...NOWHERE_KNOWN,
  device: "desktop",
  platform: null,
  browser: null,
  referer: null,
  rule: "url",
  ...over,
});

/** A click with every field known, and a visitor key, which is never to be sent. */
export const fullyKnownClick = (linkId: string, workspaceId: string, timestamp = Date.now(), over: Partial<ClickRecord> = {}): ClickRecord =>
  clickRecord(linkId, workspaceId, timestamp, {
    ...IN_BERLIN,
    platform: "Linux",
    browser: "Chrome 126",
    referer: "https://ref.example/",
    visitor: "visitor-key-never-sent",
    ...over,
  });

/** The fields of a click as the analytics API answers it and a link.clicked event sends it, sorted. */
export const CLICK_EVENT_FIELDS = [
  "browser",
  "country",
  "device",
  "lat",
  "lng",
  "platform",
  "referer",
  "region",
  "region_name",
  "rule",
  "timestamp",
  "timezone",
  "ts",
];

/** Stores clicks the way the recorder does (rows and hourly rollups). */
export async function recordClicks(app: AppServices, rows: ClickRecord[]): Promise<void> {
  for (const r of rows) app.clicks!.record(r);
  await app.clicks!.flush();
}
