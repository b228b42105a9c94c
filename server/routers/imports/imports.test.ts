import { existsSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { and, eq, isNull } from "drizzle-orm";
import { stringify } from "csv-stringify/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { domains, importJobs, links } from "../../../db/schema";
import { createTestApp, type TestApp, type TestUser } from "../../test/harness";
import { IMPORT_MAX_BYTES } from "./csv-file";
import { exportLinksCsv } from "./export";
import { detectFormat, parseTime, type ImportFormat, type Mapping } from "./formats";
import {
  checkOptions,
  createImportJob,
  ensureUploadsDir,
  stageUpload,
  jobFile,
  prepareImport,
  runImportJob,
  summary,
  uploadName,
  type RunOptions,
} from "./imports.service";
import { claimJob, claimNextJob } from "./runner";
import type { ImportOptions } from "../../../db/schema";

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures");
let t: TestApp;
let alice: TestUser;
let n = 0;

beforeAll(async () => {
  t = await createTestApp();
  alice = await t.user();
});
afterAll(() => t?.close());

const deps = () => ({ db: t.app.db, config: t.app.config, invalidateSlugs: t.app.invalidateSlugs, driver: t.app.database.driver });

/** A file's content into a fresh upload of DATA_DIR. */
async function upload(content: string | Buffer): Promise<string> {
  const file = path.join(await ensureUploadsDir(t.app.config.dataDir), uploadName("test"));
  writeFileSync(file, content);
  return file;
}

/** Imports the content for `user` the way the command line does on PostgreSQL: job made already claimed, then run here. */
async function importCsv(
  content: string | Buffer,
  o: { user?: TestUser; format?: ImportFormat | "auto"; mapping?: Mapping; run?: RunOptions; options?: ImportOptions } = {},
) {
  const user = o.user ?? alice;
  const file = await upload(content);
  const prepared = await prepareImport(file, o.format ?? "auto", o.mapping);
  const owner = `test-${++n}`;
  const job = await createImportJob(deps(), { workspaceId: user.workspaceId, userId: user.id, upload: file, prepared, leaseOwner: owner, options: o.options });
  const result = await runImportJob(deps(), job.id, owner, o.run);
  const [row] = await t.app.db.select().from(importJobs).where(eq(importJobs.id, job.id));
  return {
    result,
    job: row,
    summary: summary({
      ...job,
      rows: row.rowsTotal,
      created: row.created,
      skipped: row.skipped,
      rejected: row.rejected,
      rejects: row.rejects,
      moved: row.moved,
    }),
  };
}

const fixture = (name: string) => readFileSync(path.join(FIXTURES, name));
const live = (workspaceId: string) =>
  t.app.db
    .select()
    .from(links)
    .where(and(eq(links.workspaceId, workspaceId), isNull(links.deletedAt)));
const bySlug = async (workspaceId: string) => new Map((await live(workspaceId)).map((l) => [l.slug, l]));
const rnd = () => Math.random().toString(36).slice(2, 8);

describe("import: the generic format", () => {
  it("creates every valid row with its slug, tags, titles, expiry and created_at kept, and rejects the rest with POST /links's codes", async () => {
    const user = await t.user();
    const s = rnd();
    const csv = [
      "url,slug,tags,og_title,og_description,expires_at,created_at",
      `https://example.com/1,g1-${s},a|b,Title 1,Desc 1,2099-01-01T00:00:00Z,2021-06-01T12:00:00Z`,
      `https://example.com/2,g2-${s},"c,d",,,4102444800000,1600000000000`,
      `ftp://nope,g3-${s},,,,,`,
      `https://example.com/4,No Spaces,,,,,`,
      `https://example.com/5,g5-${s},UPPER,,,,`,
      `https://example.com/6,g6-${s},,,,1000,`,
      `https://example.com/7,g7-${s},,,,,yesterday`,
      `https://example.com/8,g8-${s},,${"x".repeat(121)},,,`,
      `,g9-${s},,,,,`,
      `https://example.com/10,,,,,,`,
    ].join("\n");
    const r = await importCsv(csv, { user });
    expect(r.result).toBe("done");
    expect(r.summary).toEqual({
      rows: 10,
      created: 3,
      skipped: 0,
      rejected: 7,
      rejects: [
        { row: 3, error: "VALIDATION_FAILED", slug: `g3-${s}`, url: "ftp://nope", fields: { url: ["must be an absolute http or https URL"] } },
        { row: 4, error: "INVALID_LINK_ID", slug: "No Spaces", url: "https://example.com/4", fields: { slug: ["must be 1-50 characters of 0-9, a-z and -"] } },
        {
          row: 5,
          error: "INVALID_TAG",
          slug: `g5-${s}`,
          url: "https://example.com/5",
          fields: { tags: [expect.stringContaining("each tag must be 1-24 characters of 0-9, a-z and -")] },
        },
        { row: 6, error: "EXPIRES_AT_IN_THE_PAST", slug: `g6-${s}`, url: "https://example.com/6", fields: { expires_at: ["must be in the future"] } },
        {
          row: 7,
          error: "VALIDATION_FAILED",
          slug: `g7-${s}`,
          url: "https://example.com/7",
          fields: { created_at: ["must be a time in ms or an ISO 8601 date"] },
        },
        { row: 8, error: "VALIDATION_FAILED", slug: `g8-${s}`, url: "https://example.com/8", fields: { og_title: ["at most 120 characters"] } },
        { row: 9, error: "VALIDATION_FAILED", slug: `g9-${s}`, fields: { url: ["Required"] } },
      ],
    });
    const got = await bySlug(user.workspaceId);
    expect(got.get(`g1-${s}`)).toMatchObject({
      url: "https://example.com/1",
      tags: ["a", "b"],
      ogTitle: "Title 1",
      ogDescription: "Desc 1",
      expiresAt: Date.UTC(2099, 0, 1),
      createdAt: Date.UTC(2021, 5, 1, 12),
    });
    expect(got.get(`g2-${s}`)).toMatchObject({ tags: ["c", "d"], expiresAt: 4102444800000, createdAt: 1600000000000 });
    const generated = [...got.values()].find((l) => l.url === "https://example.com/10");
    expect(generated?.slug).toMatch(/^[0-9a-z]{4}$/);
    expect(existsSync(jobFile(t.app.config.dataDir, r.job.id))).toBe(false); // deleted when the job ends
  });

  it("skips a slug that already points at the same URL in the workspace, so a second run of the same file creates nothing", async () => {
    const user = await t.user();
    const s = rnd();
    const csv = `url,slug\nhttps://example.com/a,s1-${s}\nhttps://example.com/b,s2-${s}\nhttps://example.com/c,\nhttps://example.com/c,\n`;
    const first = await importCsv(csv, { user });
    expect(first.summary).toMatchObject({ rows: 4, created: 3, skipped: 1, rejected: 0 });
    const second = await importCsv(csv, { user });
    expect(second.summary).toMatchObject({ rows: 4, created: 0, skipped: 4, rejected: 0, rejects: [] });
    expect((await live(user.workspaceId)).length).toBe(3);
  });

  it("skips a row whose link is already there even when the row could not be created now (an expired link's export); a row whose slug is free or taken by another URL keeps its reject", async () => {
    const user = await t.user();
    const s = rnd();
    const soon = Date.now() + 60_000;
    const first = await importCsv(`url,slug,expires_at\nhttps://example.com/e,e-${s},${soon}\n`, { user });
    expect(first.summary).toMatchObject({ created: 1 });
    // The link has expired since: its export row says so.
    await t.app.db
      .update(links)
      .set({ expiresAt: 1000 })
      .where(eq(links.slug, `e-${s}`));
    const csv = [
      "url,slug,expires_at",
      `https://example.com/e,e-${s},1000`,
      `https://example.com/free,free-${s},1000`,
      `https://example.com/other,e-${s},1000`,
    ].join("\n");
    const again = await importCsv(csv, { user });
    expect(again.summary).toMatchObject({ rows: 3, created: 0, skipped: 1, rejected: 2 });
    expect(again.summary.rejects.map((r) => [r.row, r.error])).toEqual([
      [2, "EXPIRES_AT_IN_THE_PAST"],
      [3, "EXPIRES_AT_IN_THE_PAST"],
    ]);
  });

  it("rejects a slug taken by another link (another URL, or another workspace) with LINK_ID_ALREADY_IN_USE, also within the file", async () => {
    const other = await t.user();
    const user = await t.user();
    const s = rnd();
    await importCsv(`url,slug\nhttps://example.com/theirs,taken-${s}\n`, { user: other });
    const r = await importCsv(`url,slug\nhttps://example.com/theirs,taken-${s}\nhttps://example.com/x,dup-${s}\nhttps://example.com/y,dup-${s}\n`, { user });
    expect(r.summary).toEqual({
      rows: 3,
      created: 1,
      skipped: 0,
      rejected: 2,
      rejects: [
        { row: 1, error: "LINK_ID_ALREADY_IN_USE", slug: `taken-${s}`, url: "https://example.com/theirs", fields: { slug: ["is taken by another link"] } },
        { row: 3, error: "LINK_ID_ALREADY_IN_USE", slug: `dup-${s}`, url: "https://example.com/y", fields: { slug: ["is taken by another link"] } },
      ],
    });
  });

  it("rejects a row with more columns than the header row, and takes a shorter row's missing cells as empty", async () => {
    const user = await t.user();
    const s = rnd();
    const r = await importCsv(`url,slug,tags\nhttps://example.com/a,w1-${s},x,extra\nhttps://example.com/b,w2-${s}\n`, { user });
    expect(r.summary).toEqual({
      rows: 2,
      created: 1,
      skipped: 0,
      rejected: 1,
      rejects: [{ row: 1, error: "VALIDATION_FAILED", fields: { row: ["has 4 columns; the header row has 3"] } }],
    });
  });

  it("refuses a URL on the redirect domain like POST /links does (no loops)", async () => {
    const r = await importCsv(`url\nhttp://go.test/x\n`);
    expect(r.summary.rejects).toEqual([
      { row: 1, error: "VALIDATION_FAILED", url: "http://go.test/x", fields: { url: ["url must not point at the redirect domain go.test"] } },
    ]);
  });

  it("reads ; and tab separated files and a byte order mark", async () => {
    const user = await t.user();
    const s = rnd();
    const r1 = await importCsv(`\uFEFFurl;slug;tags\nhttps://example.com/a;sc-${s};a,b\n`, { user });
    const r2 = await importCsv(`url\tslug\nhttps://example.com/b\ttab-${s}\n`, { user });
    expect([r1.summary.created, r2.summary.created]).toEqual([1, 1]);
    expect((await bySlug(user.workspaceId)).get(`sc-${s}`)?.tags).toEqual(["a", "b"]);
  });
});

describe("import: bad files are one clear error and import nothing", () => {
  const bad: [string, string | Buffer, RegExp][] = [
    ["an empty file", "", /is empty/],
    ["only blank lines", "\n\n  \n", /is empty/],
    ["a header row only", "url,slug\n", /header row but no data rows/],
    ["a PNG", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52]), /not a CSV text file/],
    [
      "invalid UTF-8",
      Buffer.concat([Buffer.from("url\nhttps://example.com/caf"), Buffer.from([0xe9]), Buffer.from("\n")]),
      /not UTF-8 text \(invalid bytes on line 2, at byte 28\)/,
    ],
    ["an unclosed quote", 'url,slug\n"https://example.com/a,b\nhttps://example.com/c,d\n', /line \d+: a quoted field is never closed/],
    ["a quote inside a bare field", 'url,slug\nhttps://example.com/a,b"c\n', /line 2: /],
    ["JSON", '[{"url": "https://example.com/"}]', /not valid CSV/],
    ["no URL column", "name,value\nx,y\n", /no column for the destination URL \(its header row: name, value\)/],
  ];
  it.each(bad)("%s", async (_what, content, message) => {
    const file = await upload(content);
    const before = (await live(alice.workspaceId)).length;
    const e = await prepareImport(file, "auto").catch((x) => x);
    expect(e.publicCode).toBe("VALIDATION_FAILED");
    expect(e.fields.file).toEqual([expect.stringMatching(message)]);
    expect((await live(alice.workspaceId)).length).toBe(before);
  });

  it(`a file over ${IMPORT_MAX_BYTES / 1024 / 1024} MB`, async () => {
    const file = await upload(Buffer.alloc(IMPORT_MAX_BYTES + 1, "a"));
    const e = await prepareImport(file, "auto").catch((x) => x);
    expect(e.fields.file).toEqual([expect.stringMatching(/is larger than 20 MB/)]);
  });

  it("a mapping naming a column the file does not have, or no URL column", async () => {
    const file = await upload("a,b\nhttps://example.com/,x\n");
    const e = await prepareImport(file, "generic", { url: "nope" }).catch((x) => x);
    expect(e.fields).toEqual({ mapping: ['url: the header row has no column "nope"', "url: choose the column that holds the destination URL"] });
    const ok = await prepareImport(file, "generic", { url: "a", slug: "b" });
    expect(ok.mapping).toEqual({ url: "a", slug: "b" });
  });
});

