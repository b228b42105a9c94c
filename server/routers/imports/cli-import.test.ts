import { writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { and, eq, isNull } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { links } from "../../../db/schema";
import { runCli } from "../../admin/cli.test-helper";
import { createTestServer, type TestServer } from "../../test/harness";
import { startImportRunner, type ImportRunner } from "./runner";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const FIXTURES = path.join(root, "server/routers/imports/fixtures");

const cli = (args: string[], env: Record<string, string | undefined>) => runCli(args, env, { timeoutMs: 120_000 });

let t: TestServer;
let env: Record<string, string | undefined>;
let email: string;
let workspaceId: string;
let runner: ImportRunner;

beforeAll(async () => {
  t = await createTestServer();
  runner = startImportRunner(t.app, { pollMs: 100 }); // what main.ts starts
  // The server's variables: on PGlite the command line goes through the running server's admin endpoint.
  env = { APP_URL: t.appUrl, REDIRECT_URL: t.redirect, DATA_DIR: t.app.config.dataDir, DATABASE_URL: t.app.database.url };
  const u = await t.user();
  email = u.email;
  workspaceId = u.workspaceId;
});
afterAll(async () => {
  await runner?.stop();
  await t?.close();
});

describe(`npm run cli -- links:import (${process.env.DATABASE_URL ? "PostgreSQL" : "PGlite, through the running server"})`, () => {
  it("prints progress on stderr and one JSON summary {rows, created, skipped, rejected, rejects} on stdout; a second run creates nothing", async () => {
    const s = Math.random().toString(36).slice(2, 8);
    const file = path.join(t.app.config.dataDir, "mine.csv");
    writeFileSync(file, `url,slug,tags\nhttps://example.com/c1,c1-${s},x\nftp://bad,c2-${s},\nhttps://example.com/c3,,\n`);
    const r = await cli(["links:import", "--email", email, "--file", file], env);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      rows: 3,
      created: 2,
      skipped: 0,
      rejected: 1,
      rejects: [{ row: 2, error: "VALIDATION_FAILED", slug: `c2-${s}`, url: "ftp://bad", fields: { url: ["must be an absolute http or https URL"] } }],
    });
    expect(r.stderr).toMatch(/import [0-9a-z]{8}: 3 of 3 rows \(created 2, skipped 0, rejected 1\)/);
    const again = await cli(["links:import", "--email", email, "--file", file, "--format", "generic"], env);
    expect(JSON.parse(again.stdout)).toMatchObject({ rows: 3, created: 0, skipped: 2, rejected: 1 });
    const live = await t.app.db
      .select()
      .from(links)
      .where(and(eq(links.workspaceId, workspaceId), isNull(links.deletedAt)));
    expect(live.filter((l) => l.url.startsWith("https://example.com/c")).length).toBe(2);
  }, 60_000);

  it("--on-conflict generate gives a row whose slug another workspace holds a new slug, and prints its new short URL; a bad rule is one clear error", async () => {
    const s = Math.random().toString(36).slice(2, 8);
    const other = await t.user();
    const theirs = path.join(t.app.config.dataDir, `theirs-${s}.csv`);
    writeFileSync(theirs, `url,slug\nhttps://example.com/theirs-${s},bit-${s}\n`);
    expect((await cli(["links:import", "--email", other.email, "--file", theirs], env)).code).toBe(0);
    const mine = path.join(t.app.config.dataDir, `mine-${s}.csv`);
    writeFileSync(mine, `url,slug\nhttps://example.com/mine-${s},bit-${s}\n`);
    const refused = await cli(["links:import", "--email", email, "--file", mine], env);
    expect(JSON.parse(refused.stdout)).toMatchObject({ created: 0, rejected: 1, rejects: [{ row: 1, error: "LINK_ID_ALREADY_IN_USE", slug: `bit-${s}` }] });
    const r = await cli(["links:import", "--email", email, "--file", mine, "--on-conflict", "generate"], env);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ rows: 1, created: 1, rejected: 0 });
    expect(out.moved).toEqual([{ row: 1, slug: `bit-${s}`, url: `https://example.com/mine-${s}`, short_url: expect.stringMatching(/\/[0-9a-z]{4}$/) }]);
    const bad = await cli(["links:import", "--email", email, "--file", mine, "--on-conflict", "domain:nowhere.example"], env);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stderr.trim().split("\n").pop()!)).toMatchObject({ error: "VALIDATION_FAILED", message: expect.stringContaining("on_conflict") });
  }, 90_000);

  it("recognises an export by its header row (a Shlink export here)", async () => {
    const r = await cli(["links:import", "--email", email, "--file", path.join(FIXTURES, "shlink.csv")], env);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ rows: 3, created: 3, rejected: 0 });
  });

  it.each([
    ["a file that is not CSV", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]), /not a CSV text file/],
    ["an empty file", Buffer.alloc(0), /is empty/],
    ["invalid UTF-8", Buffer.from([0x75, 0x72, 0x6c, 0x0a, 0xff, 0xfe, 0x0a]), /not UTF-8/],
  ])("answers %s with one clear error, exit 1, nothing imported", async (name, content, message) => {
    const file = path.join(t.app.config.dataDir, `bad-${name.replace(/\W/g, "")}.csv`);
    writeFileSync(file, content);
    const r = await cli(["links:import", "--email", email, "--file", file], env);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    const failure = JSON.parse(r.stderr.trim().split("\n").pop()!);
    expect(failure).toEqual({ error: "VALIDATION_FAILED", message: expect.stringMatching(message) });
  });

  it("refuses a file over the 20 MB limit before reading it, and bad arguments with usage (exit 2)", async () => {
    const big = path.join(t.app.config.dataDir, "big.csv");
    writeFileSync(big, Buffer.alloc(20 * 1024 * 1024 + 1, "a"));
    const r = await cli(["links:import", "--email", email, "--file", big], env);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stderr.trim())).toEqual({ error: "VALIDATION_FAILED", message: "file: is larger than 20 MB" });
    expect((await cli(["links:import", "--email", email], env)).code).toBe(2);
    expect((await cli(["links:import", "--email", email, "--file", big, "--format", "csv"], env)).code).toBe(2);
    const nobody = await cli(["links:import", "--email", "nobody@example.com", "--file", path.join(FIXTURES, "generic.csv")], env);
    expect(JSON.parse(nobody.stderr.trim())).toMatchObject({ error: "NOT_FOUND" });
  }, 90_000);
});
