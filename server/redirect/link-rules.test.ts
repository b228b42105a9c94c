import { eq, inArray } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clicks, links } from "../../db/schema";
import { createTestServer, http, type TestServer, type TestUser } from "../test/harness";
import { PEOPLE } from "./ua-fixtures";

// The redirect side of the second round of link rules: language targeting and its place in the
// precedence, A/B variants, query forwarding, the QR code's marker and archived links.

let t: TestServer;
let alice: TestUser;

beforeAll(async () => {
  // TRUST_PROXY lets the tests play visitors from other addresses (GeoIP, variants per visitor).
  t = await createTestServer({ TRUST_PROXY: "true" });
  alice = await t.user({ plan: "pro" });
});
afterAll(() => t?.close());

const newLink = async (json: Record<string, unknown>) => {
  const r = await http(`${t.api}/links`, { method: "POST", json: { url: "https://dest.example/", ...json }, headers: alice.auth });
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  return r.json as { id: string; slug: string };
};
const patch = (id: string, json: unknown) => http(`${t.api}/links/${id}`, { method: "PATCH", json, headers: alice.auth });
const visit = (path: string, headers: Record<string, string> = {}) =>
  http(`${t.redirect}/${path}`, { headers: { "user-agent": PEOPLE.windowsChrome, "x-forwarded-for": "198.51.100.7", ...headers } });
const location = async (path: string, headers: Record<string, string> = {}) => (await visit(path, headers)).headers.get("location");
const storedClicks = async (linkId: string) => {
  await t.app.clicks!.flush();
  return t.app.db.select({ rule: clicks.rule, variant: clicks.variant, trigger: clicks.trigger }).from(clicks).where(eq(clicks.linkId, linkId));
};
const GB = { "x-forwarded-for": "81.2.69.160" }; // GB in the shipped GeoIP database

describe("language targeting", () => {
  const languages = { de: "https://de.example/", pt: "https://pt.example/" };

  it("the visitor's most preferred language with a rule wins, by q-value and then header order, primary subtags only", async () => {
    const l = await newLink({ targeting: { languages } });
    expect(await location(l.slug, { "accept-language": "pt-BR,pt;q=0.9,de;q=0.8" })).toBe("https://pt.example/");
    expect(await location(l.slug, { "accept-language": "pt;q=0.5, de-AT;q=0.9" })).toBe("https://de.example/");
    expect(await location(l.slug, { "accept-language": "fr-FR, en;q=0.9, de;q=0.1" })).toBe("https://de.example/");
    expect(await location(l.slug, { "accept-language": "de;q=0, fr" })).toBe("https://dest.example/");
    expect(await location(l.slug, { "accept-language": "*" })).toBe("https://dest.example/");
    expect(await location(l.slug)).toBe("https://dest.example/");
  });

  it("a language match answers 301 and its click records rule language", async () => {
    const l = await newLink({ targeting: { languages } });
    const r = await visit(l.slug, { "accept-language": "de-DE" });
    expect(r.status).toBe(301);
    expect(await storedClicks(l.id)).toEqual([{ rule: "language", variant: null, trigger: "link" }]);
  });

  it("precedence: OS rules, then country, then language, then variants, then url", async () => {
    const variants = [
      { url: "https://dest.example/", weight: 50 },
      { url: "https://b.example/", weight: 50 },
    ];
    const l = await newLink({ targeting: { ios: "https://ios.example/", geo: { GB: "https://gb.example/" }, languages }, variants });
    const de = { "accept-language": "de" };
    expect(await location(l.slug, { ...de, ...GB, "user-agent": PEOPLE.iphoneSafari })).toBe("https://ios.example/");
    expect(await location(l.slug, { ...de, ...GB })).toBe("https://gb.example/");
    expect(await location(l.slug, de)).toBe("https://de.example/");
    expect(variants.map((v) => v.url)).toContain(await location(l.slug, { "accept-language": "fr" }));
    await patch(l.id, { variants: null });
    expect(await location(l.slug, { "accept-language": "fr" })).toBe("https://dest.example/");
  });
});

