/** Dates are shown in UTC on the server and re-rendered in local time only where it cannot shift layout. */
export function formatDateTime(ms: number | null | undefined): string {
  if (ms == null) return "—";
  return new Date(ms).toISOString().replace("T", " ").slice(0, 16) + " UTC";
}
export function formatDate(ms: number | null | undefined): string {
  if (ms == null) return "—";
  return new Date(ms).toISOString().slice(0, 10);
}
export const formatNumber = (n: number) => new Intl.NumberFormat("en").format(n);

let regionNames: Intl.DisplayNames | null = null;
export function countryName(code: string | null | undefined): string {
  if (!code) return "Unknown";
  try {
    regionNames ??= new Intl.DisplayNames(["en"], { type: "region" });
    return regionNames.of(code) ?? code;
  } catch {
    return code;
  }
}

/** `datetime-local` value (UTC) for a ms timestamp. */
export const toLocalInput = (ms: number | null | undefined, offsetMin = 0) => (ms == null ? "" : new Date(ms - offsetMin * 60_000).toISOString().slice(0, 16));
