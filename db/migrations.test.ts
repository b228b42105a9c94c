import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
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

/**
 * Runs `0005_click_partitions` over existing clicks: on PGlite, and on PostgreSQL too when
 * DATABASE_URL is set. `q` runs a statement and returns its rows.
 */
async function withDatabaseBefore(tag: string, fn: (q: (sql: string) => Promise<Record<string, unknown>[]>, migrateAll: () => Promise<void>) => Promise<void>) {
  const before = folderBefore(tag);
  const client = await PGlite.create("memory://");
  const db = drizzle(client);
  await migrate(db, { migrationsFolder: before });
  await fn(
    async (sql) => (await client.query<Record<string, unknown>>(sql)).rows,
    () => migrate(db, { migrationsFolder }),
  );
  await client.close();
  const url = process.env.DATABASE_URL;
  if (!url) return;
  const { default: postgres } = await import("postgres");
  const { drizzle: pgDrizzle } = await import("drizzle-orm/postgres-js");
  const { migrate: pgMigrate } = await import("drizzle-orm/postgres-js/migrator");
  const name = `mig_${randomBytes(5).toString("hex")}`;
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const dbUrl = new URL(url);
  dbUrl.pathname = `/${name}`;
  const pg = postgres(dbUrl.href, { max: 1, onnotice: () => {} });
  try {
    await pgMigrate(pgDrizzle(pg), { migrationsFolder: before });
    await fn(
      async (sql) => [...(await pg.unsafe(sql))] as Record<string, unknown>[],
      () => pgMigrate(pgDrizzle(pg), { migrationsFolder }),
    );
  } finally {
    await pg.end();
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

it("existing clicks migrate to month partitions: every row kept in its month's partition, later months made ahead, the primary key still global", async () => {
  const now = Date.now();
  const month = (ms: number) => `clicks_${new Date(ms).toISOString().slice(0, 7).replace("-", "_")}`;
  const nextMonth = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth() + 1, 1);
  const old = now - 200 * 86_400_000; // within the two years that get partitions
  const far = Date.UTC(2040, 0, 1);
  await withDatabaseBefore("0005_click_partitions", async (q, migrateAll) => {
    const row = (ms: number, r: string) => `('lk000001', '${ms}#${r}', 'public', ${ms}, 'desktop', 'url')`;
    await q(`INSERT INTO clicks (link_id, ts, workspace_id, "timestamp", device, rule) VALUES ${row(old, "a")}, ${row(now, "b")}, ${row(far, "c")}`);
    await migrateAll();
    const placed = await q(`SELECT tableoid::regclass::text AS p, "timestamp"::text AS t FROM clicks ORDER BY ts`);
    expect(placed).toEqual([
      { p: month(old), t: String(old) },
      { p: month(now), t: String(now) },
      { p: "clicks_default", t: String(far) },
    ]);
    expect(await q(`SELECT to_regclass('${month(nextMonth)}')::text AS r`)).toEqual([{ r: month(nextMonth) }]);
    expect(await q(`SELECT count(*)::int AS n FROM pg_partitioned_table WHERE partrelid = 'clicks'::regclass`)).toEqual([{ n: 1 }]);
    await expect(q(`INSERT INTO clicks (link_id, ts, workspace_id, "timestamp", device, rule) VALUES ${row(old, "a")}`)).rejects.toThrow(/duplicate key/);
    await q(`INSERT INTO clicks (link_id, ts, workspace_id, "timestamp", device, rule) VALUES ${row(nextMonth + 1, "d")}`);
    expect(await q(`SELECT tableoid::regclass::text AS p FROM clicks WHERE ts LIKE '${nextMonth + 1}#%'`)).toEqual([{ p: month(nextMonth) }]);
  });
}, 120_000); // two databases migrated from scratch, on a busy machine

it("every migration is applied to a database migrated before it: the journal's times strictly increase (the migrator skips a migration older than the newest applied)", () => {
  const journal = JSON.parse(readFileSync(path.join(migrationsFolder, "meta/_journal.json"), "utf8")) as { entries: { tag: string; when: number }[] };
  const late = journal.entries.filter((e, i) => i > 0 && e.when <= journal.entries[i - 1].when).map((e) => e.tag);
  expect(late).toEqual([]);
});

it("stored idempotent answers keep their status and body when the column becomes json, and a new answer keeps its members' order", async () => {
  await withDatabaseBefore("0021_idempotent_answer_text", async (q, migrateAll) => {
    const row = (id: string, body: string) => `('${id}', 'w:ws000001', 'key-${id}', 'f', 'done', 201, '${body}', 1, 1)`;
    const columns = `(id, scope, key, fingerprint, state, status, body, created_at, lease_until)`;
    await q(`INSERT INTO idempotency_keys ${columns} VALUES ${row("ik000001", '{"ok": true, "data": {"id": "lk000001", "slug": "abcd"}}')}`);
    await migrateAll();
    expect(await q(`SELECT status, body::text AS body FROM idempotency_keys WHERE id = 'ik000001'`)).toEqual([
      { status: 201, body: '{"ok": true, "data": {"id": "lk000001", "slug": "abcd"}}' },
    ]);
    // jsonb orders members by length, then bytes: "slug" would come before "short_url" and "id" first.
    await q(`INSERT INTO idempotency_keys ${columns} VALUES ${row("ik000002", '{"ok":true,"data":{"slug":"abcd","short_url":"x","id":"lk000002"}}')}`);
    expect(await q(`SELECT body::text AS body FROM idempotency_keys WHERE id = 'ik000002'`)).toEqual([
      { body: '{"ok":true,"data":{"slug":"abcd","short_url":"x","id":"lk000002"}}' },
    ]);
  });
}, 120_000);