describe("A/B variants", () => {
  const variants = [
    { url: "https://dest.example/", weight: 50 },
    { url: "https://b.example/", weight: 50 },
  ];

  it("a visitor keeps the same variant on every visit of the day", async () => {
    const l = await newLink({ variants });
    for (let i = 0; i < 6; i++) {
      const who = { "x-forwarded-for": `198.51.100.${20 + i}` };
      const first = await location(l.slug, who);
      for (let j = 0; j < 3; j++) expect(await location(l.slug, who)).toBe(first);
    }
  });

  it("visitors are spread over the variants, and each click records rule variant and the variant's index from 0", async () => {
    const l = await newLink({ variants });
    const seen = new Map<string, number>();
    for (let i = 0; i < 40; i++) {
      const r = await visit(l.slug, { "x-forwarded-for": `203.0.113.${i + 1}` });
      expect(r.status).toBe(301);
      const loc = r.headers.get("location")!;
      seen.set(loc, (seen.get(loc) ?? 0) + 1);
    }
    expect([...seen.keys()].sort()).toEqual(["https://b.example/", "https://dest.example/"]);
    const stored = await storedClicks(l.id);
    expect(stored).toHaveLength(40);
    expect(stored.every((c) => c.rule === "variant")).toBe(true);
    expect(stored.filter((c) => c.variant === 0)).toHaveLength(seen.get("https://dest.example/")!);
    expect(stored.filter((c) => c.variant === 1)).toHaveLength(seen.get("https://b.example/")!);
  });

  it("a click chosen by its variant carries the same daily visitor key as the visitor's other clicks", async () => {
    const [ab, plain] = [await newLink({ variants }), await newLink({})];
    const who = { "x-forwarded-for": "198.51.100.90" };
    for (const l of [ab, plain, ab]) expect((await visit(l.slug, who)).status).toBe(301);
    await t.app.clicks!.flush();
    const keys = await t.app.db
      .select({ visitor: clicks.visitor })
      .from(clicks)
      .where(inArray(clicks.linkId, [ab.id, plain.id]));
    expect(keys).toHaveLength(3);
    expect(keys[0].visitor).toMatch(/^[\w-]{22}$/);
    expect(new Set(keys.map((k) => k.visitor)).size).toBe(1);
  });

  it("weights decide the shares: a 99/1 split sends nearly everyone to the first", async () => {
    const l = await newLink({
      variants: [
        { url: "https://dest.example/", weight: 99 },
        { url: "https://b.example/", weight: 1 },
      ],
    });
    let first = 0;
    for (let i = 0; i < 30; i++) if ((await location(l.slug, { "x-forwarded-for": `192.0.2.${i + 1}` })) === "https://dest.example/") first++;
    expect(first).toBeGreaterThanOrEqual(27);
  });

  it("an expired link ignores its variants (302 to expiration_url)", async () => {
    const l = await newLink({ variants, expires_at: Date.now() + 60_000, expiration_url: "https://over.example/" });
    await t.app.db
      .update(links)
      .set({ expiresAt: Date.now() - 1 })
      .where(eq(links.id, l.id));
    await t.app.invalidateSlugs([l.slug]);
    const r = await visit(l.slug);
    expect(r.status).toBe(302);
    expect(r.headers.get("location")).toBe("https://over.example/");
  });
});

