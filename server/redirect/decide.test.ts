import { describe, expect, it } from "vitest";
import { decide, forwardQuery, needsCountry, needsVariantPoint, pickVariant, type LinkSnapshot, type VisitorFacts } from "./decide";

const NOW = 1_750_000_000_000;
const link = (over: Partial<LinkSnapshot> = {}): LinkSnapshot => ({
  url: "https://dest.example/",
  expiresAt: null,
  expirationUrl: null,
  targeting: null,
  passwordHash: null,
  ogTitle: null,
  ogDescription: null,
  ogImage: null,
  ...over,
});
const person: VisitorFacts = { os: null, country: null, socialCrawler: false };
const iphone: VisitorFacts = { os: "ios", country: "BR", socialCrawler: false };
const android: VisitorFacts = { os: "android", country: "BR", socialCrawler: false };
const inBrazil: VisitorFacts = { os: null, country: "BR", socialCrawler: false };
const crawler: VisitorFacts = { os: null, country: null, socialCrawler: true };
const expired = { expiresAt: NOW - 1 };
const targeting = { ios: "https://ios.example/", android: "https://android.example/", geo: { BR: "https://br.example/" } };
const card = { ogTitle: "Title" };

// One row per situation of the redirect rules: expiry, targeting, share cards, passwords.
const rows: [string, Partial<LinkSnapshot>, VisitorFacts, ReturnType<typeof decide>][] = [
  [
    "expired and expiration_url set → 302 to expiration_url",
    { ...expired, expirationUrl: "https://gone.example/" },
    person,
    { kind: "redirect", status: 302, location: "https://gone.example/", rule: "expiration_url" },
  ],
  ["expired and expiration_url unset → 404", expired, person, { kind: "expired", rule: "expired_404" }],
  [
    "not expired, targeting matches the system (iOS) → ios destination",
    { targeting },
    iphone,
    { kind: "redirect", status: 301, location: "https://ios.example/", rule: "ios" },
  ],
  [
    "not expired, targeting matches the system (Android) → android destination",
    { targeting },
    android,
    { kind: "redirect", status: 301, location: "https://android.example/", rule: "android" },
  ],
  [
    "not matched by system, country matches geo → country's destination",
    { targeting },
    inBrazil,
    { kind: "redirect", status: 301, location: "https://br.example/", rule: "geo" },
  ],
  [
    "matches no targeting rule → url",
    { targeting },
    { os: null, country: "DE", socialCrawler: false },
    { kind: "redirect", status: 301, location: "https://dest.example/", rule: "url" },
  ],
  ["og_ field set and social preview crawler → share card", card, crawler, { kind: "card" }],
  [
    "og_ field set and anyone else (incl. search crawlers) → 301",
    card,
    person,
    { kind: "redirect", status: 301, location: "https://dest.example/", rule: "url" },
  ],
  ["no og_ field set → 301, also for a social crawler", {}, crawler, { kind: "redirect", status: 301, location: "https://dest.example/", rule: "url" }],
  ["password: people see the form", { passwordHash: "scrypt$…" }, person, { kind: "password_form" }],
  ["password: crawlers see the card", { passwordHash: "scrypt$…", ogDescription: "d" }, crawler, { kind: "card" }],
];

describe("decide: the redirect rules, one situation a row", () => {
  it.each(rows)("%s", (_name, over, visitor, expected) => {
    expect(decide(link(over), visitor, NOW)).toEqual(expected);
  });
});

describe("decide: the table's rules", () => {
  it("the operating-system rule wins over the country rule", () => {
    expect(decide(link({ targeting }), iphone, NOW)).toMatchObject({ rule: "ios" });
  });
  it("an OS without its own destination falls through to geo", () => {
    expect(decide(link({ targeting: { android: "https://a.example/", geo: { BR: "https://br.example/" } } }), iphone, NOW)).toMatchObject({ rule: "geo" });
  });
  it("an expired link ignores targeting and share cards", () => {
    const l = link({ ...expired, targeting, ...card, expirationUrl: "https://gone.example/" });
    expect(decide(l, iphone, NOW)).toMatchObject({ rule: "expiration_url", status: 302 });
    expect(decide(l, crawler, NOW)).toMatchObject({ rule: "expiration_url" });
  });
  it("expiry is evaluated per request: the instant expires_at is reached the link is expired", () => {
    const l = link({ expiresAt: NOW });
    expect(decide(l, person, NOW - 1)).toMatchObject({ kind: "redirect", rule: "url" });
    expect(decide(l, person, NOW)).toEqual({ kind: "expired", rule: "expired_404" });
  });
  it("a password that passed redirects with 302 applying targeting", () => {
    expect(decide(link({ passwordHash: "h", targeting }), android, NOW, { passwordPassed: true })).toEqual({
      kind: "redirect",
      status: 302,
      location: "https://android.example/",
      rule: "android",
    });
  });
  it("an expired link with a password shows the form first (to crawlers too: no card), then the expiry answer", () => {
    const l = link({ ...expired, passwordHash: "h", ...card, expirationUrl: "https://gone.example/" });
    expect(decide(l, person, NOW)).toEqual({ kind: "password_form" });
    expect(decide(l, crawler, NOW)).toEqual({ kind: "password_form" });
    expect(decide(l, iphone, NOW, { passwordPassed: true })).toEqual({
      kind: "redirect",
      status: 302,
      location: "https://gone.example/",
      rule: "expiration_url",
    });
    expect(decide(link({ ...expired, passwordHash: "h" }), person, NOW, { passwordPassed: true })).toEqual({ kind: "expired", rule: "expired_404" });
  });
  it("country codes match case-insensitively", () => {
    expect(decide(link({ targeting }), { os: null, country: "br", socialCrawler: false }, NOW)).toMatchObject({ rule: "geo" });
  });
  it("the country is only needed for live links with geo targeting", () => {
    expect(needsCountry(link({ targeting }), NOW)).toBe(true);
    expect(needsCountry(link({ targeting: { ios: "https://i.example/" } }), NOW)).toBe(false);
    expect(needsCountry(link({ targeting, ...expired }), NOW)).toBe(false);
  });
});

