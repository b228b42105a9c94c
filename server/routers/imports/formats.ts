import { unguardCell } from "../../lib/csv";
import { normalizeTags } from "../../domain/tags";

/**
 * The CSV formats an import reads: our own `generic` columns, and the exports of
 * Bitly, Shlink, Kutt and YOURLS, recognised by their header rows. Where each header comes from is
 * in docs/import-formats.md; a small sample of each is in ./fixtures.
 *
 * A format is a default mapping (target field → source column) plus how its cells read: presets
 * take the slug from a short URL's last path segment and lower-case it (the redirect host matches
 * slugs case-insensitively, so the old mixed-case paths keep working), and turn tags into our tag
 * alphabet; `generic` takes every cell as it is, so an export imports back unchanged.
 */

export const IMPORT_FORMATS = ["generic", "bitly", "shlink", "kutt", "yourls"] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/** The fields a column can feed, in the order the dashboard shows them. */
export const MAPPING_FIELDS = [
  "url",
  "slug",
  "domain",
  "title",
  "tags",
  "og_title",
  "og_description",
  "og_image",
  "expires_at",
  "expiration_url",
  "targeting",
  "created_at",
  "has_password",
  "forward_query",
  "variants",
  "archived",
] as const;
export type MappingField = (typeof MAPPING_FIELDS)[number];
/**
 * Target field → the source column's name as the header row spells it. `slug_fallback` is read when
 * the slug column is empty (Bitly: the custom back-half, else the Bitlink itself).
 */
export type Mapping = Partial<Record<MappingField | "slug_fallback", string>>;

export const FORMAT_LABELS: Record<ImportFormat, string> = {
  generic: "Generic CSV (url, slug, domain, title, tags, og_*, expires_at, expiration_url, targeting, created_at): our own export",
  bitly: "Bitly export",
  shlink: "Shlink export",
  kutt: "Kutt links",
  yourls: "YOURLS export",
};

/** Header names compared without case, spaces or punctuation: "Long URL", "long_url" and "longUrl" are one name. */
export const normalizeName = (name: string) => name.toLowerCase().replace(/[^0-9a-z]/g, "");

type Preset = { columns: Partial<Record<MappingField | "slug_fallback", string[]>>; matches(names: Set<string>): boolean };

const PRESETS: Record<ImportFormat, Preset> = {
  // shlinkio/shlink-web-component ExportShortUrlsBtn: createdAt,domain,shortCode,shortUrl,longUrl,title,tags,visits (tags joined by "|").
  shlink: {
    matches: (n) => n.has("longurl") && n.has("shortcode"),
    columns: { url: ["longurl"], slug: ["shortcode", "shorturl"], title: ["title"], tags: ["tags"], created_at: ["createdat", "datecreated"] },
  },
  // Bitly API v4 Bitlink fields (id, link, custom_bitlinks, long_url, title, archived, created_at, tags) and the
  // dashboard's spelled-out names (Long URL, Bitlink, Custom link, Title, Date created, Tags).
  bitly: {
    matches: (n) => (n.has("longurl") || n.has("originalurl")) && ["link", "bitlink", "id", "custombitlinks", "customlink", "shortlink"].some((c) => n.has(c)),
    columns: {
      url: ["longurl", "originalurl", "destinationurl"],
      slug: ["custombitlinks", "custombitlink", "customlink", "custombackhalf"],
      slug_fallback: ["bitlink", "link", "shortlink", "shorturl", "id"],
      title: ["title"],
      tags: ["tags"],
      created_at: ["createdat", "datecreated", "created", "creationdate"],
    },
  },
  // thedevs-network/kutt: the link object of its API (docs/api/api.js `Link`, server/utils/utils.js `sanitize.link`):
  // id, address, banned, created_at, updated_at, description, expire_in, password, target, visit_count, domain, link.
  kutt: {
    matches: (n) => n.has("target") && n.has("address"),
    // Kutt's description is its link's label, not a share card; `password` is true when the link had one.
    columns: { url: ["target"], slug: ["address"], title: ["description"], expires_at: ["expirein"], created_at: ["createdat"], has_password: ["password"] },
  },
  // YOURLS/YOURLS: the yourls_url table (includes/functions-install.php): keyword,url,title,timestamp,ip,clicks;
  // GautamGupta/YOURLS-Import-Export (fileio/csv.php): source,target,hits with source "/keyword/".
  yourls: {
    matches: (n) => (n.has("keyword") && n.has("url")) || (n.has("source") && n.has("target") && n.has("hits")),
    columns: { url: ["url", "target"], slug: ["keyword", "source"], title: ["title"], created_at: ["timestamp"] },
  },
  generic: {
    matches: (n) => n.has("url"),
    // Every column of our export (export.ts) but those for people (id, short_url, clicks).
    columns: {
      url: ["url"],
      slug: ["slug"],
      domain: ["domain"],
      title: ["title"],
      tags: ["tags"],
      og_title: ["ogtitle"],
      og_description: ["ogdescription"],
      og_image: ["ogimage"],
      expires_at: ["expiresat"],
      expiration_url: ["expirationurl"],
      targeting: ["targeting"],
      created_at: ["createdat"],
      has_password: ["haspassword"],
      forward_query: ["forwardquery"],
      variants: ["variants"],
      archived: ["archived"],
    },
  },
};

