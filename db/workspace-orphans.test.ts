import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { migrate } from "drizzle-orm/pglite/migrator";
import { expect, it } from "vitest";
import { migrationsFolder } from "./client";

/**
 * The migrations, up to (not including) `tag` when given, in a folder of their own. The migrator
 * skips a migration whose journal time is not after the newest applied one's, and the journal's
 * times are not all in order (0007 carries a time ahead of those generated after it): the copy
 * puts them in order, so a database migrated in two steps runs every migration, as here.
 */
function folder(tag?: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "migrations-"));
  cpSync(migrationsFolder, dir, { recursive: true });
  const journalPath = path.join(dir, "meta/_journal.json");
  const journal = JSON.parse(readFileSync(journalPath, "utf8")) as { entries: { tag: string; when: number }[] };
  for (let i = 1; i < journal.entries.length; i++) journal.entries[i].when = Math.max(journal.entries[i].when, journal.entries[i - 1].when + 1);
  if (tag)
    journal.entries = journal.entries.slice(
      0,
      journal.entries.findIndex((e) => e.tag === tag),
    );
  writeFileSync(journalPath, JSON.stringify(journal));
  return dir;
}

it("rows of deleted workspaces left by a race are removed as the deletion would have (slugs freed, tokens revoked, sessions back home, clicks kept) before the foreign keys; a live workspace keeps everything", async () => {
  const client = await PGlite.create("memory://");
  await migrate(drizzle(client), { migrationsFolder: folder("0010_import_options") });
  // 'live' exists; 'gone' was deleted while a member was still creating in it.
  await client.exec(`
    INSERT INTO workspaces (id, name, personal, created_at) VALUES ('live0001', 'Live', true, 1);
    INSERT INTO users (id, email, workspace_id, created_at) VALUES ('user0001', 'ann@example.com', 'live0001', 1);
    INSERT INTO sessions (id, user_id, expires_at, created_at, workspace_id) VALUES ('s-live', 'user0001', now() + interval '1 day', 1, 'live0001'), ('s-gone', 'user0001', now() + interval '1 day', 1, 'gone0001');
    INSERT INTO api_tokens (id, user_id, name, prefix, token_hash, workspace_id, created_at) VALUES ('t-live', 'user0001', 'a', 'tok_a', 'ha', 'live0001', 1), ('t-gone', 'user0001', 'b', 'tok_b', 'hb', 'gone0001', 1);
    INSERT INTO links (id, workspace_id, slug, url, kind, created_at, updated_at) VALUES
      ('l-live', 'live0001', 'keep', 'https://example.com/', 'link', 1, 1),
      ('l-gone', 'gone0001', 'orphan', 'https://example.com/', 'link', 1, 1),
      ('l-tree', 'gone0001', 'orphan-tree', 'https://example.com/t', 'linktree', 1, 1),
      ('l-item', 'gone0001', 'oitm', 'https://example.com/i', 'linktree_item', 1, 1);
    INSERT INTO linktrees (id, workspace_id, link_id, title, created_at, updated_at) VALUES ('tree0001', 'gone0001', 'l-tree', 'T', 1, 1);
    INSERT INTO linktree_items (id, linktree_id, link_id, title, position, created_at, updated_at) VALUES ('item0001', 'tree0001', 'l-item', 'I', 0, 1, 1);
    INSERT INTO domains (id, workspace_id, name, verification_value, verified, created_at) VALUES
      ('d-live', 'live0001', 'go.live.example', 'v', true, 1), ('d-gone', 'gone0001', 'go.gone.example', 'v', true, 1);
    INSERT INTO import_jobs (id, workspace_id, user_id, format, source_path, created_at, updated_at) VALUES ('job-gone', 'gone0001', 'user0001', 'generic', 'x.csv', 1, 1);
    INSERT INTO clicks (link_id, ts, workspace_id, timestamp, device, rule) VALUES ('l-gone', '0000000000001#a', 'gone0001', 1, 'desktop', 'url');
  `);
  await migrate(drizzle(client), { migrationsFolder: folder() });
  const q = async (sql: string) => (await client.query<Record<string, unknown>>(sql)).rows;
  expect(await q(`SELECT id FROM links ORDER BY id`)).toEqual([{ id: "l-live" }]);
  expect(await q(`SELECT id FROM linktrees`)).toEqual([]);
  expect(await q(`SELECT id FROM linktree_items`)).toEqual([]);
  expect(await q(`SELECT id FROM domains`)).toEqual([{ id: "d-live" }]);
  expect(await q(`SELECT id FROM import_jobs`)).toEqual([]);
  expect(await q(`SELECT id, workspace_id FROM sessions ORDER BY id`)).toEqual([
    { id: "s-gone", workspace_id: null },
    { id: "s-live", workspace_id: "live0001" },
  ]);
  expect(await q(`SELECT id, revoked_at IS NOT NULL AS revoked FROM api_tokens ORDER BY id`)).toEqual([
    { id: "t-gone", revoked: true },
    { id: "t-live", revoked: false },
  ]);
  expect(await q(`SELECT link_id FROM clicks`)).toEqual([{ link_id: "l-gone" }]);
  // The slugs are free again, and from now on the database refuses a row of a workspace that is gone.
  await client.exec(
    `INSERT INTO links (id, workspace_id, slug, url, created_at, updated_at) VALUES ('l-again', 'live0001', 'orphan', 'https://example.com/', 2, 2)`,
  );
  await expect(
    client.exec(`INSERT INTO links (id, workspace_id, slug, url, created_at, updated_at) VALUES ('l-bad', 'gone0001', 'bad', 'https://example.com/', 2, 2)`),
  ).rejects.toThrow(/foreign key/);
  await expect(
    client.exec(`INSERT INTO domains (id, workspace_id, name, verification_value, created_at) VALUES ('d-bad', 'gone0001', 'x.example', 'v', 2)`),
  ).rejects.toThrow(/foreign key/);
  await client.close();
}, 120_000);
