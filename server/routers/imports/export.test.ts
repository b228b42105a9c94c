import { writeFileSync } from "node:fs";
import path from "node:path";
import { text } from "node:stream/consumers";
import { eq } from "drizzle-orm";
import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { domains, importJobs } from "../../../db/schema";
import { newLinkId } from "../../lib/ids";
import { createTestApp, type TestApp, type TestUser } from "../../test/harness";
import { EXPORT_COLUMNS, exportLinksCsv } from "./export";
import { createImportJob, ensureUploadsDir, prepareImport, runImportJob, uploadName } from "./imports.service";

let t: TestApp;
let n = 0;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const deps = () => ({ db: t.app.db, config: t.app.config, invalidateSlugs: t.app.invalidateSlugs, driver: t.app.database.driver });
const rnd = () => Math.random().toString(36).slice(2, 8);
const exportOf = (u: TestUser) => text(exportLinksCsv(t.app.db, t.app.config, u.workspaceId));

/** Imports a file for `user` as the command line does: a job made already claimed, then run here. */
async function importCsv(user: TestUser, content: string) {
  const file = path.join(await ensureUploadsDir(t.app.config.dataDir), uploadName("test"));
  writeFileSync(file, content);
  const prepared = await prepareImport(file, "auto");
  const owner = `export-test-${++n}`;
  const job = await createImportJob(deps(), { workspaceId: user.workspaceId, userId: user.id, upload: file, prepared, leaseOwner: owner });
  expect(await runImportJob(deps(), job.id, owner)).toBe("done");
  const [row] = await t.app.db.select().from(importJobs).where(eq(importJobs.id, job.id));
  return { format: prepared.format, created: row.created, skipped: row.skipped, rejected: row.rejected, rejects: row.rejects ?? [] };
}

async function verifiedDomain(u: TestUser, name: string) {
  const now = Date.now();
  await t.app.db
    .insert(domains)
    .values({ id: newLinkId(), workspaceId: u.workspaceId, name, verificationValue: "x", verified: true, verifiedAt: now, createdAt: now });
}

type Link = Record<string, unknown> & { id: string; slug: string; short_url: string };
/** A link as the export can carry it: everything but the id, the times the database sets and the password itself. */
const portable = ({ id: _id, updated_at: _u, ...rest }: Link) => rest;

describe("export → import round trip of the link rules", () => {
  it("carries forward_query, variants, language targeting and the archive, and imports them back as they were", async () => {
    const alice = await t.user();
    const api = t.caller(alice.auth);
    const s = rnd();
    const variants = [
      { url: "https://example.com/a", weight: 60 },
      { url: "https://example.com/b", weight: 40 },
    ];
    const made: Link[] = [
      await api.link.create({ url: "https://example.com/a", slug: `ab-${s}`, variants, forward_query: true }),
      await api.link.create({ url: "https://example.com/l", slug: `lang-${s}`, targeting: { languages: { de: "https://example.de/" } } }),
      await api.link.create({ url: "https://example.com/old", slug: `old-${s}`, archived: true }),
      await api.link.create({ url: "https://example.com/plain", slug: `plain-${s}` }),
    ];
    const csv = await exportOf(alice);
    const rows = parse(csv, { columns: true }) as Record<string, string>[];
    const row = (l: Link) => rows.find((r) => r.id === l.id)!;
    expect(rows).toHaveLength(made.length);
    expect(row(made[0])).toMatchObject({ forward_query: "true", archived: "false" });
    expect(JSON.parse(row(made[0]).variants)).toEqual(variants);
    expect(JSON.parse(row(made[1]).targeting)).toEqual({ languages: { de: "https://example.de/" } });
    expect(row(made[2])).toMatchObject({ archived: "true", variants: "" });
    expect(row(made[3])).toMatchObject({ forward_query: "false", variants: "", archived: "false" });

    // A second import into the same workspace creates nothing.
    expect((await importCsv(alice, csv)).created).toBe(0);

    // Into a fresh workspace, once the originals are deleted (slugs are one namespace).
    for (const l of made) await api.link.delete({ id: l.id });
    const bob = await t.user();
    const back = await importCsv(bob, csv);
    expect(back).toMatchObject({ created: made.length, rejected: 0 });
    const bobApi = t.caller(bob.auth);
    const copies = [...((await bobApi.link.list({})).links as Link[]), ...((await bobApi.link.list({ status: "archived" })).links as Link[])];
    const bySlug = (slug: string) => copies.find((c) => c.slug === slug)!;
    const same = (l: Link) => {
      const { id: _i, updated_at: _u, deleted_at: _d, ...rest } = l;
      return rest;
    };
    for (const l of made) {
      const { id: _i, updated_at: _u, deleted_at: _d, ...expected } = l;
      expect(same(bySlug(l.slug))).toEqual(expected);
    }
  });
});

