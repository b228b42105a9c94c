import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiTokens } from "../../db/schema";
import { tempDataDir } from "../../db/test-db";
import { createTestServer, http, type TestServer } from "../test/harness";
import { root, runCli } from "./cli.test-helper";
import { knownMigrations } from "./operations";

const postgres = process.env.DATABASE_URL;

/** Runs the command line with only the given environment, its logs silent unless it says otherwise. */
const cli = (args: string[], env: Record<string, string | undefined>) => runCli<any>(args, env, { timeoutMs: 90_000, defaults: { LOG_LEVEL: "silent" } });

/** A new, empty database: a PostgreSQL database of its own, or a new data directory for PGlite. */
async function emptyDatabaseEnv(): Promise<Record<string, string | undefined>> {
  const dataDir = tempDataDir();
  if (!postgres) return { DATA_DIR: dataDir };
  const { default: pg } = await import("postgres");
  const name = `t_cli_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const admin = pg(postgres, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(postgres);
  url.pathname = `/${name}`;
  dropLater.push(name);
  return { DATA_DIR: dataDir, DATABASE_URL: url.href };
}
const dropLater: string[] = [];

let t: TestServer;
let env: Record<string, string | undefined>;

beforeAll(async () => {
  t = await createTestServer({ LINK_HEALTH_CHECKS: "off" });
  // The server's own variables: PostgreSQL's test database, or the data directory whose embedded
  // database the running server holds (reached through its admin endpoint).
  env = { APP_URL: t.appUrl, REDIRECT_URL: t.redirect, DATA_DIR: t.app.config.dataDir, DATABASE_URL: t.app.database.url };
});
afterAll(async () => {
  await t?.close();
  if (postgres && dropLater.length) {
    const { default: pg } = await import("postgres");
    const admin = pg(postgres, { max: 1, onnotice: () => {} });
    for (const name of dropLater) await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
});

describe("cli --help and --version", () => {
  it("--help prints readable text naming every command and exits 0, with no configuration needed", async () => {
    const r = await cli(["--help"], { APP_URL: "not a url" });
    expect(r.code).toBe(0);
    for (const command of ["user:create", "user:list", "user:delete", "token:create", "token:revoke", "backup:create", "backup:restore", "db:migrate"]) {
      expect(r.stdout).toContain(command);
    }
    expect(r.stderr).toBe("");
  }, 60_000);

  it("--version prints the package's name and version and exits 0", async () => {
    const r = await cli(["--version"], {});
    const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
    expect([r.code, r.stdout]).toEqual([0, `${pkg.name} ${pkg.version}\n`]);
  }, 60_000);

  it("a failure is one JSON line on stderr with exit code 1", async () => {
    const r = await cli(["user:delete", "--email", "nobody-here@example.com"], env);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(JSON.parse(r.stderr)).toEqual({ error: "NOT_FOUND", message: "no user with this e-mail" });
  }, 60_000);
});

describe(`operator commands while the server runs (${postgres ? "PostgreSQL" : "PGlite"})`, () => {
  it("user:list prints every user with plan and admin flag", async () => {
    const u = await t.user({ plan: "pro", isAdmin: true });
    const r = await cli(["user:list"], env);
    expect(r.code).toBe(0);
    expect(r.json.users).toContainEqual({
      id: u.id,
      email: u.email,
      name: null,
      plan: "pro",
      is_admin: true,
      workspace_id: u.workspaceId,
      created_at: expect.any(Number),
    });
  }, 60_000);

  it("token:revoke ends a token: the API answers 401 for it from then on", async () => {
    const u = await t.user();
    expect((await http(`${t.api}/account`, { headers: u.auth })).status).toBe(200);
    const [{ id }] = await t.app.db.select({ id: apiTokens.id }).from(apiTokens).where(eq(apiTokens.userId, u.id));
    const r = await cli(["token:revoke", "--id", id], env);
    expect(r.code).toBe(0);
    expect(r.json).toEqual({ id, user_id: u.id, revoked_at: expect.any(Number) });
    expect((await http(`${t.api}/account`, { headers: u.auth })).status).toBe(401);
    expect((await cli(["token:revoke", "--id", "tok-none"], env)).json.error).toBe("NOT_FOUND");
  }, 60_000);

  it("user:delete removes the user and their links; the token stops working", async () => {
    const u = await t.user();
    const link = await http(`${t.api}/links`, { method: "POST", headers: u.auth, json: { url: "https://example.com/gone" } });
    expect(link.status).toBe(201);
    const r = await cli(["user:delete", "--email", u.email], env);
    expect(r.code).toBe(0);
    expect(r.json).toEqual({ deleted: u.id, email: u.email });
    expect((await http(`${t.api}/account`, { headers: u.auth })).status).toBe(401);
    expect((await http(link.json.short_url)).status).not.toBe(301);
    expect((await cli(["user:list"], env)).json.users.map((x: { id: string }) => x.id)).not.toContain(u.id);
  }, 60_000);

  it("backup:create writes a backup while the server runs, and backup:restore brings it into an empty database", async () => {
    const u = await t.user();
    expect((await http(`${t.api}/links`, { method: "POST", headers: u.auth, json: { url: "https://example.com/kept" } })).status).toBe(201);
    const file = path.join(tempDataDir(), "b.jsonl.gz");
    const made = await cli(["backup:create", "--out", file], env);
    expect(made.code).toBe(0);
    expect(made.json).toMatchObject({ file, rows: { links: expect.any(Number), users: expect.any(Number) } });
    expect(existsSync(file)).toBe(true);

    const fresh = await emptyDatabaseEnv();
    const restored = await cli(["backup:restore", "--in", file], fresh);
    expect(restored.code).toBe(0);
    expect(restored.json.rows).toEqual(made.json.rows);
    expect((await cli(["user:list"], fresh)).json.users.map((x: { email: string }) => x.email)).toContain(u.email);
    // Once more into the same database: it is no longer empty.
    const again = await cli(["backup:restore", "--in", file], fresh);
    expect([again.code, again.json.error]).toEqual([1, "DATABASE_NOT_EMPTY"]);
  }, 180_000);

  it("backup:restore never writes into the running server's database", async () => {
    await t.user();
    const file = path.join(tempDataDir(), "self.jsonl.gz");
    expect((await cli(["backup:create", "--out", file], env)).code).toBe(0);
    const r = await cli(["backup:restore", "--in", file], env);
    // On PGlite the server holds the database (its caches would not know); on PostgreSQL it has users.
    expect([r.code, r.json.error]).toEqual([1, postgres ? "DATABASE_NOT_EMPTY" : "SERVICE_UNAVAILABLE"]);
  }, 90_000);

  it("a relative --out is the operator's directory, not the running server's", async () => {
    const here = tempDataDir();
    const r = await cli(["backup:create", "--out", "relative.jsonl.gz"], { ...env, INIT_CWD: here });
    expect([r.code, r.json.file]).toEqual([0, path.join(here, "relative.jsonl.gz")]);
    expect(existsSync(path.join(here, "relative.jsonl.gz"))).toBe(true);
  }, 90_000);

  it("backup:create to a place it cannot write is a usage error, and the server goes on answering", async () => {
    const r = await cli(["backup:create", "--out", path.join(tempDataDir(), "no-such-dir", "b.jsonl.gz")], env);
    expect([r.code, r.json.error]).toEqual([2, "USAGE"]);
    expect(r.json.message).toContain("cannot be written (ENOENT)");
    expect((await http(`${t.appUrl}/_/live`)).status).toBe(200);
    expect((await cli(["user:list"], env)).code).toBe(0);
  }, 90_000);

  it("backup:restore refuses an unreadable file as a usage error", async () => {
    const r = await cli(["backup:restore", "--in", path.join(tempDataDir(), "absent.gz")], await emptyDatabaseEnv());
    expect([r.code, r.json.error]).toEqual([2, "USAGE"]);
  }, 90_000);
});

describe(`db:migrate (${postgres ? "PostgreSQL" : "PGlite"})`, () => {
  it("--dry-run lists the pending migrations and applies none; db:migrate applies them; then none is pending", async () => {
    const fresh = await emptyDatabaseEnv();
    const all = knownMigrations().map((m) => m.tag);
    const dry = await cli(["db:migrate", "--dry-run"], fresh);
    expect([dry.code, dry.json]).toEqual([0, { pending: all }]);
    expect((await cli(["db:migrate", "--dry-run"], fresh)).json).toEqual({ pending: all });
    const applied = await cli(["db:migrate"], fresh);
    expect([applied.code, applied.json]).toEqual([0, { applied: all }]);
    expect((await cli(["db:migrate", "--dry-run"], fresh)).json).toEqual({ pending: [] });
    expect((await cli(["db:migrate"], fresh)).json).toEqual({ applied: [] });
  }, 240_000);

  it("through the running server: nothing is pending (servers migrate at start)", async () => {
    const r = await cli(["db:migrate", "--dry-run"], env);
    expect([r.code, r.json]).toEqual([0, { pending: [] }]);
  }, 60_000);
});