describe("decide: languages, variants and query forwarding", () => {
  const languages = { de: "https://de.example/", pt: "https://pt.example/" };
  const variants = [
    { url: "https://dest.example/", weight: 70 },
    { url: "https://b.example/", weight: 30 },
  ];
  it("the first of the visitor's languages with a rule decides; none: url", () => {
    const l = link({ targeting: { languages } });
    expect(decide(l, { ...person, languages: ["fr", "pt", "de"] }, NOW)).toMatchObject({ location: "https://pt.example/", rule: "language", status: 301 });
    expect(decide(l, { ...person, languages: ["fr"] }, NOW)).toMatchObject({ location: "https://dest.example/", rule: "url" });
    expect(decide(l, { ...person, languages: ["constructor"] }, NOW)).toMatchObject({ rule: "url" });
  });
  it("country beats language, language beats variants", () => {
    const l = link({ targeting: { ...targeting, languages }, variants });
    expect(decide(l, { ...inBrazil, languages: ["de"] }, NOW)).toMatchObject({ rule: "geo" });
    expect(decide(l, { ...person, languages: ["de"] }, NOW)).toMatchObject({ rule: "language" });
    expect(decide(l, { ...person, languages: ["fr"], variantPoint: 80 }, NOW)).toEqual({
      kind: "redirect",
      status: 301,
      location: "https://b.example/",
      rule: "variant",
      variant: 1,
    });
  });
  it("variant weights are consecutive shares of 0-100", () => {
    expect(pickVariant(variants, 0)).toBe(0);
    expect(pickVariant(variants, 69.99)).toBe(0);
    expect(pickVariant(variants, 70)).toBe(1);
    expect(pickVariant(variants, 99.999)).toBe(1);
  });
  it("the variant point is needed only for live links with variants", () => {
    expect(needsVariantPoint(link({ variants }), NOW)).toBe(true);
    expect(needsVariantPoint(link({ variants, ...expired }), NOW)).toBe(false);
    expect(needsVariantPoint(link(), NOW)).toBe(false);
  });
  it.each([
    ["https://d.example/", "a=1&b=2", "https://d.example/?a=1&b=2"],
    ["https://d.example/?", "a=1", "https://d.example/?a=1"],
    ["https://d.example/?a=keep", "a=1&c=3", "https://d.example/?a=keep&c=3"],
    ["https://d.example/p#frag", "a=1", "https://d.example/p?a=1#frag"],
    ["https://d.example/", "qr=1", "https://d.example/"],
    ["https://d.example/", "qr=0&x", "https://d.example/?x"],
    ["https://d.example/?a%20b=1", "a+b=2&c=%zz", "https://d.example/?a%20b=1&c=%zz"],
    ["https://d.example/", "", "https://d.example/"],
    ["https://d.example/", "a=1&&b=2&", "https://d.example/?a=1&b=2"],
    ["https://d.example/", "a=1&qr", "https://d.example/?a=1"],
    ["https://d.example/", "a=1&q%72=1", "https://d.example/?a=1"],
    ["https://d.example/", "qrx=1&xqr=2", "https://d.example/?qrx=1&xqr=2"],
    ["https://d.example/?a=1", "a=2&a=3&b=1&b=2", "https://d.example/?a=1&b=1&b=2"],
    [
      `https://d.example/?${Array.from({ length: 20 }, (_, i) => `n${i}=x`).join("&")}`,
      "n19=y&n20=y",
      `https://d.example/?${Array.from({ length: 20 }, (_, i) => `n${i}=x`).join("&")}&n20=y`,
    ],
  ])("forwardQuery(%s, %s) → %s", (location, query, expected) => {
    expect(forwardQuery(location, query)).toBe(expected);
  });
  it("forwarding is off unless the link asks for it", () => {
    expect(decide(link(), { ...person, query: "a=1" }, NOW)).toMatchObject({ location: "https://dest.example/" });
    expect(decide(link({ forwardQuery: true }), { ...person, query: "a=1" }, NOW)).toMatchObject({ location: "https://dest.example/?a=1" });
  });
});