describe("export → import round trip", () => {
  it("exports every exportable member of a link of every kind, and imports back the same links, domains and short URLs", async () => {
    const alice = await t.user();
    const brand = `go-${rnd()}.example`;
    await verifiedDomain(alice, brand);
    const api = t.caller(alice.auth);
    const s = rnd();
    const later = Date.now() + 30 * 86_400_000;
    const made: Link[] = [
      await api.link.create({ url: "https://example.com/plain", slug: `plain-${s}` }),
      await api.link.create({ url: "https://example.com/branded", slug: `launch-${s}`, domain: brand }),
      // The same slug on the default domain: each row must keep its own domain.
      await api.link.create({ url: "https://example.com/default-launch", slug: `launch-${s}` }),
      await api.link.create({ url: "https://example.com/tags", slug: `tags-${s}`, tags: ["spring-sale", "q4"] }),
      await api.link.create({ url: "https://example.com/expiry", slug: `exp-${s}`, expires_at: later, expiration_url: "https://example.com/over" }),
      await api.link.create({
        url: "https://example.com/targeted",
        slug: `tgt-${s}`,
        targeting: {
          geo: { DE: "https://example.de/", FR: "https://example.fr/" },
          ios: "https://apps.apple.com/app/id1",
          android: "https://play.google.com/x",
        },
      }),
      await api.link.create({
        url: "https://example.com/card",
        slug: `card-${s}`,
        og_title: '=HYPERLINK("https://evil.example")',
        og_description: 'Line one\r\nline two, with "quotes"',
        og_image: "https://cdn.example.com/card.png",
      }),
      await api.link.create({ url: "https://example.com/titled", slug: `title-${s}`, title: "@Weekly\r=cmd|' /C calc'!A0" }),
      await api.link.create({ url: "https://example.com/secret", slug: `pw-${s}`, password: "hunter22" }),
    ];

    const csv = await exportOf(alice);
    const rows = parse(csv, { columns: true }) as Record<string, string>[];
    expect(Object.keys(rows[0])).toEqual([...EXPORT_COLUMNS]);
    const row = (l: Link) => rows.find((r) => r.id === l.id)!;
    expect(rows).toHaveLength(made.length);
    // The real short URL and the domain of each link (empty: the default redirect domain).
    expect(row(made[1])).toMatchObject({ domain: brand, short_url: made[1].short_url });
    expect(row(made[2])).toMatchObject({ domain: "", short_url: made[2].short_url });
    expect(made[1].short_url).not.toBe(made[2].short_url);
    expect(JSON.parse(row(made[5]).targeting)).toEqual(made[5].targeting);
    expect(row(made[4])).toMatchObject({ expiration_url: "https://example.com/over", expires_at: new Date(later).toISOString() });
    expect(row(made[6]).og_image).toBe("https://cdn.example.com/card.png");
    expect(row(made[8]).has_password).toBe("true");
    expect(row(made[0]).has_password).toBe("false");

    // A second import of the file into the same workspace creates nothing and changes nothing.
    const again = await importCsv(alice, csv);
    expect(again.format).toBe("generic");
    expect(again.created).toBe(0);
    expect(again.rejects.filter((r) => r.error !== "PASSWORD_NOT_EXPORTABLE")).toEqual([]);
    const after = (await api.link.list({})).links as Link[];
    expect(after.map(portable).sort((a, b) => String(a.short_url).localeCompare(String(b.short_url)))).toEqual(
      made.map(portable).sort((a, b) => String(a.short_url).localeCompare(String(b.short_url))),
    );

    // Into a fresh workspace with the same domain (the links themselves deleted first, so their slugs are free).
    for (const l of made) await api.link.delete({ id: l.id });
    const bob = await t.user();
    await verifiedDomain(bob, `other-${rnd()}.example`); // not the one the file names yet
    const missing = await importCsv(bob, csv);
    expect(missing.rejects).toContainEqual(expect.objectContaining({ error: "VALIDATION_FAILED", fields: { domain: [expect.stringContaining("domain")] } }));
    // Everything else of the file went in, every member as it was, the branded row apart; the
    // password cannot travel, so that row never becomes a public link.
    expect(missing.rejects.map((r) => r.row).sort()).toEqual([rows.indexOf(row(made[1])) + 1, rows.indexOf(row(made[8])) + 1].sort());
    expect(missing.rejects.find((r) => r.row === rows.indexOf(row(made[8])) + 1)).toMatchObject({ error: "PASSWORD_NOT_EXPORTABLE" });
    expect(missing.created).toBe(made.length - 2);
    const moved = ((await t.caller(bob.auth).link.list({})).links as Link[]).map(portable);
    const expected = made.filter((_, i) => i !== 1 && i !== 8).map(portable);
    const key = (l: Record<string, unknown>) => String(l.short_url);
    expect(moved.sort((a, b) => key(a).localeCompare(key(b)))).toEqual(expected.sort((a, b) => key(a).localeCompare(key(b))));
  });

  it("imports a guarded cell back as the value it stood for, and a file of people's own tags as they are", async () => {
    const u = await t.user();
    const s = rnd();
    const csv = [
      "url,slug,title,og_title,og_description",
      `https://example.com/a,a-${s},'=SUM(A1),'+1,'''-x`,
      `https://example.com/b,b-${s},'plain quote,,`,
    ].join("\r\n");
    const r = await importCsv(u, csv);
    expect(r.created).toBe(2);
    const links = (await t.caller(u.auth).link.list({})).links;
    expect(links.find((l) => l.slug === `a-${s}`)).toMatchObject({ title: "=SUM(A1)", og_title: "+1", og_description: "''-x" });
    expect(links.find((l) => l.slug === `b-${s}`)).toMatchObject({ title: "'plain quote" });
  });
});
