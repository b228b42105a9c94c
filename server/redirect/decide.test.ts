import { describe, expect, it } from "vitest";
import { decide, needsCountry, type LinkSnapshot, type VisitorFacts } from "./decide";

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