describe("forward_query", () => {
  it("adds the visitor's query to the destination; a name the destination has keeps its value; qr is never forwarded", async () => {
    const l = await newLink({ url: "https://dest.example/p?utm_source=mail&x=1#top", forward_query: true });
    expect(await location(`${l.slug}?utm_source=ad&gclid=abc&qr=1&y=a%20b`)).toBe("https://dest.example/p?utm_source=mail&x=1&gclid=abc&y=a%20b#top");
  });

  it("applies to a targeting URL, a variant and expiration_url alike", async () => {
    const l = await newLink({
      forward_query: true,
      targeting: { languages: { de: "https://de.example/" } },
      variants: [
        { url: "https://dest.example/", weight: 50 },
        { url: "https://b.example/", weight: 50 },
      ],
    });
    expect(await location(`${l.slug}?a=1`, { "accept-language": "de" })).toBe("https://de.example/?a=1");
    expect(await location(`${l.slug}?a=1`)).toMatch(/^https:\/\/(dest|b)\.example\/\?a=1$/);
    const e = await newLink({ forward_query: true, expires_at: Date.now() + 60_000, expiration_url: "https://over.example/?k=v" });
    await t.app.db
      .update(links)
      .set({ expiresAt: Date.now() - 1 })
      .where(eq(links.id, e.id));
    await t.app.invalidateSlugs([e.slug]);
    const r = await visit(`${e.slug}?a=1&k=x`);
    expect(r.status).toBe(302);
    expect(r.headers.get("location")).toBe("https://over.example/?k=v&a=1");
  });

  it("without forward_query the destination is unchanged", async () => {
    const l = await newLink({ url: "https://dest.example/?k=v" });
    expect(await location(`${l.slug}?a=1`)).toBe("https://dest.example/?k=v");
  });
});

describe("?qr=1: a visit through the QR code", () => {
  it("stores the click with trigger qr and passes nothing on (the status is the same 301)", async () => {
    const l = await newLink({ url: "https://dest.example/?k=v" });
    const r = await visit(`${l.slug}?qr=1`);
    expect(r.status).toBe(301);
    expect(r.headers.get("location")).toBe("https://dest.example/?k=v");
    await visit(l.slug);
    const stored = await storedClicks(l.id);
    expect(stored.map((c) => c.trigger).sort()).toEqual(["link", "qr"]);
  });

  it("a password link keeps the marker through its form", async () => {
    const l = await newLink({ password: "open sesame" });
    const form = await visit(`${l.slug}?qr=1`);
    expect(form.status).toBe(200);
    expect(form.text).toContain(`action="/${l.slug}?qr=1"`);
    const r = await http(`${t.redirect}/${l.slug}?qr=1`, {
      method: "POST",
      body: new URLSearchParams({ password: "open sesame" }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", "user-agent": PEOPLE.windowsChrome, "x-forwarded-for": "198.51.100.99" },
    });
    expect(r.status).toBe(302);
    expect(r.headers.get("location")).toBe("https://dest.example/");
    expect(await storedClicks(l.id)).toEqual([{ rule: "url", variant: null, trigger: "qr" }]);
  });
});

describe("archive", () => {
  it("an archived link answers as an unknown slug and counts no click; archived: false puts it back", async () => {
    const l = await newLink({});
    expect((await visit(l.slug)).status).toBe(301); // now in the cache
    expect((await patch(l.id, { archived: true })).status).toBe(200);
    const unknown = await visit("zzzz-no-such-slug");
    const r = await visit(l.slug);
    expect(r.status).toBe(404);
    expect(r.text).toBe(unknown.text);
    expect(r.headers.get("content-type")).toBe(unknown.headers.get("content-type"));
    expect(await storedClicks(l.id)).toHaveLength(1);
    expect((await patch(l.id, { archived: false })).status).toBe(200);
    expect((await visit(l.slug)).status).toBe(301);
    expect(await storedClicks(l.id)).toHaveLength(2);
  });

  it("an archived link's clicks and analytics stay readable", async () => {
    const l = await newLink({});
    await visit(l.slug);
    await patch(l.id, { archived: true });
    await t.app.clicks!.flush();
    const r = await http(`${t.api}/links/${l.id}/analytics`, { headers: alice.auth });
    expect(r.status).toBe(200);
    expect(r.json.count).toBe(1);
  });
});
