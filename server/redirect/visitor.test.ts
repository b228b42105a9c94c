import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { parseUserAgent } from "../lib/user-agent";
import { isPublicIp, lookupGeo } from "../lib/geo";
import { PEOPLE, SEARCH, SOCIAL } from "./ua-fixtures";
import { languagesOf, readVisitor } from "./visitor";

const req = (headers: Record<string, string>, remote = "203.0.113.9") =>
  ({ headers, socket: { remoteAddress: remote }, connection: { remoteAddress: remote } }) as unknown as IncomingMessage;
const noTrust = () => false;

describe("visitor: device, platform, browser and OS from real user agents", () => {
  it.each([
    ["iPhone Safari", PEOPLE.iphoneSafari, "mobile", "iOS", /^Mobile Safari 18$/, "ios"],
    ["iPhone Chrome", PEOPLE.iphoneChrome, "mobile", "iOS", /^Chrome 131$/, "ios"],
    ["iPad Safari", PEOPLE.ipadSafari, "tablet", "iOS", /Safari 17$/, "ios"],
    ["Android Chrome", PEOPLE.androidChrome, "mobile", "Android", /^Chrome/, "android"],
    ["Android tablet", PEOPLE.androidTablet, "tablet", "Android", /^Chrome 131$/, "android"],
    ["Windows Chrome", PEOPLE.windowsChrome, "desktop", "Windows", /^Chrome 131$/, null],
    ["Windows Edge", PEOPLE.windowsEdge, "desktop", "Windows", /^Edge 131$/, null],
    ["Windows Firefox", PEOPLE.windowsFirefox, "desktop", "Windows", /^Firefox 133$/, null],
    ["macOS Chrome", PEOPLE.macChrome, "desktop", "Mac OS", /^Chrome 131$/, null],
    ["macOS Safari", PEOPLE.macSafari, "desktop", "Mac OS", /^Safari 18$/, null],
    ["macOS Firefox", PEOPLE.macFirefox, "desktop", "Mac OS", /^Firefox 133$/, null],
    ["macOS Edge", PEOPLE.macEdge, "desktop", "Mac OS", /^Edge 131$/, null],
    ["Linux Chrome", PEOPLE.linuxChrome, "desktop", "Linux", /^Chrome 131$/, null],
    ["Linux Firefox", PEOPLE.linuxFirefox, "desktop", "Ubuntu", /^Firefox 133$/, null],
    ["Smart TV", PEOPLE.smartTv, "smarttv", "Tizen", null, null],
  ] as const)("%s", (_n, ua, device, platform, browser, os) => {
    const a = parseUserAgent(ua);
    expect(a.device).toBe(device);
    expect(a.platform).toBe(platform);
    if (browser) expect(a.browser).toMatch(browser);
    expect(a.os).toBe(os);
    expect(a.isBot).toBe(false);
    expect(a.isSocialCrawler).toBe(false);
  });

  it.each([
    ["Instagram", PEOPLE.instagramInApp],
    ["Facebook", PEOPLE.facebookInApp],
    ["Pinterest", PEOPLE.pinterestInApp],
    ["Snapchat", PEOPLE.snapchatInApp],
    ["Teams", PEOPLE.teamsDesktop],
  ])("a person in the %s in-app browser is no crawler: redirected and counted", (_n, ua) => {
    const a = parseUserAgent(ua);
    expect(a.isSocialCrawler).toBe(false);
    expect(a.isBot).toBe(false);
  });

  it.each(Object.entries(SOCIAL))("%s is a social preview crawler (and a bot)", (_n, ua) => {
    const a = parseUserAgent(ua);
    expect(a.isSocialCrawler).toBe(true);
    expect(a.isBot).toBe(true);
  });

  it.each(Object.entries(SEARCH))("%s is a search crawler: a bot, not a preview crawler", (_n, ua) => {
    const a = parseUserAgent(ua);
    expect(a.isBot).toBe(true);
    expect(a.isSocialCrawler).toBe(false);
  });
});

describe("visitor: edge headers", () => {
  it("iPadOS with a Mac user agent is iOS when CloudFront says so", () => {
    const h = { "user-agent": PEOPLE.ipadAsMac, "cloudfront-is-ios-viewer": "true", "cloudfront-is-tablet-viewer": "true" };
    expect(readVisitor(req(h), { edgeHeaders: "cloudfront" }, noTrust).os).toBe("ios");
    expect(readVisitor(req(h), { edgeHeaders: "none" }, noTrust).os).toBe(null);
  });
  it("edge headers are ignored with EDGE_HEADERS=none (they can be forged)", () => {
    const v = readVisitor(req({ "user-agent": PEOPLE.macSafari, "cloudfront-viewer-country": "BR" }), { edgeHeaders: "none" }, noTrust);
    expect(v.edge).toBeNull();
  });
  it("the client address is the socket's unless TRUST_PROXY trusts the proxy", () => {
    const h = { "x-forwarded-for": "198.51.100.7" };
    expect(readVisitor(req(h), { edgeHeaders: "none" }, noTrust).ip).toBe("203.0.113.9");
    expect(readVisitor(req(h), { edgeHeaders: "none" }, () => true).ip).toBe("198.51.100.7");
  });
});

describe("visitor: GeoIP (EDGE_HEADERS=none)", () => {
  it("finds the country of a public address in the shipped database", async () => {
    expect((await lookupGeo("81.2.69.160")).country).toBe("GB");
    expect((await lookupGeo("::ffff:81.2.69.160")).country).toBe("GB");
  });
  it.each(["127.0.0.1", "::1", "10.1.2.3", "172.16.5.4", "192.168.1.1", "169.254.1.1", "fd00::1", "fe80::1", "::ffff:127.0.0.1", "not-an-ip"])(
    "no location for %s",
    async (ip) => {
      expect(isPublicIp(ip)).toBe(false);
      expect(await lookupGeo(ip)).toMatchObject({ country: null, region: null, lat: null });
    },
  );
});

describe("visitor: Accept-Language and the QR marker", () => {
  it.each([
    ["pt-BR,pt;q=0.9,en;q=0.8", ["pt", "en"]],
    ["en;q=0.5, de-AT, fr;q=0.7", ["de", "fr", "en"]],
    ["de;q=0, fr", ["fr"]],
    ["*, es;q=0.1", ["es"]],
    ["zh-Hant-TW;q=0.9, ZH;q=1", ["zh"]],
    ["x;q=abc, it", ["it"]],
    ["pt_BR, en;q=0.5", ["pt", "en"]],
    ["", []],
  ])("languagesOf(%j) → %j", (header, expected) => {
    expect(languagesOf(header)).toEqual(expected);
  });
  it("?qr=1 marks a QR visit, anywhere in the query; qr=10 or xqr=1 do not", () => {
    const at = (url: string) => readVisitor({ ...req({}), url } as IncomingMessage, { edgeHeaders: "none" }, noTrust);
    expect(at("/abc?qr=1").trigger).toBe("qr");
    expect(at("/abc?a=2&qr=1&b").trigger).toBe("qr");
    expect(at("/abc?qr=10").trigger).toBe("link");
    expect(at("/abc?xqr=1").trigger).toBe("link");
    expect(at("/abc").query).toBe("");
    expect(at("/abc?a=1").query).toBe("a=1");
  });
});