/** Recognition order: the more specific header rows first (Shlink's also has longUrl; YOURLS's also has url). */
const DETECTION_ORDER: ImportFormat[] = ["shlink", "bitly", "kutt", "yourls", "generic"];

/** The format whose export this header row is, else `generic` (what `--format auto` does). */
export function detectFormat(header: string[]): ImportFormat {
  const names = new Set(header.map(normalizeName));
  return DETECTION_ORDER.find((f) => PRESETS[f].matches(names)) ?? "generic";
}

/** The format's columns found in this header row, by their spelling in the file. */
export function defaultMapping(format: ImportFormat, header: string[]): Mapping {
  const byName = new Map<string, string>();
  for (const h of header) if (!byName.has(normalizeName(h))) byName.set(normalizeName(h), h);
  const mapping: Mapping = {};
  for (const [field, candidates] of Object.entries(PRESETS[format].columns) as [keyof Mapping, string[]][]) {
    const found = candidates.map((c) => byName.get(c)).find((c) => c !== undefined);
    if (found !== undefined) mapping[field] = found;
  }
  // Bitly without a custom back-half column: the Bitlink is the slug.
  if (mapping.slug === undefined && mapping.slug_fallback !== undefined) {
    mapping.slug = mapping.slug_fallback;
    delete mapping.slug_fallback;
  }
  return mapping;
}

