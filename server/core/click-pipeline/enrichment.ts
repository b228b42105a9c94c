import { clickTs } from "../../lib/ids";
import { isPublicIp, lookupGeo, NO_GEO, type GeoInfo } from "../../lib/geo";
import { parseUserAgent } from "../../lib/user-agent";
import type { VisitorKeys } from "../visitor-keys";
import type { ClickRecord, EdgeMode, Pending, Visit } from "./types";

/** Whether turning this visit into a click needs a GeoIP lookup (the only async part). */
const needsGeoLookup = (v: Visit, edgeMode: EdgeMode) => !v.geo && edgeMode === "none" && isPublicIp(v.ip);

/** Turns a visit into a stored click: device, platform, browser and location. */
export async function enrichVisit(v: Visit, edgeMode: EdgeMode, ts = clickTs(v.timestamp)): Promise<ClickRecord> {
  return enrichWith(v, needsGeoLookup(v, edgeMode) ? await lookupGeo(v.ip) : (v.geo ?? NO_GEO), ts);
}

/** `enrichVisit` once the location is known (synchronous: most visits need no lookup). */
function enrichWith(v: Visit, geo: GeoInfo, ts: string): ClickRecord {
  const agent = parseUserAgent(v.userAgent);
  const edge = v.edge;
  const place: GeoInfo = edge && (edge.country || edge.region || edge.timezone || edge.lat !== null) ? edge : geo;
  // The edge knows iPadOS that reports a Mac user agent.
  const platform = edge?.os === "ios" && agent.os !== "ios" ? "iOS" : edge?.os === "android" && agent.os !== "android" ? "Android" : agent.platform;
  return {
    linkId: v.linkId,
    workspaceId: v.workspaceId,
    ts,
    timestamp: v.timestamp,
    country: place.country,
    region: place.region,
    regionName: place.regionName,
    city: place.city,
    timezone: place.timezone,
    lat: place.lat,
    lng: place.lng,
    device: edge?.device ?? agent.device,
    platform,
    browser: agent.browser,
    referer: v.referer,
    rule: v.rule,
    variant: v.variant ?? null,
    trigger: v.trigger ?? "link",
  };
}

/** The batch as stored clicks; GeoIP lookups (memoised per address) only where needed. */
export async function enrichBatch(batch: Pending[], edgeMode: EdgeMode): Promise<ClickRecord[]> {
  const rows: ClickRecord[] = new Array(batch.length);
  const lookups: Promise<void>[] = [];
  for (let i = 0; i < batch.length; i++) {
    const p = batch[i];
    if (p.kind === "click") rows[i] = p.click;
    else if (needsGeoLookup(p.visit, edgeMode))
      lookups.push(lookupGeo(p.visit.ip).then((g) => void (rows[i] = enrichWith(p.visit, g, p.ts ?? clickTs(p.visit.timestamp)))));
    else rows[i] = enrichWith(p.visit, p.visit.geo ?? NO_GEO, p.ts ?? clickTs(p.visit.timestamp));
  }
  if (lookups.length) await Promise.all(lookups);
  return rows;
}

/**
 * Gives each visit of the batch its visitor key (a spooled or retried visit gets the same key within
 * its day); a visit whose A/B variant was chosen by its key brings it along.
 */
export async function assignVisitorKeys(keys: Pick<VisitorKeys, "keyerFor">, batch: Pending[], rows: ClickRecord[]): Promise<void> {
  const keyOf = await keys.keyerFor(batch.map((p) => (p.kind === "visit" ? p.visit.timestamp : 0)).filter(Boolean));
  for (let i = 0; i < batch.length; i++) {
    const p = batch[i];
    if (p.kind === "visit") rows[i].visitor = p.visit.visitor ?? keyOf(p.visit.timestamp, p.visit.ip, p.visit.userAgent);
  }
}
