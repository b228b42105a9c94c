import { z } from "zod";
import { atLeastOne, body, isObject, text, type BodyRule } from "../../lib/input";
import { httpUrl } from "../../lib/urls";
import { slugSchema, strictNumber } from "../links";
import { msQuery } from "../analytics";
import { BUTTON_STYLES, COLOR_KEYS, COLOR_RE, contrastProblems, MAX_SOCIALS, resolvePalette, SOCIAL_PLATFORMS, THEMES, type Theme } from "./look";

export const TITLE_MAX = 100;
export const BIO_MAX = 300;
export const ITEM_TITLE_MAX = 100;
export const TEXT_ITEM_MAX = 500;
export const ITEM_KINDS = ["link", "heading", "text"] as const;
export type ItemKind = (typeof ITEM_KINDS)[number];

const title = text().min(1, `must be 1-${TITLE_MAX} characters`).max(TITLE_MAX, `must be 1-${TITLE_MAX} characters`);
const bio = text().max(BIO_MAX, `at most ${BIO_MAX} characters`);
/** A text item's title holds up to 500 characters; the other kinds' stay at 100 (a rule checks which). */
const anyItemTitle = text()
  .min(1, `must be 1-${ITEM_TITLE_MAX} characters (a text item: 1-${TEXT_ITEM_MAX})`)
  .max(TEXT_ITEM_MAX, `at most ${TEXT_ITEM_MAX} characters`);
// Any integer: out-of-range positions are clamped to the list, never refused.
const position = strictNumber(z.number().int("must be an integer").min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER));
const active = strictNumber(z.boolean());
const published = strictNumber(z.boolean());

/** Linktree and item ids are opaque: any text is accepted and an unknown one is 404. */
const anyId = text();

const oneOf = <T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values as unknown as [T[number], ...T[number][]], { errorMap: () => ({ message: `must be one of ${values.join(", ")}` }) });

export const themeSchema = oneOf(THEMES).describe("The page's look: light (the default), dark, bold, soft or minimal. null: light.");
const color = text().regex(COLOR_RE, "must be a colour as #rrggbb").toLowerCase();
export const colorsSchema = z
  .object(Object.fromEntries(COLOR_KEYS.map((k) => [k, color.optional()])) as Record<(typeof COLOR_KEYS)[number], z.ZodOptional<typeof color>>)
  .strict()
  .describe(
    "Colours as #rrggbb, any of background, text, button and button_text, each overriding the theme's. text on background and button_text on button must have a contrast ratio of at least 4.5. null or {}: the theme's own.",
  );
export const buttonStyleSchema = oneOf(BUTTON_STYLES).describe("The buttons' shape: rounded (the default), square, pill or outline.");

const socialUrl = text().max(4096, "at most 4096 characters");
export const socialsSchema = z
  .array(z.object({ platform: oneOf(SOCIAL_PLATFORMS), url: socialUrl }).strict())
  .max(MAX_SOCIALS, `at most ${MAX_SOCIALS} socials`)
  .superRefine((list, ctx) => {
    list.forEach((s, i) => {
      const problem = socialUrlProblem(s.platform, s.url);
      if (problem) ctx.addIssue({ code: "custom", path: [i, "url"], message: problem });
    });
  })
  .describe("Up to 12 {platform, url}, shown as a row of labelled icons. email takes a mailto: URL, every other platform an http(s) URL. null or []: none.");

/** Why `url` cannot be the address of a social profile on `platform`, or null when it can. */
export function socialUrlProblem(platform: string, url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return platform === "email" ? "must be a mailto: URL" : "must be an absolute http or https URL";
  }
  if (platform === "email") return u.protocol === "mailto:" && u.pathname.includes("@") ? null : "must be a mailto: URL with an address";
  return (u.protocol === "http:" || u.protocol === "https:") && u.hostname && !/\s/.test(url) ? null : "must be an absolute http or https URL";
}

export const linktreeDomainSchema = text()
  .max(253, "must be the name of a verified domain of this workspace, at most 253 characters")
  .describe("A verified domain of the workspace: the page is then served at <domain>/<slug>, in that domain's namespace. null: the default redirect domain.");

/**
 * On create, the resulting colours are known from the body alone: the contrast rule runs with the
 * schema, so its failure is listed with the others. A PATCH's result also depends on what is stored
 * (the service checks it).
 */
