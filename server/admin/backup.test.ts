import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Db } from "../../db/client";
import { sessions } from "../../db/schema";
import { createTestDatabase, pgliteTemplate, tempDataDir } from "../../db/test-db";
import { createTestServer, http, pollUntil, type TestServer } from "../test/harness";
import { createBackup, restoreBackup, tablesInOrder } from "./backup";
import { OperatorError, rowsOf } from "./operations";

const BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";
const driver = process.env.DATABASE_URL ? "PostgreSQL" : "PGlite";

/** Every table's row count and a checksum of its rows (as PostgreSQL writes them, sorted). */
async function fingerprint(db: Db): Promise<Record<string, { rows: number; md5: string }>> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`set local timezone to 'UTC'`);
    const out: Record<string, { rows: number; md5: string }> = {};
    for (const table of await tablesInOrder(tx)) {
      const [r] = await rowsOf<{ n: number; h: string }>(
        tx,
        sql`select count(*)::int as n, md5(coalesce(string_agg(row_to_json(t)::text, E'\n' order by row_to_json(t)::text), '')) as h from ${sql.identifier(table)} t`,
      );
      out[table] = { rows: Number(r.n), md5: r.h };
    }
    return out;
  });
}

const emptyPglite = async () => openDatabase({ pgliteLoadDataDir: new Blob([readFileSync(await pgliteTemplate())]), migrate: false });

let t: TestServer;
let source: Awaited<ReturnType<typeof fingerprint>>;
let file: string;

beforeAll(async () => {
  t = await createTestServer({ LINK_HEALTH_CHECKS: "off" });
  const u = await t.user({ plan: "pro", name: "Backup Owner" });
  const link = await http(`${t.api}/links`, {
    method: "POST",
    headers: u.auth,
    json: { url: "https://example.com/a?x=1", tags: ["b", "2026"], og_title: 'line\nbreak ☃ "quoted"', targeting: { geo: { de: "https://example.de/" } } },
  });
  expect(link.status).toBe(201);
  for (let i = 0; i < 5; i++) await http(`${t.api}/links`, { method: "POST", headers: u.auth, json: { url: `https://example.com/${i}` } });
  expect((await http(link.json.short_url, { headers: { "user-agent": BROWSER } })).status).toBe(301);
  await pollUntil(
    async () => (await rowsOf<{ n: number }>(t.app.db, sql`select count(*)::int as n from clicks`))[0].n,
    (n) => Number(n) === 1,
    5000,
  );
  // A float and a timestamptz, the types whose text is easiest to get subtly wrong.
  await t.app.db.execute(sql`update clicks set lat = 52.520008, lng = 13.404954`);
  await t.app.db.insert(sessions).values({ id: "s-backup", userId: u.id, expiresAt: new Date(Date.UTC(2030, 0, 2, 3, 4, 5, 678)), createdAt: Date.now() });
  // The service settles (token last-use times are written just after their request).
  let before = await fingerprint(t.app.db);
  for (;;) {
    await new Promise((r) => setTimeout(r, 300));
    const now = await fingerprint(t.app.db);
    if (JSON.stringify(now) === JSON.stringify(before)) break;
    before = now;
  }
  file = path.join(tempDataDir(), "backup.jsonl.gz");
  await createBackup(t.app.db, file);
  source = await fingerprint(t.app.db);
}, 120_000);
afterAll(() => t?.close());