/** A slug as presets write it: the last path segment of a short URL (`bit.ly/AbC`, `/keyword/`), lower-cased. */
export function slugFromCell(value: string): string {
  let v = value.replace(/[?#].*$/, "");
  if (v.includes("/")) v = v.split("/").filter(Boolean).pop() ?? "";
  try {
    v = decodeURIComponent(v);
  } catch {
    // left as it is: the slug check names it
  }
  return v.toLowerCase();
}

/** Tags separated by `|` or `,`. Presets also bring them into our alphabet ("Spring Sale" → "spring-sale"), as the dashboard does. */
export function tagsFromCell(value: string, preset: boolean): string[] {
  const tags = value
    .split(/[|,]/)
    .map((t) => t.trim())
    .filter(Boolean);
  return preset ? normalizeTags(tags) : tags;
}

const ISO_RE = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)\s*(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/**
 * A time in ms: an integer of ms, or an ISO 8601 date or date-time (a space for the T, as MySQL
 * writes them, is accepted; no zone means UTC). Anything else is undefined.
 */
export function parseTime(value: string): number | undefined {
  const v = value.trim();
  if (/^\d{1,16}$/.test(v)) return Number(v);
  const m = ISO_RE.exec(v);
  if (!m) return undefined;
  const [, date, time, zone] = m;
  let iso = time ? `${date}T${time}` : `${date}T00:00:00`;
  if (zone) iso += zone.toUpperCase() === "Z" ? "Z" : zone.length === 3 ? `${zone}:00` : zone.includes(":") ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
  else iso += "Z";
  const ms = Date.parse(iso);
  return Number.isFinite(ms) && ms > 0 ? ms : undefined;
}

/**
 * What a row says, before validation: a POST /links body and the link's `created_at`.
 * `passwordProtected`: the source link had a visit password, which no export carries (only a hash
 * is kept), so the row must not become a public link without it.
 */
export type RowCandidate = { body: Record<string, unknown>; createdAt?: number; fields: Record<string, string[]>; passwordProtected: boolean };

const YES = new Set(["true", "1", "yes", "y", "t"]);

/**
 * Reads one CSV record through the mapping (column name → position from the header row). Empty
 * cells are absent members; times that do not parse are reported in `fields`, the rest is checked
 * by the POST /links schema afterwards.
 */
export function readRow(format: ImportFormat, mapping: Mapping, columns: Map<string, number>, record: string[]): RowCandidate {
  const preset = format !== "generic";
  const cell = (field: keyof Mapping): string => {
    const name = mapping[field];
    const i = name === undefined ? undefined : columns.get(name);
    const value = i === undefined ? "" : (record[i] ?? "").trim();
    // Our own files: a cell our CSV writer guarded against spreadsheets (lib/csv) reads back as the value it stood for.
    return preset ? value : unguardCell(value);
  };
  const body: Record<string, unknown> = {};
  const fields: Record<string, string[]> = {};
  const url = cell("url");
  if (url) body.url = url; // absent: POST /links's own "Required"
  const slug = cell("slug") || cell("slug_fallback");
  if (slug) body.slug = preset ? slugFromCell(slug) : slug;
  // Empty: the default redirect domain.
  const domain = cell("domain");
  if (domain) body.domain = domain.toLowerCase();
  const tags = cell("tags");
  if (tags) body.tags = tagsFromCell(tags, preset);
  for (const field of ["title", "og_title", "og_description", "og_image", "expiration_url"] as const) {
    const value = cell(field);
    if (value) body[field] = value;
  }
  const targeting = cell("targeting");
  if (targeting) {
    try {
      body.targeting = JSON.parse(targeting);
    } catch {
      fields.targeting = ['must be the targeting object as JSON, e.g. {"ios":"https://…","geo":{"DE":"https://…"}}'];
    }
  }
  const variants = cell("variants");
  if (variants) {
    try {
      body.variants = JSON.parse(variants);
    } catch {
      fields.variants = ['must be the variants as JSON, e.g. [{"url":"https://…","weight":50},{"url":"https://…","weight":50}]'];
    }
  }
  // Only a yes is written: a link without them reads as before.
  if (YES.has(cell("forward_query").toLowerCase())) body.forward_query = true;
  if (YES.has(cell("archived").toLowerCase())) body.archived = true;
  const expires = cell("expires_at");
  if (expires) {
    const ms = parseTime(expires);
    if (ms === undefined) fields.expires_at = ["must be a time in ms or an ISO 8601 date"];
    else body.expires_at = ms;
  }
  let createdAt: number | undefined;
  const created = cell("created_at");
  if (created) {
    createdAt = parseTime(created);
    if (createdAt === undefined) fields.created_at = ["must be a time in ms or an ISO 8601 date"];
    else if (createdAt > Date.now() + 60_000) {
      fields.created_at = ["must not be in the future"];
      createdAt = undefined;
    }
  }
  return { body, createdAt, fields, passwordProtected: YES.has(cell("has_password").toLowerCase()) };
}
