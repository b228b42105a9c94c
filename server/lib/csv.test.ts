import { text } from "node:stream/consumers";
import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clicksCsv, importReportCsv, linksCsv } from "../http/dashboard-files";
import { createContextInner } from "../trpc/context";
import { importJobs } from "../../db/schema";
import { newId } from "./ids";
import { clickRecord, recordClicks } from "../test/click-records";
import { createTestApp, type TestApp, type TestUser } from "../test/harness";
import { csvStream, csvText, guardCell, unguardCell } from "./csv";

/** Cells people can type that a careless writer turns into rows or formulas. */
const HOSTILE = [
  "Weekly\r=cmd|' /C calc'!A0",
  '=HYPERLINK("https://evil.example","x")',
  "+1+1",
  "-2+3",
  "@SUM(A1:A2)",
  "\t=1",
  "\r=1",
  "'=already quoted",
  "''+twice",
  "a\nb",
  "a\rb",
  'say "hi", then go',
  "semi;colon",
  "plain",
  "'plain quote",
  "",
];

/** A spreadsheet runs a cell as a formula when it starts with one of these (a plain number aside). */
const runs = (cell: string) => /^[=+\-@\t\r]/.test(cell) && !/^-?\d+(\.\d+)?$/.test(cell);
/** A CR or LF outside quotes that is not the CRLF between records: a spreadsheet starts a new row there. */
const bareBreaks = (csv: string) =>
  csv
    .replace(/"(?:[^"]|"")*"/g, "")
    .replace(/\r\n/g, "")
    .match(/[\r\n]/g) ?? [];

describe("the CSV writer (lib/csv)", () => {
  it("quotes every cell with CR, LF, a quote or the separator (a lone CR too) and guards formula-like text", () => {
    const csv = csvText(
      ["v"],
      HOSTILE.map((v) => ({ v })),
    );
    const lines = csv.split("\r\n");
    expect(lines[1]).toBe(`"Weekly\r=cmd|' /C calc'!A0"`);
    expect(csv).toContain(`"a\rb"`);
    expect(csv).toContain(`"a\nb"`);
    const cells = (parse(csv, { columns: true }) as { v: string }[]).map((r) => r.v);
    expect(cells).toHaveLength(HOSTILE.length);
    expect(cells.filter(runs)).toEqual([]);
    // and each reads back as it was
    expect(cells.map(unguardCell)).toEqual(HOSTILE);
  });

  it("writes numbers as numbers (a negative latitude is not text to guard)", () => {
    expect(csvText(["lat", "n"], [{ lat: -33.86, n: null }])).toBe("lat,n\r\n-33.86,\r\n");
  });

  it("guards in a way unguardCell undoes exactly, for every value", () => {
    for (const v of [...HOSTILE, "'", "''", "'-", "-"]) expect(unguardCell(guardCell(v))).toBe(v);
  });

  it("streams the same bytes it writes at once", async () => {
    const stream = csvStream(["v"]);
    for (const v of HOSTILE) stream.write({ v });
    stream.end();
    expect(await text(stream)).toBe(
      csvText(
        ["v"],
        HOSTILE.map((v) => ({ v })),
      ),
    );
  });
});

describe("every CSV the service writes is safe", () => {
  let t: TestApp;
  let u: TestUser;
  beforeAll(async () => {
    t = await createTestApp();
    u = await t.user();
  });
  afterAll(() => t?.close());

  /** The dashboard download's procedure context, for the member. */
  const context = () => createContextInner(t.app, { headers: u.auth });
  const noCellRuns = (csv: string, expectedRows: number) => {
    expect(bareBreaks(csv)).toEqual([]);
    const rows = parse(csv) as string[][];
    expect(rows).toHaveLength(expectedRows + 1);
    expect(rows.flat().filter(runs)).toEqual([]);
    return rows;
  };

  it("the links export (og_title with a CR and a formula, titles starting with = + - @)", async () => {
    const api = t.caller(u.auth);
    const made = [];
    for (const [i, v] of HOSTILE.filter((h) => h.trim() && h.length <= 120).entries())
      made.push(await api.link.create({ url: `https://example.com/${i}`, og_title: v, title: v, og_description: v }));
    const rows = noCellRuns(await text(await linksCsv(context(), u.workspaceId)), made.length);
    const header = rows[0];
    for (const link of made) {
      const row = rows.find((r) => r[0] === link.id)!;
      expect(unguardCell(row[header.indexOf("og_title")])).toBe(link.og_title);
      expect(unguardCell(row[header.indexOf("title")])).toBe(link.title);
    }
  });

  it("the clicks CSV (a hostile referer and browser; negative coordinates stay numbers)", async () => {
    const link = await t.caller(u.auth).link.create({ url: "https://example.com/clicked" });
    const now = Date.now() - 1000;
    await recordClicks(
      t.app,
      ["=cmd|' /C calc'!A0", "Weekly\r=cmd|' /C calc'!A0", "@x\ny"].map((v) =>
        clickRecord(link.id, u.workspaceId, now, { lat: -33.86, lng: 151.2, browser: v, referer: v }),
      ),
    );
    const sp = new URLSearchParams({ link: link.id, start: "0", end: String(Date.now()) });
    const rows = noCellRuns((await clicksCsv(context(), sp)).body, 3);
    const header = rows[0];
    expect(rows.slice(1).map((r) => r[header.indexOf("lat")])).toEqual(["-33.86", "-33.86", "-33.86"]);
    expect(
      rows
        .slice(1)
        .map((r) => unguardCell(r[header.indexOf("referer")]))
        .sort(),
    ).toEqual(["=cmd|' /C calc'!A0", "@x\ny", "Weekly\r=cmd|' /C calc'!A0"].sort());
  });

  it("the import report of rejected rows", async () => {
    const now = Date.now();
    const id = newId();
    await t.app.db.insert(importJobs).values({
      id,
      workspaceId: u.workspaceId,
      userId: u.id,
      status: "done",
      format: "generic",
      mapping: { url: "url" },
      sourcePath: "imports/none.csv",
      rowsTotal: 2,
      rowsDone: 2,
      rejected: 2,
      rejects: [
        { row: 1, error: "VALIDATION_FAILED", fields: { url: ["=cmd|' /C calc'!A0 is not a URL"] }, slug: "=cmd", url: "=cmd|' /C calc'!A0" },
        { row: 2, error: "LINK_ID_ALREADY_IN_USE", fields: { slug: ["Weekly\r=cmd is taken"] }, slug: "-x", url: "@home\r+1" },
      ],
      createdAt: now,
      updatedAt: now,
      finishedAt: now,
    });
    noCellRuns((await importReportCsv(context(), id)).body, 2);
  });
});
