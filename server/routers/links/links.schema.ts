import { z } from "zod";
import { COUNTRY_CODES } from "../../domain/countries";
import { LINK_ID_RE } from "../../lib/ids";
import { atLeastOne, body, isObject, text, type BodyRule } from "../../lib/input";
import { tagProblem, TAG_RE, TAG_RULE } from "../../domain/tags";
import { httpUrl, normalizeUrl } from "../../lib/urls";

export const SLUG_RE = /^[0-9a-z-]{1,50}$/;
export { TAG_RE };
export const MAX_TAGS = 10;
export const MAX_GEO_RULES = 50;
export const MAX_LANGUAGE_RULES = 20;
export const MIN_VARIANTS = 2;
export const MAX_VARIANTS = 5;

// trpc-openapi 1.2 turns on coercion of top-level number/boolean members on the first REST call
// (docs/decisions/001-trpc-openapi-behind-one-adapter.md). A preprocess step hides them from it, so `"123"` or `true` stay type errors.
export const strictNumber = <T extends z.ZodTypeAny>(s: T) => z.preprocess((v) => v, s) as unknown as T;

export const slugSchema = text().regex(SLUG_RE, "must be 1-50 characters of 0-9, a-z and -");
export const linkIdSchema = text().regex(LINK_ID_RE, "must be 8 characters of 0-9 and a-z");

const tagItems = z.array(text().regex(TAG_RE, `each tag must be ${TAG_RULE}`));
/**
 * Each tag outside the alphabet is refused by name (`"Q4 Push" is not a tag…`), not by its index in
 * the array; the items keep their pattern for /openapi.json (a preprocess step is transparent there).
 */
export const tagsSchema = (
  z.preprocess((v, ctx) => {
    if (!Array.isArray(v)) return v;
    const bad = new Set(v.filter((t): t is string => typeof t === "string" && tagProblem(t) !== null));
    for (const tag of bad) ctx.addIssue({ code: "custom", message: tagProblem(tag)! });
    return bad.size ? v.filter((t) => !bad.has(t)) : v;
  }, tagItems) as unknown as typeof tagItems
)
  .transform((tags) => [...new Set(tags)].sort())
  .refine((tags) => tags.length <= MAX_TAGS, `at most ${MAX_TAGS} tags`);

export const expiresAtSchema = strictNumber(
  z
    .number()
    .int()
    .positive()
    .max(Number.MAX_SAFE_INTEGER)
    .superRefine((v, ctx) => {
      if (v <= Date.now()) ctx.addIssue({ code: "custom", message: "must be in the future", params: { code: "EXPIRES_AT_IN_THE_PAST" } });
    }),
);

const countryKey = (k: string) => k.toUpperCase();
const languageKey = (k: string) => k.toLowerCase();
/** A primary language subtag (ISO 639: 2 or 3 letters), compared in lower case. */
const LANGUAGE_RE = /^[a-z]{2,3}$/;

export const targetingSchema = z
  .object({
    geo: z.record(text(), httpUrl).optional(),
    ios: httpUrl.optional(),
    android: httpUrl.optional(),
    languages: z
      .record(text(), httpUrl)
      .describe(
        `Primary language subtag (\`de\`, \`pt\`; lower-cased on write) to destination, matched against the visitor's Accept-Language in its order of preference. At most ${MAX_LANGUAGE_RULES}.`,
      )
      .optional(),
  })
  .strict()
  .superRefine((t, ctx) => {
    const langs = Object.keys(t.languages ?? {});
    if (langs.length > MAX_LANGUAGE_RULES) {
      ctx.addIssue({ code: "custom", path: ["languages"], message: `at most ${MAX_LANGUAGE_RULES} languages`, params: { code: "TOO_MANY_RULES" } });
    }
    const seenLangs = new Set<string>();
    for (const k of langs) {
      if (!LANGUAGE_RE.test(languageKey(k)))
        ctx.addIssue({ code: "custom", path: ["languages", k], message: "not a primary language subtag (2 or 3 letters, such as de or pt)" });
      else if (seenLangs.has(languageKey(k))) ctx.addIssue({ code: "custom", path: ["languages", k], message: "language given twice" });
      seenLangs.add(languageKey(k));
    }
    const keys = Object.keys(t.geo ?? {});
    if (keys.length > MAX_GEO_RULES) {
      ctx.addIssue({ code: "custom", path: ["geo"], message: `at most ${MAX_GEO_RULES} countries`, params: { code: "TOO_MANY_RULES" } });
    }
    const seen = new Set<string>();
    for (const k of keys) {
      if (!COUNTRY_CODES.has(countryKey(k))) ctx.addIssue({ code: "custom", path: ["geo", k], message: "not an ISO 3166-1 alpha-2 country code" });
      else if (seen.has(countryKey(k))) ctx.addIssue({ code: "custom", path: ["geo", k], message: "country given twice" });
      seen.add(countryKey(k));
    }
  })
  .transform((t) => {
    const geo = Object.fromEntries(Object.entries(t.geo ?? {}).map(([k, v]) => [countryKey(k), v]));
    const languages = Object.fromEntries(Object.entries(t.languages ?? {}).map(([k, v]) => [languageKey(k), v]));
    const out: { geo?: Record<string, string>; ios?: string; android?: string; languages?: Record<string, string> } = {};
    if (Object.keys(geo).length) out.geo = geo;
    if (t.ios) out.ios = t.ios;
    if (t.android) out.android = t.android;
    if (Object.keys(languages).length) out.languages = languages;
    // All members absent or empty: stored as null, never as {}.
    return Object.keys(out).length ? out : null;
  });

