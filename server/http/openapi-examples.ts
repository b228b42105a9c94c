/**
 * Examples for /openapi.json, built from each schema so they always match it: the structure comes from
 * the schema, the values from a dictionary of member names (the most specific dotted path wins, e.g.
 * `Domain.name` before `name`). A dictionary value that does not fit the schema is not used; the value
 * is then made up from the schema itself (first enum value, a URI for `format: uri`, …). New procedures
 * get examples without an entry here.
 */

export type Schema = { [key: string]: unknown };

const T = 1767225600000; // 2026-01-01T00:00:00Z
const DAY = 86_400_000;
const LATER = 1830297600000; // 2028-01-01: an expiry still ahead for someone pasting the example

/** Values by member name, or by a dotted suffix of the member's path (which starts with a component's or a body's name). */
const VALUES: Record<string, unknown> = {
  id: "k3x9q2ab",
  link_id: "k3x9q2ab",
  user_id: "u5t8r1wz",
  token_id: "t2v6n8qa",
  itemId: "p7m2c4xe",
  slug: "launch",
  "Linktree.slug": "ada",
  "LinktreeDetail.slug": "ada",
  "LinktreeAnalytics.slug": "ada",
  "LinktreeAnalytics.title": "Ada's links",
  url: "https://example.com/launch?utm_source=mail",
  "Webhook.url": "https://hooks.example.com/links",
  "WebhookWithSecret.url": "https://hooks.example.com/links",
  short_url: "https://l.example.com/launch",
  redirect_domain: "l.example.com",
  domain: "go.example.com",
  tags: ["2026", "mail"],
  tag: "mail",
  expires_at: LATER,
  expiration_url: "https://example.com/over",
  targeting: { ios: "https://apps.apple.com/app/id1", geo: { DE: "https://example.de/" } },
  geo: { DE: "https://example.de/" },
  ios: "https://apps.apple.com/app/id1",
  android: "https://play.google.com/store/apps/details?id=com.example",
  has_password: false,
  password: "open sesame",
  og_title: "Our launch",
  og_description: "Everything new this spring, in one page.",
  og_image: "https://example.com/card.png",
  title: "Spring launch",
  "Linktree.title": "Ada's links",
  "LinktreeDetail.title": "Ada's links",
  "LinktreeItem.title": "My blog",
  "items.title": "My blog",
  "items.id": "p7m2c4xe",
  "LinktreeItem.id": "p7m2c4xe",
  "items.short_url": "https://l.example.com/b3k9",
  "LinktreeItem.short_url": "https://l.example.com/b3k9",
  "Item.title": "My blog",
  "Item.url": "https://example.com/blog",
  "LinktreeItem.url": "https://example.com/blog",
  bio: "Writing about engines and numbers.",
  avatar_url: "https://example.com/ada.png",
  published: true,
  active: true,
  position: 0,
  created_at: T,
  updated_at: T,
  deleted_at: null,
  verified_at: T + 3_600_000,
  joined_at: T,
  last_used_at: T,
  revoked_at: null,
  checked_at: T + DAY,
  last_attempt_at: T + DAY,
  next_attempt_at: null,
  at: T,
  timestamp: T,
  ts: "1767225600000#a1b2c3",
  from: T,
  to: T + 7 * DAY,
  name: "Ada Lovelace",
  "Domain.name": "go.example.com",
  "workspace.name": "Ada's workspace",
  "verification.name": "_links-verify.go.example.com",
  "verification.value": "links-verify=3hQ9xT2mL8vR1pZ6kW4nB7cY",
  verified: true,
  not_found_url: "https://example.com/not-found",
  email: "ada@example.com",
  country: "DE",
  region: "BE",
  region_name: "Berlin",
  city: "Berlin",
  timezone: "Europe/Berlin",
  lat: 52.52,
  lng: 13.405,
  device: "mobile",
  platform: "iOS",
  os: "iOS",
  browser: "Mobile Safari",
  referer: "https://news.example.com/",
  referrer_domain: "news.example.com",
  rule: "ios",
  trigger: "link",
  by: "country",
  tz: "UTC",
  key: "DE",
  clicks: 12,
  visitors: 9,
  views: 40,
  count: 12,
  events: ["link.created", "link.clicked"],
  event: "link.created",
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  disabled_reason: null,
  attempts: 1,
  response_status: 200,
  http_status: 200,
  status: "delivered",
  error: null,
  "errors.error": "INVALID_LINK_ID",
  "errors.fields": { slug: ["must be 1-50 characters of 0-9, a-z and -"] },
  index: 1,
  fields: { url: ["must be an absolute http or https URL"] },
  next_cursor: "MTc2NzIyNTYwMDAwMDprM3g5cTJhYg",
  cursor: "MTc2NzIyNTYwMDAwMDprM3g5cTJhYg",
  "Report.url": "https://l.example.com/launch",
  reason: "phishing",
  detail: "The page asks for a bank password.",
  action: "link.updated",
  "target.type": "link",
  changes: ["url"],
  ok: true,
  scopes: ["links:read", "analytics:read"],
  role: "member",
  personal: false,
  current: false,
  members: 3,
  plan: "pro",
};