describe("import: the exports of Bitly, Shlink, Kutt and YOURLS", () => {
  it.each([
    ["bitly.csv", "bitly"],
    ["shlink.csv", "shlink"],
    ["kutt.csv", "kutt"],
    ["yourls.csv", "yourls"],
    ["yourls-plugin.csv", "yourls"],
    ["generic.csv", "generic"],
  ])("recognises %s by its header row as %s", async (name, format) => {
    const prepared = await prepareImport(await upload(fixture(name)), "auto");
    expect(prepared.detected).toBe(format);
  });

  it("imports a Bitly export: the custom back-half (else the Bitlink) as the slug, lower-cased; title, tags, created_at", async () => {
    const user = await t.user();
    const r = await importCsv(fixture("bitly.csv"), { user });
    expect(r.summary).toMatchObject({ rows: 3, created: 3, rejected: 0 });
    const got = await bySlug(user.workspaceId);
    expect(got.get("3xyzabc")).toMatchObject({
      url: "https://example.com/spring?utm_source=bitly&utm_medium=email",
      // A source's title is a label for people (title), not a share card.
      title: "Spring sale",
      ogTitle: null,
      tags: ["email", "spring-sale"],
      createdAt: Date.parse("2023-03-01T10:15:00Z"),
    });
    expect(got.get("launch-day")?.url).toBe("https://example.com/launch");
    expect(got.get("2pqrstu")?.tags).toEqual(["docs"]);
  });

  it("imports a Shlink export (short codes, titles, | tags, created_at with its offset)", async () => {
    const user = await t.user();
    const r = await importCsv(fixture("shlink.csv"), { user });
    expect(r.summary).toMatchObject({ rows: 3, created: 3, rejected: 0 });
    const got = await bySlug(user.workspaceId);
    expect(got.get("ab3de")).toMatchObject({
      url: "https://example.com/articles/a",
      title: "Article A",
      ogTitle: null,
      tags: ["blog", "news"],
      createdAt: Date.parse("2023-05-01T08:00:00Z"),
    });
    expect(got.get("summer-2023")).toMatchObject({ title: null, ogTitle: null, tags: [] });
  });

  it("imports Kutt links (address, target, description, expire_in)", async () => {
    const user = await t.user();
    const r = await importCsv(fixture("kutt.csv"), { user });
    expect(r.summary).toMatchObject({ rows: 2, created: 2, rejected: 0 });
    const got = await bySlug(user.workspaceId);
    expect(got.get("xk3pq")).toMatchObject({
      url: "https://example.com/blog",
      title: "Company blog",
      ogDescription: null,
      createdAt: Date.parse("2024-01-15T09:12:00Z"),
    });
    expect(got.get("docs")).toMatchObject({ expiresAt: Date.parse("2999-12-31T00:00:00Z") });
  });

  it("imports YOURLS exports: the table's keyword,url,title,timestamp (UTC) and the plugin's /source/,target,hits", async () => {
    const user = await t.user();
    const s = rnd();
    const table = fixture("yourls.csv")
      .toString()
      .replace(/^ozh,/m, `ozh-${s},`)
      .replace("yourlsblog,", `yourlsblog-${s},`)
      .replace("Promo24,", `Promo24${s},`);
    const r = await importCsv(table, { user });
    expect(r.summary).toMatchObject({ rows: 3, created: 3, rejected: 0 });
    const got = await bySlug(user.workspaceId);
    expect(got.get(`ozh-${s}`)).toMatchObject({ url: "https://ozh.org/", title: "ozh.org", ogTitle: null, createdAt: Date.UTC(2022, 4, 10, 14, 2, 33) });
    expect(got.get(`promo24${s}`)?.url).toBe("https://example.com/promo?c=24");
    const plugin = fixture("yourls-plugin.csv").toString().replace("/ozh/", `/ozh2-${s}/`).replace("/promo/", `/promo-${s}/`);
    const p = await importCsv(plugin, { user });
    expect(p.summary).toMatchObject({ rows: 2, created: 2 });
    expect((await bySlug(user.workspaceId)).get(`promo-${s}`)?.url).toBe("https://example.com/promo");
  });

  it("takes a format named explicitly over the recognised one", async () => {
    const header = "keyword,url\n";
    expect(detectFormat(header.trim().split(","))).toBe("yourls");
    const prepared = await prepareImport(await upload(`${header}ab,https://example.com/\n`), "generic");
    expect(prepared.format).toBe("generic");
    expect(prepared.mapping).toEqual({ url: "url" });
  });
});

