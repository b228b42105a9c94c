import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { isIP } from "node:net";
import path from "node:path";
import proxyaddr from "proxy-addr";
import { z } from "zod";

// Parsed once at start, never re-read. A wrong value stops the start naming the variable.
const httpUrl = z
  .string()
  .url()
  .refine((v) => /^https?:\/\//i.test(v), "must be an http(s) URL")
  .transform((v) => v.replace(/\/+$/, ""));

/** A URL the service builds others on (`${API_URL}/links`): no user or password, query or fragment to land in the middle of them. */
const baseUrl = httpUrl.refine((v) => {
  const u = new URL(v);
  return !u.username && !u.password && !u.search && !u.hash && !/[?#]/.test(v);
}, "must not carry a user, password, query or fragment");

/** An origin served from its root (the dashboard, the redirect domain: `${REDIRECT_URL}/${slug}`): a scheme, host and port only. */
const originUrl = baseUrl.refine(
  (v) => new URL(v).pathname === "/",
  "must be a scheme, host and optional port only, without a path (e.g. https://go.example.com)",
);

/** A two-valued switch, read as a boolean (`yes` true). */
const onOff = (yes: string, no: string) =>
  z.enum([yes, no] as [string, string], { errorMap: () => ({ message: `must be ${yes} or ${no}` }) }).transform((v) => v === yes);

export const envSchema = z.object({
  APP_URL: originUrl.default("http://localhost:3000"),
  API_URL: baseUrl.optional(),
  /** The development server of the API document: a URL whose host holds `{stage}` (unset: derived from API_URL). */
  API_DEV_URL: z
    .string()
    .regex(/^https?:\/\/[^/?#]*\{stage\}/i, "must be an http(s) URL whose host holds {stage}, e.g. https://{stage}.api.example.com")
    .refine((v) => URL.canParse(v.replaceAll("{stage}", "dev")), "must be an http(s) URL whose host holds {stage}")
    .transform((v) => v.replace(/\/+$/, ""))
    .optional(),
  REDIRECT_URL: originUrl.default("http://localhost:3001"),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgres:// URL")
    .optional(),
  /** A streaming replica for analytics and listing reads (read-routing.ts); needs DATABASE_URL. */
  DATABASE_READ_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgres:// URL")
    .optional(),
  /** After SIGTERM, how long `/_/health` answers 503 while requests are still served, so a load balancer takes the instance out first. */
  DRAIN_DELAY_MS: z.coerce.number().int("must be a whole number").min(0, "must be at least 0").max(60_000, "must be at most 60000").default(0),
  DATA_DIR: z.string().min(1).default("./data"),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, "must be a redis:// URL")
    .optional(),
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, "must be an smtp:// or smtps:// URL")
    .optional(),
  EDGE_HEADERS: z.enum(["none", "cloudfront", "cloudflare"]).default("none"),
  TRUST_PROXY: z
    .string()
    .default("false")
    .transform((v, ctx) => {
      if (v === "true") return true as const;
      if (v === "false") return false as const;
      if (/^\d+$/.test(v)) return Number(v);
      // Express also accepts subnet lists such as "loopback, 10.0.0.0/8", split as express splits them.
      try {
        proxyaddr.compile(v.split(/ *, */));
        return v;
      } catch (err) {
        ctx.addIssue({ code: "custom", message: `must be true, false, a hop count or a subnet list (${err instanceof Error ? err.message : "not one"})` });
        return z.NEVER;
      }
    }),
  SESSION_SECRET: z.string().min(16, "must be at least 16 characters").optional(),
  /** Clicks held in memory while the database is away; beyond, they spill to DATA_DIR/click-spool. */
  CLICK_BUFFER_MAX: z.coerce.number().int("must be a whole number").min(1, "must be at least 1").default(100_000),
  /** Whole months of clicks older than this many days are dropped (hourly counts stay); unset: kept forever. */
  CLICK_RETENTION_DAYS: z.coerce
    .number()
    .int("must be a whole number")
    .min(1, "must be at least 1")
    .max(36_500, "must be at most 36500 (100 years)")
    .optional(),
  /** DNS servers for domain verification: comma-separated `host:port` (IP addresses); unset: the system's. */
  DNS_SERVERS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return undefined;
      const servers = v.split(",").map((s) => s.trim());
      for (const s of servers) {
        if (!dnsServer(s)) {
          ctx.addIssue({ code: "custom", message: `"${s}" is not host:port (an IPv4 address, or [IPv6], then :port 1-65535)` });
          return z.NEVER;
        }
      }
      return servers;
    }),
  /** Scheme of branded short links (`https`: TLS ends at the operator's proxy). */
  CUSTOM_DOMAIN_SCHEME: z.enum(["https", "http"]).default("https"),
  /** Webhook endpoints and health checks may reach loopback, private and link-local addresses (tests, closed networks). */
  WEBHOOK_ALLOW_PRIVATE: onOff("true", "false").default("false"),
  /** Scheduled destination health checks; `off` leaves checks on request only. */
  LINK_HEALTH_CHECKS: onOff("on", "off").default("on"),
  /** Single sign-on with OpenID Connect: all of issuer, client id and secret, or none. */
  OIDC_ISSUER: httpUrl.optional(),
  OIDC_CLIENT_ID: z.string().min(1).optional(),
  OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  /** The sign-in button's label. */
  OIDC_NAME: z.string().min(1).max(60, "must be at most 60 characters").default("Single sign-on"),
  /** `off`: no sign-in codes are mailed; OIDC is the only way in. */
  EMAIL_SIGNIN: onOff("on", "off").default("on"),
  /** `off`: only existing users and invited addresses can sign in. */
  SIGNUPS: onOff("on", "off").default("on"),
  /** `off`: creating a link needs a credential. */
  ANONYMOUS_LINKS: onOff("on", "off").default("on"),
  /** Sender of every mail: `address` or `Name <address>` (relays refuse the default's `localhost`). */
  MAIL_FROM: z
    .string()
    .regex(
      /^(?:[^<>\r\n]{1,100} <[^\s<>@]+@[^\s<>@]+\.[^\s<>@]+>|[^\s<>@]+@[^\s<>@]+\.[^\s<>@]+)$/,
      "must be an address (links@example.com) or Name <links@example.com>",
    )
    .optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  NODE_ENV: z.string().default("development"),
});

