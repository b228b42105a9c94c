import { text } from "./input";

export const MAX_URL_LENGTH = 4096;

/** An absolute http(s) URL of at most 4096 characters (decisions §3). */
export const httpUrl = text().max(MAX_URL_LENGTH, `must be at most ${MAX_URL_LENGTH} characters`).refine(isHttpUrl, "must be an absolute http or https URL");

export function isHttpUrl(value: string): boolean {
  if (!/^https?:\/\//i.test(value)) return false;
  try {
    const u = new URL(value);
    return (u.protocol === "http:" || u.protocol === "https:") && u.hostname.length > 0 && !/\s/.test(value);
  } catch {
    return false;
  }
}

/** A host without case or the root label's trailing dot (`go.test.` resolves like `go.test`). */
const sameHost = (host: string) => host.toLowerCase().replace(/\.(?=(:\d+)?$)/, "");

/** True when the URL points at the redirect domain itself (a loop). */
export function isOnHost(value: string, host: string): boolean {
  try {
    return sameHost(new URL(value).host) === sameHost(host);
  } catch {
    return false;
  }
}