describe("times", () => {
  it.each([
    ["1704067200000", 1704067200000],
    ["2024-01-01", Date.UTC(2024, 0, 1)],
    ["2024-01-01T10:00:00Z", Date.UTC(2024, 0, 1, 10)],
    ["2024-01-01T10:00:00.123+02:00", Date.UTC(2024, 0, 1, 8, 0, 0, 123)],
    ["2024-01-01 10:00:00", Date.UTC(2024, 0, 1, 10)],
    ["2020-10-26T17:20:40+0000", Date.UTC(2020, 9, 26, 17, 20, 40)],
    ["yesterday", undefined],
    ["2024-13-01", undefined],
  ])("%s", (v, ms) => expect(parseTime(v)).toBe(ms));
});

describe("export", () => {
  const readAll = async (stream: NodeJS.ReadableStream) => {
    let out = "";
    for await (const chunk of stream) out += chunk;
    return out;
  };

  it("streams every link of the workspace in the generic columns plus id, short_url, clicks and has_password", async () => {
    const user = await t.user();
    const s = rnd();
    await importCsv(`url,slug,tags,og_title,expires_at,created_at\nhttps://example.com/e1,e1-${s},a|b,=SUM(1),2099-01-01,2022-01-01\n`, { user });
    const csv = await readAll(exportLinksCsv(t.app.db, t.app.config, user.workspaceId));
    const [head, line] = csv.split("\r\n");
    expect(head).toBe(
      "id,slug,domain,short_url,url,title,tags,created_at,expires_at,expiration_url,targeting,og_title,og_description,og_image,clicks,has_password,forward_query,variants,archived",
    );
    expect(line).toMatch(
      new RegExp(
        `^[0-9a-z]{8},e1-${s},,http://go.test/e1-${s},https://example.com/e1,,a\\|b,2022-01-01T00:00:00.000Z,2099-01-01T00:00:00.000Z,,,'=SUM\\(1\\),,,0,false,false,,false$`,
      ),
    );
  });

  it("imports back unchanged: every generic field of every link, into a new workspace", async () => {
    const from = await t.user();
    const to = await t.user();
    const s = rnd();
    const rows = Array.from({ length: 1500 }, (_, i) => [
      `https://example.com/rt/${i}?q="${i}"&a=b,c`,
      `rt${i}-${s}`,
      i % 3 ? "x|y-z" : "",
      i % 2 ? `Title, "${i}"` : i % 7 ? "" : "-1+2",
      i % 5 ? "" : "Line 1\nLine 2 ü ✓",
      i % 4 ? "" : String(4102444800000 + i),
      String(1600000000000 + i),
    ]);
    await importCsv(stringify([["url", "slug", "tags", "og_title", "og_description", "expires_at", "created_at"], ...rows]), { user: from });
    const exported = await readAll(exportLinksCsv(t.app.db, t.app.config, from.workspaceId));
    // Slugs are one namespace: the copy goes in after the originals are deleted.
    await t.app.db.update(links).set({ deletedAt: Date.now() }).where(eq(links.workspaceId, from.workspaceId));
    const back = await importCsv(exported, { user: to });
    expect(back.summary).toMatchObject({ rows: 1500, created: 1500, skipped: 0, rejected: 0 });
    const pick = (l: typeof links.$inferSelect) => [l.slug, l.url, l.tags, l.ogTitle, l.ogDescription, l.expiresAt, l.createdAt];
    const original = (await t.app.db.select().from(links).where(eq(links.workspaceId, from.workspaceId))).map(pick).sort();
    const copy = (await live(to.workspaceId)).map(pick).sort();
    expect(copy).toEqual(original);
    // And the same export into the same workspace again: nothing new.
    const again = await importCsv(exported, { user: to });
    expect(again.summary).toMatchObject({ created: 0, skipped: 1500 });
  });
});

