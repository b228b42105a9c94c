import type { LinkDto } from "../../server/routers/links/links.schema";
import { normalizeTags, splitTags } from "../../server/domain/tags";

/** What the link form shows: strings as typed, so a failed save keeps every value. */
export type LinkFormValues = {
  url: string;
  slug: string;
  /** The link's label for people (never the share card's title). */
  title: string;
  /** The branded domain chosen ("" = the default redirect domain); null: as the link is (the form works it out). */
  domain: string | null;
  tags: string;
  expires_at_local: string;
  tz_offset: string;
  expiration_url: string;
  ios: string;
  android: string;
  geo: { country: string; url: string }[];
  /** Language rules: primary subtag (de, pt) and destination. */
  languages: { language: string; url: string }[];
  /** A/B variants as typed (weights as strings); none: no test. */
  variants: { url: string; weight: string }[];
  forward_query: boolean;
  archived: boolean;
  password: string;
  password_clear: boolean;
  og_title: string;
  og_description: string;
  og_image: string;
  utm: Record<UtmKey, string>;
};

export const UTM_KEYS = ["utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content"] as const;
export type UtmKey = (typeof UTM_KEYS)[number];
const emptyUtm = () => Object.fromEntries(UTM_KEYS.map((k) => [k, ""])) as Record<UtmKey, string>;

export function valuesFromLink(link: LinkDto | null): LinkFormValues {
  return {
    url: link?.url ?? "",
    slug: link?.slug ?? "",
    title: link?.title ?? "",
    domain: null,
    tags: link?.tags.join(", ") ?? "",
    // Rendered in UTC; the browser re-renders it in local time and sets tz_offset.
    expires_at_local: link?.expires_at ? new Date(link.expires_at).toISOString().slice(0, 16) : "",
    tz_offset: "0",
    expiration_url: link?.expiration_url ?? "",
    ios: link?.targeting?.ios ?? "",
    android: link?.targeting?.android ?? "",
    geo: Object.entries(link?.targeting?.geo ?? {}).map(([country, url]) => ({ country, url })),
    languages: Object.entries(link?.targeting?.languages ?? {}).map(([language, url]) => ({ language, url })),
    variants: (link?.variants ?? []).map((v) => ({ url: v.url, weight: String(v.weight) })),
    forward_query: link?.forward_query ?? false,
    archived: link?.archived ?? false,
    password: "",
    password_clear: false,
    og_title: link?.og_title ?? "",
    og_description: link?.og_description ?? "",
    og_image: link?.og_image ?? "",
    utm: emptyUtm(),
  };
}

/** Rows of two repeated fields, left out when both are empty. */
function pairs(form: FormData, a: string, b: string): [string, string][] {
  const as = form.getAll(a).map(String);
  const bs = form.getAll(b).map(String);
  return as.map((x, i): [string, string] => [x, bs[i] ?? ""]).filter(([x, y]) => x.trim() || y.trim());
}

export function valuesFromForm(form: FormData): LinkFormValues {
  const s = (k: string) => String(form.get(k) ?? "");
  const countries = form.getAll("geo_country").map(String);
  const urls = form.getAll("geo_url").map(String);
  // What a person typed, as it will be saved: so a form shown again after a failed save shows the result.
  return {
    url: withScheme(s("url")),
    slug: s("slug").trim(),
    title: s("title").trim(),
    // Absent when the workspace has no verified domain (the picker is not shown).
    domain: form.has("domain") ? s("domain") : null,
    tags: parseTags(s("tags")).join(", "),
    expires_at_local: s("expires_at_local"),
    tz_offset: s("tz_offset") || "0",
    expiration_url: withScheme(s("expiration_url")),
    ios: withScheme(s("ios")),
    android: withScheme(s("android")),
    geo: countries.map((country, i) => ({ country, url: withScheme(urls[i] ?? "") })).filter((g) => g.country || g.url),
    languages: pairs(form, "lang_code", "lang_url").map(([language, url]) => ({ language: language.trim().toLowerCase(), url: withScheme(url) })),
    variants: pairs(form, "variant_url", "variant_weight").map(([url, weight]) => ({ url: withScheme(url), weight: weight.trim() })),
    forward_query: form.get("forward_query") === "on",
    archived: form.get("archived") === "on",
    password: s("password"),
    password_clear: form.get("password_clear") === "on",
    og_title: s("og_title"),
    og_description: s("og_description"),
    og_image: withScheme(s("og_image")),
    utm: Object.fromEntries(UTM_KEYS.map((k) => [k, s(k).trim()])) as Record<UtmKey, string>,
  };
}