const contrastRule: BodyRule = (b, fail) => {
  const theme = typeof b.theme === "string" && (THEMES as readonly string[]).includes(b.theme) ? (b.theme as Theme) : null;
  if (b.colors !== undefined && b.colors !== null && !isObject(b.colors)) return;
  const colors = isObject(b.colors) ? b.colors : {};
  if (!Object.values(colors).every((c) => typeof c === "string" && COLOR_RE.test(c))) return;
  for (const problem of contrastProblems(resolvePalette(theme, colors as Record<string, string>))) fail("colors", problem);
};

// Shapes in the documented field order, which decides the first failing field (lib/input `body`).
export const createLinktreeInput = body(
  {
    slug: slugSchema,
    title,
    bio: bio.nullable().optional(),
    avatar_url: httpUrl.nullable().optional(),
    theme: themeSchema.nullable().optional(),
    colors: colorsSchema.nullable().optional(),
    button_style: buttonStyleSchema.nullable().optional(),
    socials: socialsSchema.nullable().optional(),
    domain: linktreeDomainSchema.nullable().optional(),
  },
  contrastRule,
);
export type CreateLinktreeInput = z.output<typeof createLinktreeInput>;

export const updateLinktreeInput = body(
  {
    id: anyId,
    slug: slugSchema.optional(),
    title: title.optional(),
    bio: bio.nullable().optional(),
    avatar_url: httpUrl.nullable().optional(),
    published: published.optional(),
    theme: themeSchema.nullable().optional(),
    colors: colorsSchema.nullable().optional(),
    button_style: buttonStyleSchema.nullable().optional(),
    socials: socialsSchema.nullable().optional(),
    domain: linktreeDomainSchema.nullable().optional(),
  },
  atLeastOne("id"),
);
export type UpdateLinktreeInput = z.output<typeof updateLinktreeInput>;

export const linktreeIdInput = z.object({ id: anyId });

const kind = oneOf(ITEM_KINDS).describe(
  "link (the default): a button to `url` through its own short link. heading: a section title, `title` only. text: up to 500 characters of plain text in `title`, no url.",
);
const instant = strictNumber(z.number().int("must be an integer (ms epoch)").min(0, "must be a ms epoch").max(Number.MAX_SAFE_INTEGER));
const startsAt = instant.describe("Shown on the public page from this instant (ms epoch) on; null: no start.");
const endsAt = instant.describe("Shown on the public page until this instant (ms epoch, exclusive); null: no end.");

/** The item's kind in the body, when it is a known one. */
const kindIn = (b: Record<string, unknown>): ItemKind | undefined =>
  typeof b.kind === "string" && (ITEM_KINDS as readonly string[]).includes(b.kind) ? (b.kind as ItemKind) : undefined;

export const titleLimit = (k: ItemKind) => (k === "text" ? TEXT_ITEM_MAX : ITEM_TITLE_MAX);
export const NO_URL_MESSAGE = (k: ItemKind) => `a ${k} item has no url`;
export const WINDOW_MESSAGE = "must be after starts_at";

/** What the body alone says about its kind, title, url and window; `create` knows absent members are none. */
const itemRules =
  (create: boolean): BodyRule =>
  (b, fail) => {
    // An unknown kind is the schema's failure alone: nothing more is said about the other members.
    const k = b.kind === undefined ? (create ? "link" : undefined) : kindIn(b);
    if (k && typeof b.title === "string" && [...b.title].length > titleLimit(k) && [...b.title].length <= TEXT_ITEM_MAX)
      fail("title", `must be 1-${titleLimit(k)} characters for a ${k} item`);
    // null is no url: what a heading or text has, and what a link cannot have.
    if (k && k !== "link" && b.url !== undefined && b.url !== null) fail("url", NO_URL_MESSAGE(k));
    if (k === "link" && (b.url === null || (create && b.url === undefined))) fail("url", "a link item needs a url");
    if (typeof b.starts_at === "number" && typeof b.ends_at === "number" && b.ends_at <= b.starts_at) fail("ends_at", WINDOW_MESSAGE);
  };

export const createItemInput = body(
  {
    id: anyId,
    title: anyItemTitle,
    url: httpUrl.nullable().optional(),
    position: position.optional(),
    kind: kind.optional(),
    starts_at: startsAt.nullable().optional(),
    ends_at: endsAt.nullable().optional(),
  },
  itemRules(true),
);
export type CreateItemInput = z.output<typeof createItemInput>;