/** What a made-up string tries when a pattern allows no dictionary value. */
const STRING_CANDIDATES = [
  "k3x9q2ab",
  "launch",
  "mail",
  "example",
  "DE",
  "de",
  "#1f2937",
  "UTC",
  "1767225600000",
  "2026-01-01",
  "links:read",
  "a",
  "A",
  "1",
  "0",
];

function lookup(path: string[]): unknown {
  for (let i = 0; i < path.length; i++) {
    const key = path.slice(i).join(".");
    if (Object.hasOwn(VALUES, key)) return VALUES[key];
  }
  return undefined;
}

const isObject = (v: unknown): v is Schema => typeof v === "object" && v !== null && !Array.isArray(v);

export class Examples {
  /**
   * Examples of named schemas are kept here, not on the schemas: a validator that meets one schema's
   * `example` twice in a document reads its `id` member as a schema id given twice.
   */
  private readonly named = new Map<string, unknown>();

  constructor(private readonly components: Record<string, Schema>) {}

  /** The example of the named schema `name`, made once and reused wherever it is referenced. */
  ofNamed(name: string): unknown {
    if (!this.named.has(name)) this.named.set(name, this.of(this.components[name] ?? {}, [name], "answer"));
    return this.named.get(name);
  }

  private resolve(schema: Schema): { schema: Schema; name?: string } {
    const ref = schema.$ref;
    if (typeof ref !== "string") return { schema };
    const name = ref.split("/").pop()!;
    return { schema: this.components[name] ?? {}, name };
  }

  /** Whether `value` is valid for `schema` (the parts of JSON Schema our documents use). */
  fits(schemaIn: Schema, value: unknown): boolean {
    const { schema } = this.resolve(schemaIn);
    if (value === null) return schema.nullable === true || (Array.isArray(schema.enum) && schema.enum.includes(null));
    if (Array.isArray(schema.allOf) && !(schema.allOf as Schema[]).every((s) => this.fits(s, value))) return false;
    if (Array.isArray(schema.anyOf) && !(schema.anyOf as Schema[]).some((s) => this.fits(s, value))) return false;
    if (Array.isArray(schema.oneOf) && (schema.oneOf as Schema[]).filter((s) => this.fits(s, value)).length !== 1) return false;
    if (Array.isArray(schema.enum) && !schema.enum.includes(value)) return false;
    switch (schema.type) {
      case "string": {
        if (typeof value !== "string") return false;
        const length = [...value].length;
        if (typeof schema.minLength === "number" && length < schema.minLength) return false;
        if (typeof schema.maxLength === "number" && length > schema.maxLength) return false;
        if (typeof schema.pattern === "string" && !new RegExp(schema.pattern, "u").test(value)) return false;
        if (schema.format === "uri" && !URL.canParse(value)) return false;
        if (schema.format === "email" && !/^[^@\s]+@[^@\s]+$/.test(value)) return false;
        if (schema.format === "date-time" && !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(value)) return false;
        if (schema.format === "uuid" && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) return false;
        return true;
      }
      case "integer":
      case "number": {
        if (typeof value !== "number" || (schema.type === "integer" && !Number.isInteger(value))) return false;
        if (typeof schema.minimum === "number" && (schema.exclusiveMinimum === true ? value <= schema.minimum : value < schema.minimum)) return false;
        if (typeof schema.maximum === "number" && (schema.exclusiveMaximum === true ? value >= schema.maximum : value > schema.maximum)) return false;
        return true;
      }
      case "boolean":
        return typeof value === "boolean";
      case "array": {
        if (!Array.isArray(value)) return false;
        if (typeof schema.minItems === "number" && value.length < schema.minItems) return false;
        if (typeof schema.maxItems === "number" && value.length > schema.maxItems) return false;
        return !isObject(schema.items) || value.every((v) => this.fits(schema.items as Schema, v));
      }
      case "object": {
        if (!isObject(value)) return false;
        const props = (schema.properties ?? {}) as Record<string, Schema>;
        if (((schema.required ?? []) as string[]).some((r) => !Object.hasOwn(value, r))) return false;
        const keys = Object.keys(value);
        if (typeof schema.minProperties === "number" && keys.length < schema.minProperties) return false;
        if (typeof schema.maxProperties === "number" && keys.length > schema.maxProperties) return false;
        for (const k of keys) {
          if (props[k]) {
            if (!this.fits(props[k], value[k])) return false;
          } else if (schema.additionalProperties === false) return false;
          else if (isObject(schema.additionalProperties) && !this.fits(schema.additionalProperties, value[k])) return false;
        }
        return true;
      }
      default:
        return true;
    }
  }

