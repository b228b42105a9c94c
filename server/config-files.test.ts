import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { ConfigError, envSchema, parseConfig, SECRET_FILE_VARIABLES } from "./config";
import { tempDataDir } from "../db/test-db";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const COMPOSE_ONLY = "# --- compose.yaml only";

/** `NAME=value` lines of .env.example, commented out or not, in file order: the service's, or compose.yaml's own. */
function exampleVariables(part: "service" | "compose" = "service"): Map<string, string> {
  const found = new Map<string, string>();
  const [service, compose = ""] = readFileSync(path.join(root, ".env.example"), "utf8").split(COMPOSE_ONLY);
  for (const line of (part === "service" ? service : compose).split("\n")) {
    const m = /^#?([A-Z][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (m) {
      expect(found.has(m[1]), `${m[1]} is listed twice`).toBe(false);
      found.set(m[1], m[2]);
    }
  }
  return found;
}

const secretFile = (content: string) => {
  const file = path.join(tempDataDir(), "secret");
  writeFileSync(file, content);
  return file;
};

describe(".env.example", () => {
  it("lists exactly the variables the configuration reads, and each secret's _FILE form", () => {
    const expected = [...Object.keys(envSchema.shape), ...SECRET_FILE_VARIABLES.map((n) => `${n}_FILE`)].sort();
    expect([...exampleVariables().keys()].sort()).toEqual(expected);
  });

  it("gives each variable its default, and an empty value to one without a default", () => {
    const shape = envSchema.shape as Record<string, { safeParse(v: unknown): { success: boolean; data?: unknown } }>;
    for (const [name, value] of exampleVariables()) {
      if (name.endsWith("_FILE")) {
        expect(value, name).toBe("");
        continue;
      }
      const byDefault = shape[name].safeParse(undefined);
      if (byDefault.success && byDefault.data !== undefined) {
        expect(value, `${name} shows its default`).not.toBe("");
        expect(shape[name].safeParse(value).data, `${name} shows its default`).toEqual(byDefault.data);
      } else {
        expect(value, `${name} has no default`).toBe("");
      }
    }
  });

  it("describes every variable on the comment line just above it", () => {
    const lines = readFileSync(path.join(root, ".env.example"), "utf8").split("\n");
    lines.forEach((line, i) => {
      if (/^#?[A-Z][A-Z0-9_]*=/.test(line)) expect(/^# \S/.test(lines[i - 1]) || /^#?[A-Z][A-Z0-9_]*=/.test(lines[i - 1]), line).toBe(true);
    });
  });
});

describe("secrets read from files (<NAME>_FILE)", () => {
  it("reads SESSION_SECRET_FILE, dropping the file's final line break", () => {
    const c = parseConfig({ DATA_DIR: tempDataDir(), SESSION_SECRET_FILE: secretFile("s3cret-from-a-file-0123456789\n") });
    expect(c.sessionSecret).toBe("s3cret-from-a-file-0123456789");
  });

  it.each([
    ["DATABASE_URL_FILE", "postgres://app:pw@db:5432/links\n", (c: ReturnType<typeof parseConfig>) => c.databaseUrl, "postgres://app:pw@db:5432/links"],
    ["SMTP_URL_FILE", "smtp://user:pw@mail:587", (c: ReturnType<typeof parseConfig>) => c.smtpUrl, "smtp://user:pw@mail:587"],
    ["REDIS_URL_FILE", "redis://:pw@redis:6379\r\n", (c: ReturnType<typeof parseConfig>) => c.redisUrl, "redis://:pw@redis:6379"],
  ])("reads %s as its variable", (variable, content, read, expected) => {
    expect(read(parseConfig({ DATA_DIR: tempDataDir(), [variable]: secretFile(content) }))).toBe(expected);
  });

  it("reads OIDC_CLIENT_SECRET_FILE as the client secret", () => {
    const c = parseConfig({
      DATA_DIR: tempDataDir(),
      OIDC_ISSUER: "https://id.example.com",
      OIDC_CLIENT_ID: "links",
      OIDC_CLIENT_SECRET_FILE: secretFile("client-secret\n"),
    });
    expect(c.oidc?.clientSecret).toBe("client-secret");
  });

  it("refuses a variable set both directly and through its file, naming it", () => {
    const start = () => parseConfig({ DATA_DIR: tempDataDir(), SESSION_SECRET: "x".repeat(20), SESSION_SECRET_FILE: secretFile("y".repeat(20)) });
    expect(start).toThrow(ConfigError);
    expect(start).toThrow(/SESSION_SECRET_FILE: set SESSION_SECRET or SESSION_SECRET_FILE, not both/);
  });

  it("refuses a file that cannot be read, naming the variable and the path", () => {
    const missing = path.join(tempDataDir(), "absent");
    expect(() => parseConfig({ DATA_DIR: tempDataDir(), DATABASE_URL_FILE: missing })).toThrow(`DATABASE_URL_FILE: cannot read ${missing} (ENOENT)`);
  });

  it("refuses an empty file, naming the variable (an empty DATABASE_URL_FILE must not start on the embedded database)", () => {
    for (const name of SECRET_FILE_VARIABLES) {
      const file = secretFile("\n");
      expect(() => parseConfig({ DATA_DIR: tempDataDir(), [`${name}_FILE`]: file }), name).toThrow(`${name}_FILE: ${file} is empty`);
    }
  });

  it("checks a file's content like the variable's own value", () => {
    expect(() => parseConfig({ DATA_DIR: tempDataDir(), DATABASE_URL_FILE: secretFile("mysql://x\n") })).toThrow(/DATABASE_URL: must be a postgres:\/\/ URL/);
  });
});

// ---- compose.yaml and Containerfile ------------------------------------------------------------

const text = (file: string) => readFileSync(path.join(root, file), "utf8");

/**
 * The part of the Compose specification compose.yaml uses, strict: an unknown or misspelt key
 * (`healtcheck`, `depends-on`) fails, as do wrong shapes (a port as a number, a condition Compose
 * does not know).
 */
const duration = z.string().regex(/^\d+(ms|s|m|h)$/);
const composeService = z
  .object({
    build: z.object({ context: z.string(), dockerfile: z.string() }).strict().optional(),
    image: z.string().regex(/^[\w.-]+(\/[\w.-]+)*(:[\w.-]+)?$/),
    restart: z.enum(["no", "always", "on-failure", "unless-stopped"]),
    init: z.boolean().optional(),
    env_file: z.array(z.object({ path: z.string(), required: z.boolean() }).strict()).optional(),
    environment: z.record(z.string().regex(/^[A-Z][A-Z0-9_]*$/), z.string()).optional(),
    sysctls: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
    ports: z.array(z.string().regex(/^(\d+\.\d+\.\d+\.\d+:)?\d+:\d+$/)).optional(),
    volumes: z.array(z.string().regex(/^[^:]+:\/[^:]*(:ro)?$/)).optional(),
    depends_on: z
      .record(z.string(), z.object({ condition: z.enum(["service_started", "service_healthy", "service_completed_successfully"]) }).strict())
      .optional(),
    healthcheck: z
      .object({ test: z.array(z.string()).min(2), interval: duration, timeout: duration, retries: z.number().int().positive() })
      .strict()
      .optional(),
    command: z.array(z.string()).optional(),
    network_mode: z.enum(["host", "bridge", "none"]).optional(),
    stop_grace_period: duration.optional(),
  })
  .strict();
const composeFile = z
  .object({
    name: z.string().regex(/^[a-z0-9][a-z0-9_-]*$/),
    services: z.record(z.string(), composeService),
    volumes: z.record(z.string(), z.null()),
  })
  .strict();

describe("compose.yaml", () => {
  const compose = composeFile.parse(parseYaml(text("compose.yaml")));
  const { app, postgres, redis, caddy } = compose.services;
  const named = (volumes: string[] = []) => volumes.map((v) => v.split(":")[0]).filter((v) => !v.startsWith("."));

  it("is YAML of the Compose shape it uses: the service, PostgreSQL 16, Redis and Caddy", () => {
    expect(Object.keys(compose.services).sort()).toEqual(["app", "caddy", "postgres", "redis"]);
    expect(postgres.image).toMatch(/(^|\/)postgres:16(\.|$)/);
    expect(redis.image).toMatch(/(^|\/)redis:/);
    expect(caddy.image).toMatch(/(^|\/)caddy:2/);
    expect(app.build).toEqual({ context: ".", dockerfile: "Containerfile" });
  });

  it("keeps PostgreSQL's data and the service's DATA_DIR on named volumes, each declared once and used", () => {
    expect(postgres.volumes).toContain("postgres-data:/var/lib/postgresql/data");
    expect(app.volumes).toContain(`app-data:${app.environment!.DATA_DIR}`);
    const used = Object.values(compose.services).flatMap((s) => named(s.volumes));
    expect([...new Set(used)].sort()).toEqual(Object.keys(compose.volumes).sort());
  });

  it("starts the service once PostgreSQL and Redis are healthy, and Caddy once the service is", () => {
    for (const [name, service] of Object.entries(compose.services)) {
      for (const [dep, { condition }] of Object.entries(service.depends_on ?? {})) {
        expect(compose.services[dep], `${name} depends on ${dep}`).toBeDefined();
        // The service's own health check is the image's HEALTHCHECK.
        if (condition === "service_healthy" && dep !== "app") expect(compose.services[dep].healthcheck, dep).toBeDefined();
      }
    }
    expect(app.depends_on).toEqual({ postgres: { condition: "service_healthy" }, redis: { condition: "service_healthy" } });
    expect(caddy.depends_on).toEqual({ app: { condition: "service_healthy" } });
    expect(text("Containerfile")).toMatch(/^HEALTHCHECK /m);
  });

  it("sets only variables the service reads, and they pass its configuration", () => {
    const env = app.environment!;
    for (const name of Object.keys(env)) expect(Object.keys(envSchema.shape), name).toContain(name);
    const values = Object.fromEntries(
      Object.entries(env).map(([k, v]) => [k, v.replace(/\$\{(\w+):\?[^}]*\}/g, (_, n: string) => exampleVariables("compose").get(n) || "pw")]),
    );
    const config = parseConfig({ ...values, DATA_DIR: tempDataDir() });
    expect(config.appUrl.protocol).toBe("https:");
    expect(config.databaseUrl).toMatch(/@postgres:5432\//);
  });

  it("connects to PostgreSQL as the role and database the PostgreSQL service creates", () => {
    const url = new URL(app.environment!.DATABASE_URL.replace(/\$\{[^}]+\}/, "pw"));
    expect([url.username, url.pathname.slice(1), url.hostname]).toEqual([postgres.environment!.POSTGRES_USER, postgres.environment!.POSTGRES_DB, "postgres"]);
    expect(app.environment!.REDIS_URL).toBe("redis://redis:6379");
  });

  it("takes every ${VAR} it needs from the compose part of .env.example", () => {
    const needed = [...text("compose.yaml").matchAll(/\$\{(\w+)/g)].map((m) => m[1]);
    expect([...new Set(needed)].sort()).toEqual([...exampleVariables("compose").keys()].sort());
  });

  it("publishes the service's port (443 for its https URLs) on loopback only, where deploy/Caddyfile proxies and asks", () => {
    expect(app.ports).toEqual(["127.0.0.1:8080:443"]);
    expect(app.sysctls).toEqual({ "net.ipv4.ip_unprivileged_port_start": 0 });
    expect(caddy.network_mode).toBe("host");
    expect(caddy.volumes).toContain("./deploy/Caddyfile:/etc/caddy/Caddyfile:ro");
    const caddyfile = text("deploy/Caddyfile");
    expect(caddyfile).toContain("ask http://{$REDIRECT_UPSTREAM:127.0.0.1:8080}/_/tls/ask");
    expect(caddyfile).toMatch(/tls \{\s*on_demand\s*\}/);
    expect(caddyfile).toContain("{$APP_HOST:");
    expect(Object.keys(caddy.environment!).sort()).toEqual(["APP_HOST", "REDIRECT_HOST"]);
  });
});

describe("Containerfile", () => {
  const file = text("Containerfile");
  const instructions = file
    .replace(/\\\n\s*/g, " ")
    .split("\n")
    .filter((l) => l.trim() && !l.startsWith("#"));
  const last = (keyword: string) => instructions.filter((l) => l.startsWith(`${keyword} `)).at(-1) ?? "";

  it("builds in stages from an ARG base image defaulting to the official Node 20 image", () => {
    expect(instructions[0]).toMatch(/^ARG NODE_IMAGE=docker\.io\/library\/node:20[-\w.]*$/);
    expect(instructions.filter((l) => l.startsWith("FROM ${NODE_IMAGE}")).length).toBeGreaterThanOrEqual(2);
  });

  it("ships production dependencies only, installed from the lock file", () => {
    expect(file).toContain("npm ci --omit=dev");
    const stage = /FROM \$\{NODE_IMAGE\} AS ([\w-]+)\n(?:(?!FROM)[\s\S])*npm ci --omit=dev/.exec(file)![1];
    expect(file).toContain(`COPY --from=${stage} /app/node_modules node_modules`);
  });

  it("runs as an unprivileged user, node itself as the command, with DATA_DIR a volume", () => {
    expect(last("USER")).toBe("USER node");
    expect(file.indexOf("USER node")).toBeLessThan(file.indexOf("CMD "));
    expect(last("ENV")).toContain("DATA_DIR=/data");
    expect(last("VOLUME")).toBe('VOLUME ["/data"]');
    expect(last("CMD")).toMatch(/^CMD \["node", .*"build\/server\.mjs"\]$/);
  });

  it("stops with SIGTERM and checks health on /_/ready through deploy/healthcheck.mjs", () => {
    expect(last("STOPSIGNAL")).toBe("STOPSIGNAL SIGTERM");
    expect(last("HEALTHCHECK")).toMatch(/CMD \["node", "deploy\/healthcheck\.mjs", "\/_\/(ready|live)"\]$/);
  });

  it("leaves installed packages, builds, data and .env out of the build context", () => {
    const ignored = text(".dockerignore").split("\n");
    for (const entry of ["node_modules", "build", "data", ".env", ".git"]) expect(ignored).toContain(entry);
  });
});

describe("deploy/healthcheck.mjs", () => {
  const run = (env: Record<string, string>, args: string[] = []) =>
    new Promise<number>((resolve) => {
      execFile(
        process.execPath,
        [path.join(root, "deploy/healthcheck.mjs"), ...args],
        { env: { PATH: process.env.PATH ?? "", ...env } as unknown as NodeJS.ProcessEnv },
        (err) => resolve(err ? ((err as { code?: number }).code ?? 1) : 0),
      );
    });

  it("exits 0 when the redirect origin's port answers 2xx on the path, 1 on anything else or nothing listening", async () => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(`${req.headers.host} ${req.url}`);
      res.writeHead(req.url === "/_/ready" ? 200 : 503).end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    try {
      expect(await run({ REDIRECT_URL: `http://go.example.test:${port}` }, ["/_/ready"])).toBe(0);
      expect(await run({ REDIRECT_URL: `http://go.example.test:${port}` }, ["/_/live"])).toBe(1);
      expect(seen).toEqual([`go.example.test:${port} /_/ready`, `go.example.test:${port} /_/live`]);
    } finally {
      await new Promise((r) => server.close(r));
    }
    expect(await run({ REDIRECT_URL: `http://go.example.test:${port}` })).toBe(1);
  });
});
