import { stringify, type Stringifier } from "csv-stringify";
import { stringify as stringifySync } from "csv-stringify/sync";

/**
 * The one way the service writes CSV (links export, clicks, import reports), so a cell typed by
 * anyone cannot break a row or run as a spreadsheet formula:
 * - a cell holding CR or LF (each alone too), a quote or the separator is quoted, quotes doubled
 *   (csv-stringify on its own leaves a lone CR or LF bare, and a spreadsheet then starts a new row);
 * - a text cell starting with `= + - @`, tab or CR gets a leading `'`, which spreadsheets show as
 *   text. So does one that already starts with `'`s followed by such a character, so
 *   `unguardCell` can take exactly one `'` off and give every value back as it was.
 * Numbers are written as they are: a negative latitude stays a number.
 */

/** Text a spreadsheet would run (`=`, `+`, `-`, `@`, tab, CR first), possibly behind quotes we added. */
const FORMULA_LIKE = /^'*[=+\-@\t\r]/;
/** Cells csv-stringify must quote beyond its own rule (which misses a lone CR or LF). */
const NEEDS_QUOTES = /[\r\n",]/;

/** A text cell as written: with a leading `'` when a spreadsheet would otherwise run it. */
export const guardCell = (value: string): string => (FORMULA_LIKE.test(value) ? `'${value}` : value);

/** The value a guarded cell stood for: one leading `'` dropped when `guardCell` put it there, anything else as it is. */
export const unguardCell = (cell: string): string => (cell.startsWith("'") && FORMULA_LIKE.test(cell.slice(1)) ? cell.slice(1) : cell);

const OPTIONS = {
  delimiter: ",",
  record_delimiter: "windows",
  quoted_match: NEEDS_QUOTES,
  cast: {
    string: (v: string) => guardCell(v),
    // Dates are written as ISO 8601 (the default would be ms, unguarded but unreadable).
    date: (v: Date) => v.toISOString(),
  },
} as const;

export type CsvValue = string | number | boolean | null | undefined;
export type CsvRecord = Record<string, CsvValue>;

/** A streaming writer of records (objects keyed by column) under a header row of `columns`: UTF-8, CRLF. */
export function csvStream(columns: readonly string[]): Stringifier {
  return stringify({ ...OPTIONS, header: true, columns: [...columns] });
}

/** The whole file at once, for small answers: a header row of `columns`, then one row per record. */
export function csvText(columns: readonly string[], records: readonly CsvRecord[]): string {
  return stringifySync([...records], { ...OPTIONS, header: true, columns: [...columns] });
}
