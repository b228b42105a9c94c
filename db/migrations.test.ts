import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { migrate } from "drizzle-orm/pglite/migrator";
import { expect, it } from "vitest";
import { migrationsFolder } from "./client";

/** The migrations up to (not including) `tag`, in a folder of their own. */
function folderBefore(tag: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "migrations-"));
  cpSync(migrationsFolder, dir, { recursive: true });
  const journalPath = path.join(dir, "meta/_journal.json");
  const journal = JSON.parse(readFileSync(journalPath, "utf8")) as { entries: { tag: string }[] };
  journal.entries = journal.entries.slice(
    0,
    journal.entries.findIndex((e) => e.tag === tag),
  );
  writeFileSync(journalPath, JSON.stringify(journal));
  return dir;
}

it("existing data migrates to teams: each user's workspace becomes personal with them as owner, tokens bind to it, public has no members", async () => {
  const client = await PGlite.create("memory://");
  const db = drizzle(client);
  await migrate(db, { migrationsFolder: folderBefore("0003_extensions") });
  await client.exec(`
    INSERT INTO workspaces (id, name, created_at) VALUES ('ws000001', 'Ann''s', 1);
    INSERT INTO users (id, email, workspace_id, created_at) VALUES ('us000001', 'ann@example.com', 'ws000001', 2);
    INSERT INTO api_tokens (id, user_id, name, prefix, token_hash, created_at) VALUES ('tk000001', 'us000001', 'ci', 'tok_abcd', 'h', 3);
    INSERT INTO links (id, workspace_id, slug, url, created_at, updated_at) VALUES ('lk000001', 'ws000001', 'abcd', 'https://example.com/', 4, 4);
  `);
  await migrate(db, { migrationsFolder });
  const q = async (sql: string) => (await client.query<Record<string, unknown>>(sql)).rows;
  expect(await q(`SELECT workspace_id, user_id, role FROM memberships`)).toEqual([{ workspace_id: "ws000001", user_id: "us000001", role: "owner" }]);
  expect(await q(`SELECT id, personal FROM workspaces ORDER BY id`)).toEqual([
    { id: "public", personal: false },
    { id: "ws000001", personal: true },
  ]);
  expect(await q(`SELECT workspace_id FROM api_tokens`)).toEqual([{ workspace_id: "ws000001" }]);
  // The default domain's generated namespace still counts the existing link, and only default-domain links.
  expect(await q(`SELECT free FROM slug_blocks WHERE prefix = 'abc'`)).toEqual([{ free: 35 }]);
  await client.exec(
    `INSERT INTO links (id, workspace_id, domain_id, slug, url, created_at, updated_at) VALUES ('lk000002', 'ws000001', 'dm000001', 'abce', 'https://example.com/', 5, 5)`,
  );
  expect(await q(`SELECT free FROM slug_blocks WHERE prefix = 'abc'`)).toEqual([{ free: 35 }]);
  await client.close();
});