/** Writes the UTM builder's parameters into the destination URL (they are part of `url`, not fields of their own). */
export function withUtm(url: string, utm: Partial<Record<UtmKey, string>>): string {
  const set = UTM_KEYS.filter((k) => utm[k]);
  if (!set.length) return url;
  try {
    const u = new URL(url);
    for (const k of set) u.searchParams.set(k, utm[k]!);
    return u.toString();
  } catch {
    return url; // the API names the invalid url
  }
}

/**
 * The tags a person typed, separated by commas, in the tag alphabet ("Campaign, Q4 Push" →
 * campaign, q4-push): the importers' normalisation (./tags), so every door agrees.
 */
export const parseTags = (typed: string) => normalizeTags(splitTags(typed));

/**
 * A web address as people type it, with its scheme: `example.com/x` is `https://example.com/x`.
 * One that has a scheme (or is empty) is left as it is; the API names anything still wrong.
 */
export function withScheme(typed: string): string {
  const v = typed.trim();
  if (!v || /^[a-z][a-z0-9+.-]*:\/\//i.test(v) || /^(mailto|tel|data|javascript):/i.test(v)) return v;
  return `https://${v.replace(/^\/+/, "")}`;
}

/**
 * The form's expiry is a datetime-local wall time plus `tz_offset`, the minutes its zone is behind
 * UTC at that time (Date#getTimezoneOffset's sign). The server renders stored expiries in UTC with
 * offset 0, and a form sent without JavaScript has no tz_offset: both mean UTC.
 */
/** ms epoch from a datetime-local value typed in a zone `offset` minutes behind UTC. */
export function expiryFromLocal(local: string, offset: string): number | null {
  if (!local) return null;
  const utc = Date.parse(`${local.length === 16 ? local + ":00" : local}Z`);
  if (Number.isNaN(utc)) return NaN;
  return utc + (Number(offset) || 0) * 60_000;
}

/** Browser only: the datetime-local value (to the minute) of the instant `ms` in this browser's zone. */
export function localInputOf(ms: number): string {
  const d = new Date(ms);
  const p = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${p(d.getFullYear(), 4)}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/**
 * Browser only: the tz_offset under which the server reads `local` as the instant this browser
 * reads it as: the offset of that date (summer or winter time), not today's.
 */
export function browserOffset(local: string): string {
  const asLocal = new Date(local).getTime(); // a date-time without offset is local time
  const asUtc = Date.parse(`${local.length === 16 ? local + ":00" : local}Z`);
  if (!local || Number.isNaN(asLocal) || Number.isNaN(asUtc)) return String(new Date().getTimezoneOffset());
  return String(Math.round((asLocal - asUtc) / 60_000));
}

type Targeting = { geo?: Record<string, string>; ios?: string; android?: string; languages?: Record<string, string> };
export function targetingFrom(v: LinkFormValues): Targeting | null {
  const t: Targeting = {};
  if (v.ios) t.ios = v.ios;
  if (v.android) t.android = v.android;
  const geo = v.geo.filter((g) => g.country || g.url);
  if (geo.length) t.geo = Object.fromEntries(geo.map((g) => [g.country, g.url]));
  const languages = v.languages.filter((l) => l.language || l.url);
  if (languages.length) t.languages = Object.fromEntries(languages.map((l) => [l.language, l.url]));
  return Object.keys(t).length ? t : null;
}

/** The variants as the API takes them (weights as numbers; one that is not a number is sent as typed, for the API to name); none: null. */
export function variantsFrom(v: LinkFormValues): { url: string; weight: number | string }[] | null {
  if (!v.variants.length) return null;
  return v.variants.map((x) => ({ url: x.url, weight: /^\d+$/.test(x.weight) ? Number(x.weight) : x.weight }));
}