export const updateItemInput = body(
  {
    id: anyId,
    itemId: anyId,
    title: anyItemTitle.optional(),
    url: httpUrl.nullable().optional(),
    position: position.optional(),
    active: active.optional(),
    kind: kind.optional(),
    starts_at: startsAt.nullable().optional(),
    ends_at: endsAt.nullable().optional(),
  },
  atLeastOne("id", "itemId"),
  itemRules(false),
);
export type UpdateItemInput = z.output<typeof updateItemInput>;

export const itemIdInput = z.object({ id: anyId, itemId: anyId });

export const reorderItemsInput = z
  .object({
    id: anyId,
    itemIds: z.array(text()).max(10_000),
  })
  .strict();

// Query bounds: the same rule as the other analytics endpoints; unrelated query parameters are ignored.
export const analyticsInput = z.object({ id: anyId, from: msQuery.optional(), to: msQuery.optional() });
export type AnalyticsInput = z.output<typeof analyticsInput>;

/** The page by its own link record, which the redirect host found in the namespace of the visited domain. */
export const publicPageInput = z.object({ link_id: text().max(200) });

const colorsOutput = z.object(
  Object.fromEntries(COLOR_KEYS.map((k) => [k, z.string().optional()])) as Record<(typeof COLOR_KEYS)[number], z.ZodOptional<z.ZodString>>,
);
const socialOutput = z.object({ platform: z.enum(SOCIAL_PLATFORMS), url: z.string() });

// The look members appear only when set, so a linktree made without them reads as it always did.
export const linktreeOutput = z.object({
  id: z.string(),
  slug: z.string(),
  title: z.string(),
  bio: z.string().nullable(),
  avatar_url: z.string().url().nullable(),
  published: z.boolean(),
  theme: z.enum(THEMES).optional(),
  colors: colorsOutput.optional(),
  button_style: z.enum(BUTTON_STYLES).optional(),
  socials: z.array(socialOutput).optional(),
  domain: z.string().optional(),
  created_at: z.number().int(),
  updated_at: z.number().int(),
});
export type LinktreeDto = z.infer<typeof linktreeOutput>;

// `kind` appears for headings and text only, `url`/`short_url` for links only, the window when set.
export const itemOutput = z.object({
  id: z.string(),
  title: z.string(),
  url: z.string().url().optional(),
  short_url: z.string().url().optional(),
  position: z.number().int(),
  active: z.boolean(),
  kind: z.enum(["heading", "text"]).optional(),
  starts_at: z.number().int().optional(),
  ends_at: z.number().int().optional(),
  created_at: z.number().int(),
  updated_at: z.number().int(),
});
export type ItemDto = z.infer<typeof itemOutput>;

export const linktreeDetailOutput = linktreeOutput.extend({ items: z.array(itemOutput) });
export type LinktreeDetailDto = z.infer<typeof linktreeDetailOutput>;

export const analyticsOutput = z.object({
  id: z.string(),
  slug: z.string(),
  title: z.string(),
  published: z.boolean(),
  views: z.number().int(),
  clicks: z.number().int(),
  items: z.array(
    z.object({
      id: z.string(),
      title: z.string(),
      short_url: z.string().url().nullable(),
      active: z.boolean(),
      count: z.number().int(),
    }),
  ),
});
export type LinktreeAnalyticsDto = z.infer<typeof analyticsOutput>;

/** What the public page shows: published data only, active items in order. */
export const publicPageOutput = z.object({
  slug: z.string(),
  title: z.string(),
  bio: z.string().nullable(),
  avatar_url: z.string().nullable(),
  url: z.string(),
  /** The generated share-card image (1200×630 PNG). */
  og_image: z.string(),
  /** null: the page as it always was (light, following the visitor's dark mode). */
  theme: z.enum(THEMES).nullable(),
  palette: z.object({ background: z.string(), text: z.string(), button: z.string(), button_text: z.string() }),
  button_style: z.enum(BUTTON_STYLES),
  socials: z.array(z.object({ platform: z.enum(SOCIAL_PLATFORMS), label: z.string(), url: z.string() })),
  items: z.array(
    z.discriminatedUnion("kind", [
      z.object({ kind: z.literal("link"), id: z.string(), title: z.string(), short_url: z.string() }),
      z.object({ kind: z.literal("heading"), id: z.string(), title: z.string() }),
      z.object({ kind: z.literal("text"), id: z.string(), title: z.string() }),
    ]),
  ),
  /** When a scheduled item next appears or disappears (ms), null when none will: a kept copy of the page lasts until then. */
  changes_at: z.number().int().nullable(),
});
export type PublicPageDto = z.infer<typeof publicPageOutput>;