describe(`backups (${driver})`, () => {
  it("a backup taken while the server runs restores into an empty database with every table's rows and checksum equal", async () => {
    const target = await createTestDatabase();
    try {
      const summary = await restoreBackup(target.db, file);
      expect(await fingerprint(target.db)).toEqual(source);
      expect(summary.rows.links).toBe(6);
      expect(source.clicks.rows).toBe(1);
      expect(source.sessions.rows).toBeGreaterThan(0);
    } finally {
      await target.dispose();
    }
  }, 60_000);

  it("the file is gzipped JSON lines: a header naming every table, each table's rows, and an end line with the counts", () => {
    const lines = gunzipSync(readFileSync(file)).toString("utf8").trimEnd().split("\n");
    const header = JSON.parse(lines[0]);
    expect(header).toMatchObject({ $: "backup", format: "linkshort-backup", version: 1, migrations: { count: expect.any(Number) } });
    expect([...header.tables].sort()).toEqual(Object.keys(source).sort());
    const end = JSON.parse(lines.at(-1)!);
    expect(end).toEqual({ $: "end", rows: Object.fromEntries(Object.entries(source).map(([k, v]) => [k, v.rows])) });
    // Parents before the tables whose foreign keys point at them.
    expect(header.tables.indexOf("workspaces")).toBeLessThan(header.tables.indexOf("users"));
    expect(header.tables.indexOf("links")).toBeLessThan(header.tables.indexOf("linktrees"));
  });

  it("a restore into a database with users or links refuses with DATABASE_NOT_EMPTY and changes nothing", async () => {
    const err = await restoreBackup(t.app.db, file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OperatorError);
    expect((err as OperatorError).code).toBe("DATABASE_NOT_EMPTY");
    expect(await fingerprint(t.app.db)).toEqual(source);
  }, 60_000);

  it("a cut-short backup restores nothing: BACKUP_INVALID, and the database stays empty", async () => {
    const whole = gunzipSync(readFileSync(file)).toString("utf8").split("\n");
    const cut = path.join(tempDataDir(), "cut.jsonl.gz");
    writeFileSync(cut, gzipSync(whole.slice(0, whole.length - 3).join("\n") + "\n"));
    const truncatedGzip = path.join(tempDataDir(), "truncated.jsonl.gz");
    const bytes = readFileSync(file);
    writeFileSync(truncatedGzip, bytes.subarray(0, Math.floor(bytes.length * 0.9)));
    const target = await createTestDatabase();
    try {
      const empty = await fingerprint(target.db);
      for (const f of [cut, truncatedGzip]) {
        const err = await restoreBackup(target.db, f).catch((e: unknown) => e);
        expect((err as OperatorError).code, f).toBe("BACKUP_INVALID");
        expect(await fingerprint(target.db)).toEqual(empty);
      }
    } finally {
      await target.dispose();
    }
  }, 60_000);

  it("a file that is not a backup of this service is refused with BACKUP_INVALID", async () => {
    const other = path.join(tempDataDir(), "other.gz");
    writeFileSync(other, gzipSync('{"hello":"world"}\n'));
    const plain = path.join(tempDataDir(), "plain.txt");
    writeFileSync(plain, "not gzip at all\n");
    const target = await createTestDatabase();
    try {
      for (const f of [other, plain]) expect(((await restoreBackup(target.db, f).catch((e: unknown) => e)) as OperatorError).code, f).toBe("BACKUP_INVALID");
    } finally {
      await target.dispose();
    }
  }, 60_000);

  it("a backup made at another migration is refused with MIGRATIONS_DIFFER", async () => {
    const lines = gunzipSync(readFileSync(file)).toString("utf8").split("\n");
    const header = JSON.parse(lines[0]);
    lines[0] = JSON.stringify({ ...header, migrations: { count: header.migrations.count - 1, last: header.migrations.last - 1 } });
    const older = path.join(tempDataDir(), "older.jsonl.gz");
    writeFileSync(older, gzipSync(lines.join("\n")));
    const target = await createTestDatabase();
    try {
      expect(((await restoreBackup(target.db, older).catch((e: unknown) => e)) as OperatorError).code).toBe("MIGRATIONS_DIFFER");
    } finally {
      await target.dispose();
    }
  }, 60_000);

  it.runIf(process.env.DATABASE_URL)(
    "a backup moves between PostgreSQL and PGlite both ways with every table's rows and checksum equal",
    async () => {
      const embedded = await emptyPglite();
      const target = await createTestDatabase();
      try {
        await restoreBackup(embedded.db, file);
        expect(await fingerprint(embedded.db)).toEqual(source);
        const fromPglite = path.join(tempDataDir(), "pglite.jsonl.gz");
        await createBackup(embedded.db, fromPglite);
        await restoreBackup(target.db, fromPglite);
        expect(await fingerprint(target.db)).toEqual(source);
      } finally {
        await embedded.close();
        await target.dispose();
      }
    },
    120_000,
  );
  // Last: it writes to the source database while the backup runs.
  it("a backup taken while visits and new links go on is one moment: restored clicks match their hourly counts, and slug blocks their links", async () => {
    const u = await t.user({ plan: "pro" });
    const target = (await http(`${t.api}/links`, { method: "POST", headers: u.auth, json: { url: "https://example.com/busy" } })).json;
    let stop = false;
    const load = (async () => {
      while (!stop) {
        await Promise.all([
          ...Array.from({ length: 4 }, () => http(target.short_url, { headers: { "user-agent": BROWSER } })),
          http(`${t.api}/links`, { method: "POST", headers: u.auth, json: { url: "https://example.com/during" } }),
        ]);
        // A breath between rounds: the writes go on through the backup without starving it.
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    // Until the visits' clicks are being written (batched after the answers; slow on a busy machine):
    // the backup must start while they go in.
    for (let waited = 0; ; waited += 100) {
      const [c] = await rowsOf<{ n: number }>(t.app.db, sql`select count(*)::int as n from clicks`);
      if (Number(c.n) > source.clicks.rows || waited > 30_000) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const busy = path.join(tempDataDir(), "busy.jsonl.gz");
    const summary = await createBackup(t.app.db, busy);
    await new Promise((r) => setTimeout(r, 300));
    stop = true;
    await load;
    const restored = await createTestDatabase();
    try {
      await restoreBackup(restored.db, busy);
      const [r] = await rowsOf<{ clicks: number; counted: number }>(
        restored.db,
        sql`select (select count(*) from clicks)::int as clicks, (select coalesce(sum(count), 0) from click_rollups)::int as counted`,
      );
      expect(Number(r.clicks)).toBe(Number(r.counted));
      // The 46,656 slug blocks are read well before the links (foreign-key order): their free counts must match the links read.
      const [b] = await rowsOf<{ taken: number; links: number }>(
        restored.db,
        sql`select (select sum(36 - free) from slug_blocks)::int as taken,
                   (select count(*) from links where deleted_at is null and domain_id is null and slug ~ '^[0-9a-z]{4}$')::int as links`,
      );
      expect(Number(b.taken)).toBe(Number(b.links));
      expect(Number(r.clicks)).toBeGreaterThan(source.clicks.rows);
      // Writes went on after the backup: the source has more than the file.
      const [now] = await rowsOf<{ n: number }>(t.app.db, sql`select count(*)::int as n from links`);
      expect(summary.rows.links).toBeLessThan(Number(now.n));
    } finally {
      await restored.dispose();
    }
  }, 120_000);
});
