import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestServer, http, type TestServer, type TestUser } from "../test/harness";
import { remixRouteLabels } from "./metrics-routes";

/**
 * /_/metrics has `http_request_duration_seconds{origin, route}`: one series per origin and a route
 * label that is a template or a name (the REST path template, the tRPC procedure, the Remix route
 * id, `redirect` for a slug), never the path a client sent.
 */
let t: TestServer;
let alice: TestUser;

beforeAll(async () => {
  t = await createTestServer();
  alice = await t.user();
});
afterAll(async () => t?.close());

/** The `_count` of each series, by its `origin route` labels. */
async function counts(): Promise<Map<string, number>> {
  const text = (await http(`${t.redirect}/_/metrics`)).text;
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^http_request_duration_seconds_count\{origin="([^"]*)",route="([^"]*)"\} (\d+)/gm)) out.set(`${m[1]} ${m[2]}`, Number(m[3]));
  return out;
}
const delta = (before: Map<string, number>, after: Map<string, number>, key: string) => (after.get(key) ?? 0) - (before.get(key) ?? 0);

describe("request duration histograms", () => {
  it("a REST call counts once under the API origin and its path template, not its path", async () => {
    const link = (await http(`${t.api}/links`, { method: "POST", headers: alice.auth, json: { url: "https://example.com/a" } })).json;
    const before = await counts();
    expect((await http(`${t.api}/links/${link.id}`, { headers: alice.auth })).status).toBe(200);
    const after = await counts();
    expect(delta(before, after, "api GET /links/{id}")).toBe(1);
    expect([...after.keys()].some((k) => k.includes(link.id))).toBe(false);
  });

  it("slugs on the redirect host count under route redirect, whatever the slug", async () => {
    const a = (await http(`${t.api}/links`, { method: "POST", headers: alice.auth, json: { url: "https://example.com/b" } })).json;
    const before = await counts();
    expect((await http(`${t.redirect}/${a.slug}`)).status).toBe(301);
    expect((await http(`${t.redirect}/no-such-slug-here`)).status).toBe(404);
    const after = await counts();
    expect(delta(before, after, "redirect redirect")).toBe(2);
    expect([...after.keys()].some((k) => k.includes(a.slug) || k.includes("no-such-slug-here"))).toBe(false);
  });

  it("the redirect host's own paths count under their fixed names", async () => {
    const before = await counts();
    await http(`${t.redirect}/_/health`);
    await http(`${t.redirect}/_/tls/ask?domain=x.example`);
    await http(`${t.redirect}/_/anything/${Math.random()}`);
    const after = await counts();
    expect(delta(before, after, "redirect /_/health")).toBe(1);
    expect(delta(before, after, "redirect /_/tls/ask")).toBe(1);
    expect(delta(before, after, "redirect /_/other")).toBe(1);
  });

  it("a tRPC call counts under its procedure's name; an unknown procedure under one label", async () => {
    const before = await counts();
    await http(`${t.api}/trpc/link.list?input=${encodeURIComponent("{}")}`, { headers: alice.auth });
    await http(`${t.api}/trpc/nothing.${Math.random().toString(36).slice(2)}`, { headers: alice.auth });
    const after = await counts();
    expect(delta(before, after, "api trpc link.list")).toBe(1);
    expect(delta(before, after, "api trpc unknown")).toBe(1);
  });

  it("an unknown API path counts under unmatched, never its own label", async () => {
    const path = `/nothing-${Math.random().toString(36).slice(2)}`;
    const before = await counts();
    expect((await http(`${t.api}${path}`, { headers: alice.auth })).status).toBe(404);
    const after = await counts();
    expect(delta(before, after, "api unmatched")).toBe(1);
    expect([...after.keys()].some((k) => k.includes(path))).toBe(false);
  });

  it("the histogram's buckets are cumulative and end with +Inf equal to the count", async () => {
    const text = (await http(`${t.redirect}/_/metrics`)).text;
    const series = (le: string) =>
      Number(
        new RegExp(`^http_request_duration_seconds_bucket\\{origin="redirect",route="redirect",le="${le.replace("+", "\\+")}"\\} (\\d+)`, "m").exec(text)?.[1],
      );
    const count = Number(/^http_request_duration_seconds_count\{origin="redirect",route="redirect"\} (\d+)/m.exec(text)?.[1]);
    expect(count).toBeGreaterThan(0);
    expect(series("0.001")).toBeLessThanOrEqual(series("0.01"));
    expect(series("+Inf")).toBe(count);
    expect(text).toContain("# TYPE http_request_duration_seconds histogram");
  });
});

describe("Remix route labels", () => {
  const routes = {
    root: { id: "root", path: "" },
    "routes/_index": { id: "routes/_index", parentId: "root", index: true },
    "routes/_app": { id: "routes/_app", parentId: "root" },
    "routes/_app.links._index": { id: "routes/_app.links._index", parentId: "routes/_app", path: "links", index: true },
    "routes/_app.links.new": { id: "routes/_app.links.new", parentId: "routes/_app", path: "links/new" },
    "routes/_app.links.$id": { id: "routes/_app.links.$id", parentId: "routes/_app", path: "links/:id" },
    "routes/_app.settings": { id: "routes/_app.settings", parentId: "routes/_app", path: "settings" },
    "routes/_app.settings._index": { id: "routes/_app.settings._index", parentId: "routes/_app.settings", index: true },
    "routes/_app.settings.tokens": { id: "routes/_app.settings.tokens", parentId: "routes/_app.settings", path: "tokens" },
    "routes/docs.assets.$file": { id: "routes/docs.assets.$file", parentId: "root", path: "docs/assets/:file" },
  };
  const label = remixRouteLabels(routes);

  it("a path with an id is labelled by the route's id, not the id in the path", () => {
    expect(label("/links/lnk_abc123")).toBe("routes/_app.links.$id");
  });
  it("a static segment beats a parameter", () => {
    expect(label("/links/new")).toBe("routes/_app.links.new");
  });
  it("an index route beats its layout, and / is the index", () => {
    expect(label("/settings")).toBe("routes/_app.settings._index");
    expect(label("/links")).toBe("routes/_app.links._index");
    expect(label("/")).toBe("routes/_index");
  });
  it("a single-fetch data request counts for the page it loads", () => {
    expect(label("/links/lnk_abc123.data")).toBe("routes/_app.links.$id");
    expect(label("/settings/tokens.data")).toBe("routes/_app.settings.tokens");
    expect(label("/_root.data")).toBe("routes/_index");
  });
  it("a path no route matches is unmatched", () => {
    expect(label("/no/such/page")).toBe("unmatched");
    expect(label("/links/a/b")).toBe("unmatched");
  });
});
