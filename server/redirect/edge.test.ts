import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertLink } from "../routers/links/links.service";
import { createTestServer, http as req, type TestServer, type TestUser } from "../test/harness";
import { createRedirectApp } from "./adapter";
import { PEOPLE } from "./ua-fixtures";

let t: TestServer;
let alice: TestUser;

beforeAll(async () => {
  t = await createTestServer({ EDGE_HEADERS: "cloudfront" });
  alice = await t.user({ plan: "pro" });
});
afterAll(() => t?.close());

const CLOUDFRONT = {
  "cloudfront-viewer-country": "PT",
  "cloudfront-viewer-country-region": "11",
  "cloudfront-viewer-country-region-name": "Lisboa",
  "cloudfront-viewer-city": "Lisbon",
  "cloudfront-viewer-time-zone": "Europe/Lisbon",
  "cloudfront-viewer-latitude": "38.72",
  "cloudfront-viewer-longitude": "-9.14",
  "cloudfront-is-desktop-viewer": "true",
  "cloudfront-is-mobile-viewer": "false",
  "cloudfront-is-tablet-viewer": "false",
  "cloudfront-is-smarttv-viewer": "false",
  "cloudfront-is-ios-viewer": "false",
  "cloudfront-is-android-viewer": "false",
};
const newLink = async (json: Record<string, unknown>) => {
  const r = await req(`${t.api}/links`, { method: "POST", json: { url: "https://dest.example/", ...json }, headers: alice.auth });
  expect(r.status).toBe(201);
  return r.json as { id: string; slug: string };
};
const analytics = async (id: string) => {
  await t.app.clicks!.flush();
  return (await req(`${t.api}/links/${id}/analytics`, { headers: alice.auth })).json;
};

describe("EDGE_HEADERS=cloudfront", () => {
  it("stores country, region, region name, timezone, lat/lng from CloudFront's viewer headers", async () => {
    const l = await newLink({});
    await req(`${t.redirect}/${l.slug}`, { headers: { "user-agent": PEOPLE.linuxFirefox, ...CLOUDFRONT } });
    const c = (await analytics(l.id)).clicks[0];
    expect(c).toMatchObject({ country: "PT", region: "11", region_name: "Lisboa", timezone: "Europe/Lisbon", device: "desktop", rule: "url" });
    expect(c.lat).toBeCloseTo(38.72, 2);
    expect(c.lng).toBeCloseTo(-9.14, 2);
  });

  it("geo targeting follows CloudFront-Viewer-Country", async () => {
    const l = await newLink({ targeting: { geo: { PT: "https://pt.example/", BR: "https://br.example/" } } });
    const pt = await req(`${t.redirect}/${l.slug}`, { headers: { "user-agent": PEOPLE.windowsChrome, ...CLOUDFRONT } });
    expect(pt.headers.get("location")).toBe("https://pt.example/");
    const br = await req(`${t.redirect}/${l.slug}`, { headers: { "user-agent": PEOPLE.windowsChrome, ...CLOUDFRONT, "cloudfront-viewer-country": "BR" } });
    expect(br.headers.get("location")).toBe("https://br.example/");
    const none = await req(`${t.redirect}/${l.slug}`, { headers: { "user-agent": PEOPLE.windowsChrome } });
    expect(none.headers.get("location")).toBe("https://dest.example/");
    expect((await analytics(l.id)).clicks.map((c: { rule: string }) => c.rule).sort()).toEqual(["geo", "geo", "url"]); // same-millisecond clicks have no order
  });

  it("iPadOS reporting a Mac goes to ios when CloudFront-Is-IOS-Viewer says so, recorded as an iOS tablet", async () => {
    const l = await newLink({ targeting: { ios: "https://ios.example/", geo: { PT: "https://pt.example/" } } });
    const headers = {
      "user-agent": PEOPLE.ipadAsMac,
      ...CLOUDFRONT,
      "cloudfront-is-ios-viewer": "true",
      "cloudfront-is-tablet-viewer": "true",
      "cloudfront-is-desktop-viewer": "false",
    };
    const r = await req(`${t.redirect}/${l.slug}`, { headers });
    expect(r.headers.get("location")).toBe("https://ios.example/");
    expect((await analytics(l.id)).clicks[0]).toMatchObject({ rule: "ios", device: "tablet", platform: "iOS" });
  });

  it("Android by CloudFront-Is-Android-Viewer", async () => {
    const l = await newLink({ targeting: { android: "https://android.example/" } });
    const r = await req(`${t.redirect}/${l.slug}`, {
      headers: { "user-agent": PEOPLE.androidChrome, ...CLOUDFRONT, "cloudfront-is-android-viewer": "true", "cloudfront-is-mobile-viewer": "true" },
    });
    expect(r.headers.get("location")).toBe("https://android.example/");
  });
});

describe("linktree page handler contract", () => {
  it("linktree slugs go to linktreePage with countView; countView counts one view, not for bots or HEAD", async () => {
    const tree = await insertLink(t.app.db, { workspaceId: alice.workspaceId, url: "https://tree.example/", kind: "linktree" });
    const seen: string[] = [];
    const app = createRedirectApp(t.app, {
      async linktreePage(_req, res, link, countView) {
        seen.push(link.id);
        // The page goes out once the view is spooled; a second call counts nothing more.
        countView(() => undefined);
        countView(() => void res.status(200).type("html").send("<h1>tree</h1>"));
      },
    });
    const server = http.createServer(app);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const r = await req(`${base}/${tree.slug.toUpperCase()}`, { headers: { "user-agent": PEOPLE.macSafari } });
      expect(r.status).toBe(200);
      expect(r.text).toContain("tree");
      await req(`${base}/${tree.slug}`, { headers: { "user-agent": "Twitterbot/1.0" } });
      await req(`${base}/${tree.slug}`, { method: "HEAD", headers: { "user-agent": PEOPLE.macSafari } });
      expect(seen).toEqual([tree.id, tree.id, tree.id]);
      await t.app.clicks!.flush();
      expect((await req(`${t.api}/links/${tree.id}/analytics`, { headers: alice.auth })).json.count).toBe(1);
      // A normal link on the same app still takes the fast path.
      const l = await newLink({});
      expect((await req(`${base}/${l.slug}`)).status).toBe(301);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
