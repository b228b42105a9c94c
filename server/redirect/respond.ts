import type { IncomingMessage, ServerResponse } from "node:http";
import { wantsHtml } from "../lib/accept";

// Pages of our own (form, card, 404) are never framed, never cached, never leak the referrer.
const HTML_HEADERS = {
  "Content-Type": "text/html; charset=utf-8",
  "Cache-Control": "no-store",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
  "Content-Security-Policy":
    "default-src 'none'; style-src 'unsafe-inline'; img-src https: http: data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
};
// The password form posts to itself, but the answer is a 302 to the destination (another origin),
// and CSP 3 applies form-action to redirects too: any http(s) destination must be allowed.
export const PASSWORD_FORM_HEADERS = {
  "Content-Security-Policy":
    "default-src 'none'; style-src 'unsafe-inline'; img-src https: http: data:; form-action 'self' http: https:; frame-ancestors 'none'; base-uri 'none'",
};

const JSON_ERROR_HEADERS = {
  "Content-Type": "application/json",
  "Cache-Control": "no-store",
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
};

export const NOT_FOUND = { error: "NOT_FOUND" };
export const METHOD_NOT_ALLOWED = { error: "METHOD_NOT_ALLOWED" };

/**
 * An error answer of the redirect host: `page` for a browser (wantsHtml), else the service's error
 * body `{"error": code}` (with `fields` for a 400).
 */
export function sendError(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  error: { error: string; fields?: Record<string, string[]> },
  page: () => string,
  extra: Record<string, string> = {},
) {
  const head = req.method === "HEAD";
  if (wantsHtml(req)) return sendHtml(res, status, page(), head, extra);
  const body = Buffer.from(JSON.stringify(error));
  res.writeHead(status, { ...JSON_ERROR_HEADERS, ...extra, "Content-Length": String(body.length) });
  res.end(head ? undefined : body);
}

export function sendHtml(res: ServerResponse, status: number, html: string, head: boolean, extra: Record<string, string> = {}) {
  const body = Buffer.from(html);
  res.writeHead(status, { ...HTML_HEADERS, ...extra, "Content-Length": String(body.length) });
  res.end(head ? undefined : body);
}

const VISIBLE_ASCII = /^[\x21-\x7e]*$/;

export function sendRedirect(res: ServerResponse, status: number, location: string) {
  let loc = location;
  // Stored URLs are validated, but a Location header takes only visible ASCII: encode the rest.
  if (!VISIBLE_ASCII.test(loc)) loc = new URL(loc).href.replace(/[^\x21-\x7e]/g, encodeURIComponent);
  res.writeHead(status, { Location: loc, "Cache-Control": "no-store", "Content-Length": "0" });
  res.end();
}