/** A verified branded domain of the workspace by name; null is the default redirect domain. */
export const linkDomainSchema = text().max(253, "must be the name of a verified domain of this workspace, at most 253 characters").nullable();

export const passwordSchema = text().min(4, "must be 4-200 characters").max(200, "must be 4-200 characters");
const ogTitle = text().max(120, "at most 120 characters");
const ogDescription = text().max(240, "at most 240 characters");
export const MAX_TITLE = 200;
/** A label for people in the dashboard's list, search and exports; share cards use `og_title`, never this. */
const TITLE_DOC = "A label for people: the dashboard's list, search and exports. Never used for share cards (og_title is).";
export const titleSchema = text().max(MAX_TITLE, `at most ${MAX_TITLE} characters`).describe(TITLE_DOC);

export const FORWARD_QUERY_DOC =
  "When true, the visitor's query string is added to the chosen destination; a name the destination already has keeps its value, and `qr` is never passed on.";
export const forwardQuerySchema = strictNumber(z.boolean()).describe(FORWARD_QUERY_DOC);

const VARIANTS_DOC =
  `A/B test: ${MIN_VARIANTS}-${MAX_VARIANTS} destinations with integer weights (1-100, summing to 100) for visits no targeting rule catches; ` +
  "a visitor keeps the same variant for the day. `url` must be one of them. null removes them.";
export const variantsSchema = z
  .array(z.object({ url: httpUrl, weight: strictNumber(z.number().int().min(1, "must be 1-100").max(100, "must be 1-100")) }).strict())
  .min(MIN_VARIANTS, `${MIN_VARIANTS} to ${MAX_VARIANTS} variants`)
  .max(MAX_VARIANTS, `${MIN_VARIANTS} to ${MAX_VARIANTS} variants`)
  .superRefine((vs, ctx) => {
    const sum = vs.reduce((n, v) => n + v.weight, 0);
    if (sum !== 100) ctx.addIssue({ code: "custom", message: `weights must sum to 100 (they sum to ${sum})` });
  })
  .describe(VARIANTS_DOC);

export const ARCHIVED_DOC =
  "true takes the link out of service without deleting it: its slug stays taken and visits answer as for an unknown slug; false puts it back.";
export const archivedSchema = strictNumber(z.boolean()).describe(ARCHIVED_DOC);

// In the documented field order, which decides the first failing field (lib/input `body`).
const linkFields = {
  url: httpUrl,
  slug: slugSchema,
  tags: tagsSchema,
  expires_at: expiresAtSchema,
  expiration_url: httpUrl,
  targeting: targetingSchema.nullable(),
  password: passwordSchema,
  og_title: ogTitle.nullable(),
  og_description: ogDescription.nullable(),
  og_image: httpUrl.nullable(),
  // Our own additions to the documented Link: after its members, so their codes still decide `error`.
  domain: linkDomainSchema,
  title: titleSchema.nullable(),
  forward_query: forwardQuerySchema,
  variants: variantsSchema.nullable(),
  archived: archivedSchema,
};

export const VARIANT_URL_MESSAGE = "url must be one of the variants' URLs";

/** Two URLs as stored (both normalised as `httpUrl` does). */
export const sameUrl = (a: string, b: string) => {
  try {
    return normalizeUrl(a) === normalizeUrl(b);
  } catch {
    return a === b;
  }
};