export type Config = Readonly<{
  appUrl: URL;
  apiUrl: URL;
  /** The API document's development server, `{stage}` in its host (API_DEV_URL); undefined: derived from apiUrl. */
  apiDevUrl?: string;
  redirectUrl: URL;
  /** Host of the redirect domain, with port when it is not the default one. */
  redirectDomain: string;
  databaseUrl: string | undefined;
  /** Replica for analytics and listing reads (DATABASE_READ_URL); undefined: the primary answers them. */
  databaseReadUrl?: string;
  /** DRAIN_DELAY_MS: health answers 503 this long after SIGTERM before the listeners close. */
  drainDelayMs?: number;
  dataDir: string;
  redisUrl: string | undefined;
  smtpUrl: string | undefined;
  edgeHeaders: "none" | "cloudfront" | "cloudflare";
  trustProxy: boolean | number | string;
  sessionSecret: string;
  logLevel: string;
  production: boolean;
  /** Memory bound of the click buffer (CLICK_BUFFER_MAX). */
  clickBufferMax?: number;
  /** CLICK_RETENTION_DAYS; undefined: clicks are kept forever. */
  clickRetentionDays?: number;
  /** DNS servers (`host:port`) for domain verification; undefined: the system resolver. */
  dnsServers?: readonly string[];
  /** Scheme of branded domains' short links (CUSTOM_DOMAIN_SCHEME). */
  customDomainScheme?: "https" | "http";
  /** MAIL_FROM; undefined: `Links <no-reply@localhost>`, fine for the outbox directory, refused by real relays. */
  mailFrom?: string;
  /** WEBHOOK_ALLOW_PRIVATE: webhooks and health checks may reach private addresses. */
  webhookAllowPrivate?: boolean;
  /** LINK_HEALTH_CHECKS (default on): scheduled destination checks. */
  linkHealthChecks?: boolean;
  /** OpenID Connect sign-in; undefined: not configured. */
  oidc?: { issuer: string; clientId: string; clientSecret: string; name: string };
  /** EMAIL_SIGNIN (default on). */
  emailSignin?: boolean;
  /** SIGNUPS (default on): unknown, uninvited addresses may sign up. */
  signups?: boolean;
  /** ANONYMOUS_LINKS (default on): POST /links without a credential. */
  anonymousLinks?: boolean;
}>;