describe("import: a job resumes where it stopped", () => {
  it("stops between batches when asked, and the next run goes on from rows_done: every row once", async () => {
    const user = await t.user();
    const s = rnd();
    const csv = `url,slug\n${Array.from({ length: 1000 }, (_, i) => `https://example.com/r/${i},r${i}-${s}`).join("\n")}\n${Array.from({ length: 200 }, (_, i) => `https://example.com/g/${i},`).join("\n")}\n`;
    const file = await upload(csv);
    const prepared = await prepareImport(file, "auto");
    const job = await createImportJob(deps(), { workspaceId: user.workspaceId, userId: user.id, upload: file, prepared, leaseOwner: "first" });
    let batches = 0;
    expect(await runImportJob(deps(), job.id, "first", { batchSize: 100, shouldStop: () => ++batches > 4 })).toBe("stopped");
    const [mid] = await t.app.db.select().from(importJobs).where(eq(importJobs.id, job.id));
    expect(mid).toMatchObject({ rowsDone: 400, created: 400, leaseOwner: null, status: "running" });
    expect((await live(user.workspaceId)).length).toBe(400);
    // Another instance claims it (released: no lease) and finishes.
    expect(await claimNextJob(t.app.db, "second", false)).toBe(job.id);
    expect(await runImportJob(deps(), job.id, "second", { batchSize: 100 })).toBe("done");
    const [end] = await t.app.db.select().from(importJobs).where(eq(importJobs.id, job.id));
    expect(end).toMatchObject({ status: "done", rowsDone: 1200, created: 1200, skipped: 0, rejected: 0 });
    const all = await live(user.workspaceId);
    expect(all.length).toBe(1200);
    expect(new Set(all.map((l) => l.url)).size).toBe(1200);
  });

  it("commits nothing for an instance whose lease was taken over (fencing by owner and rows_done)", async () => {
    const user = await t.user();
    const file = await upload(`url\n${Array.from({ length: 50 }, (_, i) => `https://example.com/f/${i}`).join("\n")}\n`);
    const job = await createImportJob(deps(), {
      workspaceId: user.workspaceId,
      userId: user.id,
      upload: file,
      prepared: await prepareImport(file, "auto"),
      leaseOwner: "old",
    });
    await t.app.db.update(importJobs).set({ leaseOwner: "new" }).where(eq(importJobs.id, job.id));
    expect(await runImportJob(deps(), job.id, "old", { batchSize: 10 })).toBe("lost");
    expect((await live(user.workspaceId)).length).toBe(0);
  });

  it("leaves a job whose file this instance lacks to the instance that has it, for 10 minutes", async () => {
    const user = await t.user();
    const file = await upload(`url\nhttps://example.com/elsewhere\n`);
    const job = await createImportJob(deps(), { workspaceId: user.workspaceId, userId: user.id, upload: file, prepared: await prepareImport(file, "auto") });
    const elsewhere = path.join(t.app.config.dataDir, "other-instance");
    expect(await claimNextJob(t.app.db, "here", false, elsewhere)).not.toBe(job.id);
    await t.app.db
      .update(importJobs)
      .set({ updatedAt: Date.now() - 11 * 60_000 })
      .where(eq(importJobs.id, job.id));
    expect(await claimNextJob(t.app.db, "here", false, elsewhere)).toBe(job.id);
    await t.app.db.update(importJobs).set({ status: "failed", leaseOwner: null }).where(eq(importJobs.id, job.id));
  });

  it("fails a job whose file is gone, keeping what went in", async () => {
    const user = await t.user();
    const file = await upload(`url\nhttps://example.com/gone\n`);
    const job = await createImportJob(deps(), {
      workspaceId: user.workspaceId,
      userId: user.id,
      upload: file,
      prepared: await prepareImport(file, "auto"),
      leaseOwner: "x",
    });
    unlinkSync(jobFile(t.app.config.dataDir, job.id));
    expect(await runImportJob(deps(), job.id, "x")).toBe("failed");
    const [row] = await t.app.db.select().from(importJobs).where(eq(importJobs.id, job.id));
    expect(row).toMatchObject({ status: "failed", error: expect.stringContaining("no longer") });
  });
});

/** A verified branded domain of the user's workspace (as POST /domains/{id}/verify leaves it). */
async function verifiedDomain(user: TestUser): Promise<string> {
  const name = `go-${rnd()}.example.com`;
  await t.app.db.insert(domains).values({
    id: rnd() + rnd(),
    workspaceId: user.workspaceId,
    name,
    verificationValue: "links-verify=x",
    verified: true,
    verifiedAt: Date.now(),
    createdAt: Date.now(),
  });
  return name;
}

describe("import: one import of a workspace at a time", () => {
  it("queues a workspace's second import behind its first: two imports of the same file at once create each URL once", async () => {
    const user = await t.user();
    const csv = `url\n${Array.from({ length: 300 }, (_, i) => `https://example.com/twice/${i}`).join("\n")}\n`;
    const jobs: { id: string }[] = [];
    for (let i = 0; i < 2; i++) {
      const file = await upload(csv);
      jobs.push(await createImportJob(deps(), { workspaceId: user.workspaceId, userId: user.id, upload: file, prepared: await prepareImport(file, "auto") }));
    }
    // A job of this user's made elsewhere meanwhile (the command line, first in line) waits too.
    const third = await upload(csv);
    const cliJob = await createImportJob(deps(), {
      workspaceId: user.workspaceId,
      userId: user.id,
      upload: third,
      prepared: await prepareImport(third, "auto"),
      leaseOwner: "cli",
    });
    expect(cliJob.status).toBe("queued");
    expect(await claimJob(t.app.db, cliJob.id, "cli", false)).toBe("waiting");
    // Two instances look for work at once: only the first job can be taken.
    const mine = (id: string | null) => (id && [jobs[0].id, jobs[1].id, cliJob.id].includes(id) ? id : null);
    const taken = [mine(await claimNextJob(t.app.db, "a", false)), mine(await claimNextJob(t.app.db, "b", false))];
    expect(taken).toEqual([jobs[0].id, null]);
    // Both instances run what they get until the line is empty, concurrently (the command line's job too: it was queued).
    const done = async () =>
      (
        await t.app.db
          .select()
          .from(importJobs)
          .where(and(eq(importJobs.workspaceId, user.workspaceId), eq(importJobs.status, "done")))
      ).length;
    const runFor = async (owner: string, first: string | null) => {
      for (let id = first; ; id = mine(await claimNextJob(t.app.db, owner, false))) {
        if (id) await runImportJob(deps(), id, owner, { batchSize: 50 });
        else if ((await done()) === 3) return;
        else await new Promise((r) => setTimeout(r, 20));
      }
    };
    await Promise.all([runFor("a", taken[0]), runFor("b", null)]);
    expect(await claimJob(t.app.db, cliJob.id, "cli", false)).toBe("ended");
    const all = await live(user.workspaceId);
    expect(all.length).toBe(300);
    expect(new Set(all.map((l) => l.url)).size).toBe(300);
  }, 60_000);
});

describe("import: what a row with a taken slug does (on_conflict)", () => {
  const taken = async () => {
    const other = await t.user();
    const s = rnd();
    await importCsv(`url,slug\nhttps://example.com/theirs-${s},bit-${s}\n`, { user: other });
    return { s, csv: `url,slug\nhttps://example.com/mine-${s},bit-${s}\nhttps://example.com/free-${s},free-${s}\n` };
  };

  it("reject (the default): LINK_ID_ALREADY_IN_USE with the row's slug, URL and a reason", async () => {
    const user = await t.user();
    const { s, csv } = await taken();
    const r = await importCsv(csv, { user });
    expect(r.summary).toEqual({
      rows: 2,
      created: 1,
      skipped: 0,
      rejected: 1,
      rejects: [
        { row: 1, error: "LINK_ID_ALREADY_IN_USE", slug: `bit-${s}`, url: `https://example.com/mine-${s}`, fields: { slug: ["is taken by another link"] } },
      ],
    });
  });

  it("generate: a new slug, its short URL in the report; a second run creates nothing", async () => {
    const user = await t.user();
    const { s, csv } = await taken();
    const r = await importCsv(csv, { user, options: { on_conflict: "generate" } });
    expect(r.summary).toMatchObject({ rows: 2, created: 2, skipped: 0, rejected: 0 });
    const mine = (await live(user.workspaceId)).find((l) => l.url === `https://example.com/mine-${s}`)!;
    expect(mine.slug).toMatch(/^[0-9a-z]{4}$/);
    expect(r.summary.moved).toEqual([{ row: 1, slug: `bit-${s}`, url: `https://example.com/mine-${s}`, short_url: `http://go.test/${mine.slug}` }]);
    expect((await importCsv(csv, { user, options: { on_conflict: "generate" } })).summary).toMatchObject({ created: 0, skipped: 2 });
  });

  it("domain:<name>: the same slug on a verified domain of the workspace; a second run creates nothing", async () => {
    const user = await t.user();
    const name = await verifiedDomain(user);
    const { s, csv } = await taken();
    const r = await importCsv(csv, { user, options: { on_conflict: `domain:${name}` } });
    expect(r.summary).toMatchObject({ rows: 2, created: 2, rejected: 0 });
    expect(r.summary.moved).toEqual([{ row: 1, slug: `bit-${s}`, url: `https://example.com/mine-${s}`, short_url: `https://${name}/bit-${s}` }]);
    const mine = (await live(user.workspaceId)).find((l) => l.url === `https://example.com/mine-${s}`)!;
    expect(mine.slug).toBe(`bit-${s}`);
    expect(mine.domainId).not.toBeNull();
    expect((await importCsv(csv, { user, options: { on_conflict: `domain:${name}` } })).summary).toMatchObject({ created: 0, skipped: 2 });
  });

  it("refuses a domain that is not a verified domain of the workspace, or an unknown rule, naming the option (400, no job)", async () => {
    const user = await t.user();
    const other = await t.user();
    const theirs = await verifiedDomain(other);
    await expect(checkOptions(t.app.db, user.workspaceId, { on_conflict: `domain:${theirs}` })).rejects.toMatchObject({
      publicCode: "VALIDATION_FAILED",
      fields: { on_conflict: [`${theirs} is not a verified domain of this workspace`] },
    });
    await expect(checkOptions(t.app.db, user.workspaceId, { on_conflict: "overwrite", title_to: "nowhere" })).rejects.toMatchObject({
      fields: { on_conflict: [expect.stringContaining("reject, generate or domain:")], title_to: [expect.stringContaining("title, og_title, ignore")] },
    });
  });
});

describe("import: links that had a password", () => {
  it("rejects a Kutt link that had a visit password with PASSWORD_NOT_EXPORTABLE, so it never becomes public", async () => {
    const user = await t.user();
    const s = rnd();
    const csv = [
      "id,address,banned,created_at,updated_at,description,expire_in,password,target,visit_count,domain,link",
      `1,locked-${s},false,2024-01-15T09:12:00Z,2024-01-15T09:12:00Z,Secret,,true,https://example.com/locked,0,,https://kutt.it/locked-${s}`,
      `2,open-${s},false,2024-01-15T09:12:00Z,2024-01-15T09:12:00Z,Open,,false,https://example.com/open,0,,https://kutt.it/open-${s}`,
    ].join("\n");
    const r = await importCsv(csv, { user });
    expect(r.summary).toMatchObject({ rows: 2, created: 1, rejected: 1 });
    expect(r.summary.rejects).toEqual([
      {
        row: 1,
        error: "PASSWORD_NOT_EXPORTABLE",
        slug: `locked-${s}`,
        url: "https://example.com/locked",
        fields: { password: [expect.stringContaining("visit password")] },
      },
    ]);
    expect((await bySlug(user.workspaceId)).has(`locked-${s}`)).toBe(false);
  });
  it("skips such a row when its link is already there (imported before it had a password, or its own export read back)", async () => {
    const user = await t.user();
    const s = rnd();
    const head = "id,address,banned,created_at,updated_at,description,expire_in,password,target,visit_count,domain,link";
    const row = (password: boolean) =>
      `1,kept-${s},false,2024-01-15T09:12:00Z,2024-01-15T09:12:00Z,Secret,,${password},https://example.com/kept,0,,https://kutt.it/kept-${s}`;
    expect((await importCsv(`${head}\n${row(false)}`, { user })).summary).toMatchObject({ created: 1 });
    const r = await importCsv(`${head}\n${row(true)}`, { user });
    expect(r.summary).toMatchObject({ rows: 1, created: 0, skipped: 1, rejected: 0, rejects: [] });
  });
});

describe("import: where the source's title goes (title_to)", () => {
  it("to the label (title, the default), to the share card's title (og_title), or nowhere (ignore)", async () => {
    const user = await t.user();
    const s = rnd();
    const csv = (k: string) => `url,slug,title\nhttps://example.com/t-${k}-${s},t-${k}-${s},Spring sale\n`;
    await importCsv(csv("a"), { user });
    await importCsv(csv("b"), { user, options: { title_to: "og_title" } });
    await importCsv(csv("c"), { user, options: { title_to: "ignore" } });
    const got = await bySlug(user.workspaceId);
    expect(got.get(`t-a-${s}`)).toMatchObject({ title: "Spring sale", ogTitle: null });
    expect(got.get(`t-b-${s}`)).toMatchObject({ title: null, ogTitle: "Spring sale" });
    expect(got.get(`t-c-${s}`)).toMatchObject({ title: null, ogTitle: null });
  });
});

describe("import: uploads keep the disk usable", () => {
  it("refuses an upload with 507 INSUFFICIENT_STORAGE naming file when the disk would keep less than the reserve free", async () => {
    const user = await t.user();
    // A reserve no disk has: the check must refuse before anything is written.
    await expect(
      stageUpload(t.app.config.dataDir, { workspaceId: user.workspaceId, userId: user.id, bytes: 1024, reserve: Number.MAX_SAFE_INTEGER }),
    ).rejects.toMatchObject({ publicCode: "INSUFFICIENT_STORAGE", status: 507, fields: { file: [expect.stringContaining("cannot be stored now")] } });
    const staged = await stageUpload(t.app.config.dataDir, { workspaceId: user.workspaceId, userId: user.id, bytes: 1024 });
    expect(staged.name.startsWith(`${user.workspaceId}-${user.id}-`)).toBe(true);
  });

  it("keeps one staged upload per workspace: a new one replaces the workspace's earlier one, not another workspace's", async () => {
    const user = await t.user();
    const other = await t.user();
    const stage = async (u: TestUser) => {
      const { dir, name } = await stageUpload(t.app.config.dataDir, { workspaceId: u.workspaceId, userId: u.id, bytes: 10 });
      writeFileSync(path.join(dir, name), "url\nhttps://example.com/\n");
      return path.join(dir, name);
    };
    const first = await stage(user);
    const theirs = await stage(other);
    const second = await stage(user);
    expect(existsSync(first)).toBe(false);
    expect(existsSync(second)).toBe(true);
    expect(existsSync(theirs)).toBe(true);
  });
});
