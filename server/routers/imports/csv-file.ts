import { createReadStream } from "node:fs";
import { open, stat } from "node:fs/promises";
import { Transform, pipeline } from "node:stream";
import { CsvError, parse } from "csv-parse";
import { AppError } from "../../domain/errors";

/** Largest import file, uploaded or read by the command line (docs/import-formats.md, Limits). */
export const IMPORT_MAX_BYTES = 20 * 1024 * 1024;
export const IMPORT_MAX_MB = IMPORT_MAX_BYTES / 1024 / 1024;
/** Longest row: a guard against a file that is one endless quoted field. */
export const MAX_ROW_BYTES = 64 * 1024;
const PREVIEW_ROWS = 5;
const PREVIEW_CELL = 200;

/** A problem with the file as a whole: 400 VALIDATION_FAILED naming `file`, nothing imported. */
export const fileError = (message: string) => new AppError("VALIDATION_FAILED", { fields: { file: [message] }, message: `file: ${message}` });

/**
 * The field separator, from the header line: the most frequent of `,` `;` and tab outside quotes
 * (spreadsheets in many locales write `;`). Comma when none occurs.
 */
export function detectDelimiter(firstLine: string): string {
  const counts = new Map<string, number>([
    [",", 0],
    [";", 0],
    ["\t", 0],
  ]);
  let quoted = false;
  for (const ch of firstLine) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && counts.has(ch)) counts.set(ch, counts.get(ch)! + 1);
    else if (!quoted && (ch === "\n" || ch === "\r")) break;
  }
  let best = ",";
  for (const [d, n] of counts) if (n > counts.get(best)!) best = d;
  return best;
}

async function firstBytes(file: string, n: number): Promise<Buffer> {
  const fh = await open(file, "r");
  try {
    const buf = Buffer.alloc(n);
    const { bytesRead } = await fh.read(buf, 0, n, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/** The delimiter of a file, from its first line (detectDelimiter). */
export async function fileDelimiter(file: string): Promise<string> {
  return detectDelimiter((await firstBytes(file, MAX_ROW_BYTES)).toString("utf8").replace(/^\uFEFF/, ""));
}

/** What csv-parse says, in words for a person, with the line it happened on. */
function csvMessage(e: CsvError & { lines?: number }): string {
  const at = e.lines ? `line ${e.lines}: ` : "";
  switch (e.code) {
    case "CSV_QUOTE_NOT_CLOSED":
      return `${at}a quoted field is never closed`;
    case "CSV_INVALID_CLOSING_QUOTE":
    case "CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE":
      return `${at}text follows a closing quote; a quote inside a quoted field is written twice ("")`;
    case "CSV_MAX_RECORD_SIZE":
      return `${at}a row is longer than ${MAX_ROW_BYTES / 1024} KiB`;
    default:
      return /opening quote/i.test(e.message) ? `${at}a quote inside a field that is not quoted` : `${at}${e.message}`;
  }
}

const countNewlines = (b: Buffer) => {
  let n = 0;
  for (let i = b.indexOf(10); i !== -1; i = b.indexOf(10, i + 1)) n++;
  return n;
};

/**
 * Where in `chunk` the first byte that is no UTF-8 lies, for a message a person can act on: the
 * longest prefix a fresh decoder accepts (a character cut by the chunk's end is no error), found by
 * halving. Up to three continuation bytes at the start finish a character of the previous chunk.
 */
function firstInvalidByte(chunk: Buffer): number {
  let start = 0;
  while (start < 3 && start < chunk.length && (chunk[start] & 0xc0) === 0x80) start++;
  const valid = (end: number, stream = true) => {
    try {
      new TextDecoder("utf-8", { fatal: true }).decode(chunk.subarray(start, end), { stream });
      return true;
    } catch {
      return false;
    }
  };
  let lo = start;
  let hi = chunk.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (valid(mid)) lo = mid;
    else hi = mid - 1;
  }
  // The accepted prefix may end in the lead bytes of the broken character: point at its start.
  for (let i = 0; i < 3 && lo > start && !valid(lo, false); i++) lo--;
  return lo;
}

/**
 * The file's records (header row first), streamed: UTF-8 checked as the bytes arrive, parsed by
 * csv-parse, memory bounded by one chunk and one row. Rows may have fewer columns than the header
 * (missing cells are empty); more is the caller's to report. Any problem is a `fileError`.
 */
export async function* csvRecords(file: string, delimiter: string): AsyncGenerator<string[]> {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let offset = 0;
  let lines = 1;
  const utf8 = new Transform({
    transform(chunk: Buffer, _enc, done) {
      if (chunk.includes(0)) return done(fileError(`is not a CSV text file (it has NUL bytes, near byte ${offset + chunk.indexOf(0)})`));
      try {
        decoder.decode(chunk, { stream: true });
      } catch {
        const at = firstInvalidByte(chunk);
        const line = lines + countNewlines(chunk.subarray(0, at));
        return done(fileError(`is not UTF-8 text (invalid bytes on line ${line}, at byte ${offset + at + 1}); save it as CSV UTF-8`));
      }
      lines += countNewlines(chunk);
      offset += chunk.length;
      done(null, chunk);
    },
    flush(done) {
      try {
        decoder.decode();
        done();
      } catch {
        done(fileError("is not UTF-8 text (it ends inside a character); save it as CSV UTF-8"));
      }
    },
  });
  const parser = parse({ delimiter, bom: true, relax_column_count: true, skip_empty_lines: true, max_record_size: MAX_ROW_BYTES });
  pipeline(createReadStream(file, { highWaterMark: 64 * 1024 }), utf8, parser, () => {});
  try {
    for await (const record of parser as AsyncIterable<string[]>) yield record;
  } catch (e) {
    if (e instanceof AppError) throw e;
    if (e instanceof CsvError) throw fileError(`is not valid CSV: ${csvMessage(e)}`);
    throw e;
  } finally {
    parser.destroy();
  }
}

export type FileInspection = {
  header: string[];
  delimiter: string;
  /** Data rows (the header row excluded). */
  rows: number;
  /** The first rows, cells cut to 200 characters, for the dashboard's preview. */
  preview: string[][];
};

/**
 * Reads the whole file once before anything is imported: size, UTF-8, CSV syntax, a header row
 * and at least one data row. So a file that is not CSV, empty, not UTF-8 or broken anywhere is one
 * clear error and no job; rows with too many columns are rejected one by one later.
 */
export async function inspectFile(file: string): Promise<FileInspection> {
  let size: number;
  try {
    size = (await stat(file)).size;
  } catch {
    throw fileError("could not be read");
  }
  if (size > IMPORT_MAX_BYTES) throw fileError(`is larger than ${IMPORT_MAX_MB} MB (${(size / 1024 / 1024).toFixed(1)} MB)`);
  const text = (await firstBytes(file, MAX_ROW_BYTES)).toString("utf8").replace(/^\uFEFF/, "");
  if (!text.trim()) throw fileError("is empty");
  const delimiter = detectDelimiter(text);
  let header: string[] | undefined;
  let rows = 0;
  const preview: string[][] = [];
  for await (const record of csvRecords(file, delimiter)) {
    if (!header) {
      header = record.map((h) => h.trim());
      continue;
    }
    rows++;
    if (preview.length < PREVIEW_ROWS) preview.push(record.map((c) => (c.length > PREVIEW_CELL ? c.slice(0, PREVIEW_CELL) + "…" : c)));
  }
  if (!header || header.every((h) => !h)) throw fileError("is empty");
  if (!rows) throw fileError("has a header row but no data rows");
  return { header, delimiter, rows, preview };
}