/** `1.2.3.4:53`, `[::1]:5353`, or an address alone (port 53), as node:dns's setServers takes them. */
function dnsServer(s: string): boolean {
  const m = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(s) ?? /^([^:]+)(?::(\d{1,5}))?$/.exec(s);
  if (!m) return isIP(s) === 6;
  const port = m[2] === undefined ? 53 : Number(m[2]);
  const ipv6 = s.startsWith("[");
  return isIP(m[1]) === (ipv6 ? 6 : 4) && port >= 1 && port <= 65535;
}

export class ConfigError extends Error {}

/** Secrets that may instead be read from a file named by `<NAME>_FILE` (Docker and systemd credentials). */
export const SECRET_FILE_VARIABLES = ["SESSION_SECRET", "DATABASE_URL", "SMTP_URL", "OIDC_CLIENT_SECRET", "REDIS_URL"] as const;

/** `<NAME>_FILE` replaced by the file's content (its final line break dropped); setting both is a mistake worth stopping for. */
function readSecretFiles(env: Record<string, string | undefined>): Record<string, string | undefined> {
  const out = { ...env };
  for (const name of SECRET_FILE_VARIABLES) {
    const file = env[`${name}_FILE`];
    if (!file) continue;
    if (env[name]) throw new ConfigError(`Invalid configuration:\n  ${name}_FILE: set ${name} or ${name}_FILE, not both`);
    try {
      out[name] = readFileSync(file, "utf8").replace(/\r?\n$/, "");
    } catch (e) {
      throw new ConfigError(`Invalid configuration:\n  ${name}_FILE: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
    // An empty file is a secret that did not arrive (a mount not yet filled), not "unset": unset
    // DATABASE_URL would quietly start on the embedded database instead.
    if (!out[name]?.trim()) throw new ConfigError(`Invalid configuration:\n  ${name}_FILE: ${file} is empty`);
  }
  return out;
}

export function parseConfig(env: Record<string, string | undefined> = process.env): Config {
  const emptyToUndefined = Object.fromEntries(Object.entries(readSecretFiles(env)).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = envSchema.safeParse(emptyToUndefined);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const e = parsed.data;
  const apiUrl = e.API_URL ?? `${e.APP_URL}/api`;
  const redirectUrl = new URL(e.REDIRECT_URL);
  // Origins sharing a port are told apart by the Host header: the redirect domain
  // needs a host of its own, or every slug would be answered by the dashboard.
  for (const [name, url] of [
    ["APP_URL", e.APP_URL],
    ["API_URL", apiUrl],
  ] as const) {
    if (new URL(url).host === redirectUrl.host) {
      throw new ConfigError(`Invalid configuration:\n  REDIRECT_URL: must not share its host and port with ${name} (${redirectUrl.host})`);
    }
  }
  if (e.DATABASE_READ_URL && !e.DATABASE_URL) {
    throw new ConfigError("Invalid configuration:\n  DATABASE_READ_URL: needs DATABASE_URL (a replica of the embedded database does not exist)");
  }
  const oidcParts = [e.OIDC_ISSUER, e.OIDC_CLIENT_ID, e.OIDC_CLIENT_SECRET].filter((v) => v !== undefined).length;
  if (oidcParts !== 0 && oidcParts !== 3) {
    throw new ConfigError("Invalid configuration:\n  OIDC_ISSUER: OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET go together");
  }
  if (e.OIDC_ISSUER && new URL(e.OIDC_ISSUER).protocol === "http:" && !isLoopbackHost(new URL(e.OIDC_ISSUER).hostname)) {
    throw new ConfigError("Invalid configuration:\n  OIDC_ISSUER: must be https (http only on a loopback host)");
  }
  if (!e.EMAIL_SIGNIN && !e.OIDC_ISSUER) {
    throw new ConfigError("Invalid configuration:\n  EMAIL_SIGNIN: off needs OIDC_ISSUER, or nobody could sign in");
  }
  const dataDir = path.resolve(e.DATA_DIR);
  return Object.freeze({
    appUrl: new URL(e.APP_URL),
    apiUrl: new URL(apiUrl),
    apiDevUrl: e.API_DEV_URL ?? devApiUrl(new URL(apiUrl)),
    redirectUrl,
    redirectDomain: redirectUrl.host,
    databaseUrl: e.DATABASE_URL,
    databaseReadUrl: e.DATABASE_READ_URL,
    drainDelayMs: e.DRAIN_DELAY_MS,
    dataDir,
    redisUrl: e.REDIS_URL,
    smtpUrl: e.SMTP_URL,
    edgeHeaders: e.EDGE_HEADERS,
    trustProxy: e.TRUST_PROXY,
    sessionSecret: e.SESSION_SECRET ?? loadOrCreateSecret(dataDir),
    logLevel: e.LOG_LEVEL,
    clickBufferMax: e.CLICK_BUFFER_MAX,
    clickRetentionDays: e.CLICK_RETENTION_DAYS,
    dnsServers: e.DNS_SERVERS,
    customDomainScheme: e.CUSTOM_DOMAIN_SCHEME,
    mailFrom: e.MAIL_FROM,
    webhookAllowPrivate: e.WEBHOOK_ALLOW_PRIVATE,
    linkHealthChecks: e.LINK_HEALTH_CHECKS,
    oidc: e.OIDC_ISSUER ? { issuer: e.OIDC_ISSUER, clientId: e.OIDC_CLIENT_ID!, clientSecret: e.OIDC_CLIENT_SECRET!, name: e.OIDC_NAME } : undefined,
    emailSignin: e.EMAIL_SIGNIN,
    signups: e.SIGNUPS,
    anonymousLinks: e.ANONYMOUS_LINKS,
    production: e.NODE_ENV === "production",
  });
}

function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || /^127\./.test(h);
}

function loadOrCreateSecret(dataDir: string): string {
  const file = path.join(dataDir, "session-secret");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(32).toString("base64url");
  writeFileSync(file, secret, { mode: 0o600 });
  return secret;
}

/** URL without trailing slash, as a string (for building addresses). */
export function base(url: URL): string {
  return url.href.replace(/\/+$/, "");
}

/**
 * The development stage of an API address: `{stage}.` before its host (`https://{stage}.api.example.com`).
 * An address has no subdomains: a loopback one becomes `{stage}.localhost`, which resolves to loopback
 * too; for another, set API_DEV_URL.
 */
export function devApiUrl(apiUrl: URL): string {
  const hostname = apiUrl.hostname.replace(/^\[|\]$/g, "");
  const loopback = hostname === "::1" || (isIP(hostname) === 4 && hostname.startsWith("127."));
  const host = loopback ? `localhost${apiUrl.port ? `:${apiUrl.port}` : ""}` : apiUrl.host;
  return `${apiUrl.protocol}//{stage}.${host}${apiUrl.pathname}`.replace(/\/+$/, "");
}