  /**
   * An example of `schema`. `want`: optional members to show in a request body (dotted paths below
   * the body); answers show every required member and the optional ones the dictionary knows.
   */
  of(schemaIn: Schema, path: string[], mode: "answer" | "request", want: string[] = []): unknown {
    const { schema, name } = this.resolve(schemaIn);
    if (name) {
      if (mode === "answer") return this.ofNamed(name);
      path = [name];
    }
    if (schema.example !== undefined) return schema.example;
    const known = lookup(path);
    if (known !== undefined && this.fits(schema, known)) return known;
    if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum.find((v) => v !== null) ?? schema.enum[0];
    for (const key of ["anyOf", "oneOf"] as const) {
      const branches = schema[key];
      if (Array.isArray(branches) && branches.length) {
        for (const branch of branches as Schema[]) {
          const value = this.of(branch, path, mode, want);
          if (this.fits(schema, value)) return value;
        }
        return this.of(branches[0] as Schema, path, mode, want);
      }
    }
    if (Array.isArray(schema.allOf)) {
      const parts = (schema.allOf as Schema[]).map((s) => this.of(s, path, mode, want));
      return parts.every(isObject) ? Object.assign({}, ...parts) : parts[0];
    }
    switch (schema.type) {
      case "object":
        return this.object(schema, path, mode, want);
      case "array": {
        const item = isObject(schema.items) ? this.of(schema.items, path, mode, want) : "example";
        return Array.from({ length: Math.max(1, typeof schema.minItems === "number" ? schema.minItems : 1) }, () => item);
      }
      case "string":
        return this.string(schema);
      case "integer":
      case "number": {
        const last = path[path.length - 1] ?? "";
        let n = /_at$|^(from|to|timestamp)$/.test(last) ? T : 1;
        if (typeof schema.minimum === "number" && n < schema.minimum) n = schema.minimum;
        if (typeof schema.maximum === "number" && n > schema.maximum) n = schema.maximum;
        return n;
      }
      case "boolean":
        return true;
      default:
        return schema.nullable ? null : "example";
    }
  }

  private object(schema: Schema, path: string[], mode: "answer" | "request", want: string[]): Record<string, unknown> {
    const props = (schema.properties ?? {}) as Record<string, Schema>;
    const required = new Set((schema.required ?? []) as string[]);
    const out: Record<string, unknown> = {};
    const wanted = (k: string) => want.includes([...path.slice(1), k].join("."));
    for (const [k, prop] of Object.entries(props)) {
      const member = [...path, k];
      const include =
        required.has(k) ||
        (mode === "request" ? wanted(k) : lookup(member) !== undefined && this.fits(prop, lookup(member))) ||
        (mode === "answer" && required.size === 0);
      if (include) out[k] = this.of(prop, member, mode, want);
    }
    // A PATCH body needs at least one member: its first ones, when none was asked for.
    const min = typeof schema.minProperties === "number" ? schema.minProperties : 0;
    for (const [k, prop] of Object.entries(props)) {
      if (Object.keys(out).length >= min) break;
      if (!Object.hasOwn(out, k)) out[k] = this.of(prop, [...path, k], mode, want);
    }
    if (!Object.keys(props).length && isObject(schema.additionalProperties)) out.example = this.of(schema.additionalProperties, [...path, "*"], mode, want);
    return out;
  }

  private string(schema: Schema): string {
    if (schema.format === "uri") return "https://example.com/";
    if (schema.format === "email") return "ada@example.com";
    if (schema.format === "date-time") return new Date(T).toISOString();
    if (schema.format === "uuid") return "7f3c2a9e-1b4d-4c8e-9a6f-2d5e8b1c0a47";
    const candidate = STRING_CANDIDATES.find((c) => this.fits({ ...schema, nullable: false }, c));
    if (candidate) return candidate;
    const min = typeof schema.minLength === "number" ? schema.minLength : 1;
    return "example".padEnd(min, "x");
  }
}
