import { isbot } from "isbot";
import { UAParser } from "ua-parser-js";
import { LruCache } from "./lru";

export type Device = "mobile" | "tablet" | "smarttv" | "desktop";
export type ParsedAgent = {
  device: Device;
  /** Operating system name, e.g. "iOS", "Android", "Windows", "Mac OS", "Linux". */
  platform: string | null;
  /** Name and major version, e.g. "Chrome 131". */
  browser: string | null;
  os: "ios" | "android" | null;
  isBot: boolean;
  isSocialCrawler: boolean;
};

/**
 * Social-network preview crawlers (they get the share card). A heuristic by User-Agent, as
 * the only rule for recognising them; isbot recognises them as bots too, so they are never counted as clicks.
 * Only the crawlers' own tokens: app names such as "Instagram", "Pinterest" or "Teams" also appear
 * in the in-app browsers people click from, and those visitors must be redirected and counted.
 */
export const SOCIAL_CRAWLERS = [
  "facebookexternalhit",
  "facebot",
  "facebookcatalog",
  "twitterbot",
  "linkedinbot",
  "slackbot",
  "slack-imgproxy",
  "discordbot",
  "telegrambot",
  "whatsapp/",
  "pinterestbot",
  "pinterest/0.",
  "redditbot",
  "skypeuripreview",
  "microsoftpreview",
  "embedly",
  "vkshare",
  "mastodon/",
  "cardyb", // Bluesky's card fetcher
  "iframely",
  "snap url preview",
  "line-poker",
  "kakaotalk-scrap",
  "outbrain",
  "quora link preview",
  "xing-contenttabreceiver",
  "mattermost-bot",
  "nuzzel",
  "bitlybot",
];
const SOCIAL_RE = new RegExp(SOCIAL_CRAWLERS.map((s) => s.replace(/[.*+?^${}()|[\]\\!]/g, "\\$&")).join("|"), "i");
// Search engines' crawlers are bots but not preview crawlers: they get the redirect.
const SEARCH_RE = /googlebot|bingbot|duckduckbot|baiduspider|yandex(bot)?|sogou|exabot|seznambot|petalbot|applebot|slurp/i;

export function isSocialCrawler(ua: string): boolean {
  return SOCIAL_RE.test(ua) && !SEARCH_RE.test(ua);
}

const cache = new LruCache<ParsedAgent>(5_000);

/** Parses a User-Agent once (memoised: the same few thousand agents make most traffic). */
export function parseUserAgent(ua: string | undefined | null): ParsedAgent {
  const key = ua ?? "";
  const hit = cache.get(key);
  if (hit) return hit;
  const r = new UAParser(key).getResult();
  const osName = r.os.name ?? null;
  const type = r.device.type;
  let device: Device = "desktop";
  if (type === "mobile" || type === "wearable") device = "mobile";
  else if (type === "tablet") device = "tablet";
  else if (type === "smarttv" || type === "console") device = "smarttv";
  else if (/iPad/.test(key)) device = "tablet";
  else if (/Android/.test(key) && !/Mobile/.test(key)) device = "tablet";
  else if (/Mobile|iPhone|iPod/.test(key)) device = "mobile";
  let os: ParsedAgent["os"] = null;
  if (osName === "iOS" || /iPhone|iPad|iPod/.test(key)) os = "ios";
  else if (osName === "Android" || /Android/.test(key)) os = "android";
  const major = r.browser.major ?? r.browser.version?.split(".")[0];
  const social = isSocialCrawler(key);
  const parsed: ParsedAgent = {
    device,
    platform: os === "ios" ? "iOS" : osName,
    browser: r.browser.name ? (major ? `${r.browser.name} ${major}` : r.browser.name) : null,
    os,
    isBot: social || isbot(key) || key === "",
    isSocialCrawler: social,
  };
  cache.set(key, parsed);
  return parsed;
}
