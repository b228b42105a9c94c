import type { LinkDto } from "../../server/routers/links/links.schema";

/** What the link form shows: strings as typed, so a failed save keeps every value. */
export type LinkFormValues = {
  url: string;
  slug: string;
  tags: string;
  expires_at_local: string;
  tz_offset: string;
  expiration_url: string;
  ios: string;
  android: string;
  geo: { country: string; url: string }[];
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
    tags: link?.tags.join(", ") ?? "",
    // Rendered in UTC; the browser re-renders it in local time and sets tz_offset.
    expires_at_local: link?.expires_at ? new Date(link.expires_at).toISOString().slice(0, 16) : "",
    tz_offset: "0",
    expiration_url: link?.expiration_url ?? "",
    ios: link?.targeting?.ios ?? "",
    android: link?.targeting?.android ?? "",
    geo: Object.entries(link?.targeting?.geo ?? {}).map(([country, url]) => ({ country, url })),
    password: "",
    password_clear: false,
    og_title: link?.og_title ?? "",
    og_description: link?.og_description ?? "",
    og_image: link?.og_image ?? "",
    utm: emptyUtm(),
  };
}

export function valuesFromForm(form: FormData): LinkFormValues {
  const s = (k: string) => String(form.get(k) ?? "");
  const countries = form.getAll("geo_country").map(String);
  const urls = form.getAll("geo_url").map(String);
  return {
    url: s("url").trim(),
    slug: s("slug").trim(),
    tags: s("tags"),
    expires_at_local: s("expires_at_local"),
    tz_offset: s("tz_offset") || "0",
    expiration_url: s("expiration_url").trim(),
    ios: s("ios").trim(),
    android: s("android").trim(),
    geo: countries.map((country, i) => ({ country, url: (urls[i] ?? "").trim() })).filter((g) => g.country || g.url),
    password: s("password"),
    password_clear: form.get("password_clear") === "on",
    og_title: s("og_title"),
    og_description: s("og_description"),
    og_image: s("og_image").trim(),
    utm: Object.fromEntries(UTM_KEYS.map((k) => [k, s(k).trim()])) as Record<UtmKey, string>,
  };
}

/** Writes the UTM builder's parameters into the destination URL (they are part of `url`, service.md §10). */
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

export const parseTags = (s: string) => s.split(/[\s,]+/).map((t) => t.trim()).filter(Boolean);

/** ms epoch from a datetime-local value typed in a zone `offset` minutes behind UTC (Date#getTimezoneOffset). */
export function expiryFromLocal(local: string, offset: string): number | null {
  if (!local) return null;
  const utc = Date.parse(`${local.length === 16 ? local + ":00" : local}Z`);
  if (Number.isNaN(utc)) return NaN;
  return utc + (Number(offset) || 0) * 60_000;
}

type Targeting = { geo?: Record<string, string>; ios?: string; android?: string };
export function targetingFrom(v: LinkFormValues): Targeting | null {
  const t: Targeting = {};
  if (v.ios) t.ios = v.ios;
  if (v.android) t.android = v.android;
  const geo = v.geo.filter((g) => g.country || g.url);
  if (geo.length) t.geo = Object.fromEntries(geo.map((g) => [g.country, g.url]));
  return Object.keys(t).length ? t : null;
}