/**
 * `url` must be one of the variants' URLs when both are in the body (a PATCH sending one of them is
 * checked against the stored other by the service).
 */
const urlAmongVariants: BodyRule = (b, fail) => {
  if (typeof b.url !== "string" || !Array.isArray(b.variants)) return;
  const urls = b.variants.flatMap((v) => (isObject(v) && typeof v.url === "string" ? [v.url] : []));
  if (urls.length === b.variants.length && !urls.some((u) => sameUrl(u, b.url as string))) fail("variants", VARIANT_URL_MESSAGE);
};

/**
 * `expiration_url` needs an expiry in the same body. On create an absent expiry is none; on PATCH only
 * an explicit null is, and the stored one is checked by the service (it needs the link).
 */
const expiryRequired =
  (absentIsNone: boolean): BodyRule =>
  (b, fail) => {
    const none = b.expires_at === null || (absentIsNone && b.expires_at === undefined);
    if (b.expiration_url !== undefined && b.expiration_url !== null && none) {
      fail("expiration_url", "requires expires_at, sent in the same request or already stored", "EXPIRATION_URL_WITHOUT_EXPIRY");
    }
  };

export const createLinkInput = body(
  {
    ...linkFields,
    slug: linkFields.slug.optional(),
    tags: linkFields.tags.optional(),
    expires_at: linkFields.expires_at.optional(),
    expiration_url: linkFields.expiration_url.optional(),
    targeting: linkFields.targeting.optional(),
    password: linkFields.password.optional(),
    og_title: linkFields.og_title.optional(),
    og_description: linkFields.og_description.optional(),
    og_image: linkFields.og_image.optional(),
    domain: linkFields.domain.optional(),
    title: linkFields.title.optional(),
    forward_query: linkFields.forward_query.optional(),
    variants: linkFields.variants.optional(),
    archived: linkFields.archived.optional(),
  },
  expiryRequired(true),
  urlAmongVariants,
);
export type CreateLinkInput = z.output<typeof createLinkInput>;

export const updateLinkInput = body(
  {
    id: linkIdSchema,
    url: linkFields.url.optional(),
    slug: linkFields.slug.optional(),
    tags: linkFields.tags.optional(),
    expires_at: linkFields.expires_at.nullable().optional(),
    expiration_url: linkFields.expiration_url.nullable().optional(),
    targeting: linkFields.targeting.optional(),
    password: linkFields.password.nullable().optional(),
    og_title: linkFields.og_title.optional(),
    og_description: linkFields.og_description.optional(),
    og_image: linkFields.og_image.optional(),
    domain: linkFields.domain.optional(),
    title: linkFields.title.optional(),
    forward_query: linkFields.forward_query.optional(),
    variants: linkFields.variants.optional(),
    archived: linkFields.archived.optional(),
  },
  atLeastOne("id"),
  expiryRequired(false),
  urlAmongVariants,
);
export type UpdateLinkInput = z.output<typeof updateLinkInput>;

export const linkIdInput = z.object({ id: linkIdSchema });

export const targetingOutput = z
  .object({
    geo: z.record(z.string(), z.string()).optional(),
    ios: z.string().optional(),
    android: z.string().optional(),
    languages: z.record(z.string(), z.string()).optional(),
  })
  .nullable();

export const linkOutput = z.object({
  id: z.string(),
  slug: z.string(),
  url: z.string().url(),
  short_url: z.string().url(),
  redirect_domain: z.string(),
  tags: z.array(z.string()),
  expires_at: z.number().int().nullable(),
  expiration_url: z.string().url().nullable(),
  targeting: targetingOutput,
  has_password: z.boolean(),
  og_title: z.string().nullable(),
  og_description: z.string().nullable(),
  og_image: z.string().url().nullable(),
  created_at: z.number().int(),
  updated_at: z.number().int(),
  deleted_at: z.number().int().nullable(),
  /** Only when set: a link made without it reads exactly as before the member existed. */
  title: z.string().describe(`${TITLE_DOC} Present only when set.`).optional(),
  forward_query: z.literal(true).describe(`${FORWARD_QUERY_DOC} Present only when true.`).optional(),
  variants: z
    .array(z.object({ url: z.string().url(), weight: z.number().int() }))
    .describe(`${VARIANTS_DOC} Present only when set.`)
    .optional(),
  archived: z.literal(true).describe(`${ARCHIVED_DOC} Present only when true.`).optional(),
});
export type LinkDto = z.infer<typeof linkOutput>;
