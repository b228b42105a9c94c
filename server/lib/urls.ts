import { z } from "zod";
import { charCount, text } from "./input";

export const MAX_URL_LENGTH = 4096;
const TOO_LONG = `must be at most ${MAX_URL_LENGTH} characters`;

/**
 * An absolute http(s) URL of at most 4096 characters, stored as its WHATWG serialisation: what a
 * browser requests for it. A backslash is a `/` there (`https://a.example\@b.example/` is a path on
 * a.example, while other parsers read b.example as the host), the host is lower case and punycode,
 * and characters outside URLs are percent-encoded. One difference is left as it was sent: the `/` of
 * an empty path (`https://example.com` reads back as that, not `https://example.com/`), which every
 * client adds when it requests the URL. The limit holds for both the text sent and the stored form,
 * which can be several times longer (one emoji is 12 characters encoded).
 */
export const httpUrl = text()
  .max(MAX_URL_LENGTH, TOO_LONG)
  .refine(isHttpUrl, "must be an absolute http or https URL")
  .transform((value, ctx) => {
    const href = storedUrl(value);
    if (charCount(href) <= MAX_URL_LENGTH) return href;
    ctx.addIssue({ code: "too_big", maximum: MAX_URL_LENGTH, type: "string", inclusive: true, message: `${TOO_LONG} once percent-encoded` });
    return z.NEVER;
  });

export function isHttpUrl(value: string): boolean {
  if (!/^https?:\/\//i.test(value)) return false;
  try {
    const u = new URL(value);
    return (u.protocol === "http:" || u.protocol === "https:") && u.hostname.length > 0 && !/\s/.test(value);
  } catch {
    return false;
  }
}

/** The WHATWG serialisation of an absolute URL (what `new URL(value).href` gives). */
export const normalizeUrl = (value: string): string => new URL(value).href;

/** `normalizeUrl`, except that a URL whose only difference from it is the empty path's `/` stays as sent. */
function storedUrl(value: string): string {
  const href = normalizeUrl(value);
  return href === value.replace(/^(https?:\/\/[^/?#]*)(?=[?#]|$)/, "$1/") ? value : href;
}

/** A host without case or the root label's trailing dot (`go.test.` resolves like `go.test`). */
const sameHost = (host: string) => host.toLowerCase().replace(/\.(?=(:\d+)?$)/, "");

/** `localhost`, `127.x.x.x` and `[::1]` name this machine's loopback interface: one server on a given port. */
const LOOPBACK_NAME = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

/** `sameHost`, with every loopback name written `localhost`. */
const machineHost = (host: string) => {
  const [, name, port = ""] = /^(\[[^\]]*\]|[^:]*)(:\d+)?$/.exec(sameHost(host)) ?? [];
  return name !== undefined && LOOPBACK_NAME.test(name) ? `localhost${port}` : sameHost(host);
};

/**
 * True when the URL points at the redirect domain itself (a loop). A redirect domain on a loopback
 * name is reached by any of them (`http://127.0.0.1:3001/x` loops as `http://localhost:3001/x` does);
 * other aliases of a host would take DNS at write time.
 */
export function isOnHost(value: string, host: string): boolean {
  try {
    return machineHost(new URL(value).host) === machineHost(host);
  } catch {
    return false;
  }
}

/**
 * A URL path with its percent-encoded unreserved characters (letters, digits, `-._~`) written as
 * themselves: the same URI either way, so `/%61bc` names the slug `abc`. Any other escape stays.
 */
export const decodeUnreserved = (path: string): string =>
  path.includes("%")
    ? path.replace(/%([0-9A-Fa-f]{2})/g, (escape, hex: string) => {
        const c = String.fromCharCode(parseInt(hex, 16));
        return /[0-9A-Za-z\-._~]/.test(c) ? c : escape;
      })
    : path;
