import { randomBytes } from "node:crypto";
import { parse as parseCookie, serialize as serializeCookie } from "cookie";
import { sha256 } from "../../lib/crypto";
import type { AppServices } from "../../core/services";
import type { Exchange } from "../../trpc/context";
import { CODE_TTL_MS } from "./email-codes";

/**
 * The pending-sign-in cookie: a random value the browser gets when it asks for a sign-in code.
 * Only its SHA-256 is stored, with the code; the browser carrying the same cookie tries it with its own
 * count of wrong tries, so someone who knows a victim's e-mail address cannot end the victim's code
 * with wrong guesses (a caller without the cookie has a count of its own: docs/decisions/012-pending-sign-in-cookie.md).
 */
export const PENDING_COOKIE = "app_signin";

/** 32 random bytes in base64url. */
const VALUE_RE = /^[A-Za-z0-9_-]{43}$/;

function readPending(exchange: Pick<Exchange, "req">): string | null {
  const raw = exchange.req.headers.cookie;
  if (!raw) return null;
  try {
    const value = parseCookie(String(raw))[PENDING_COOKIE];
    return value && VALUE_RE.test(value) ? value : null;
  } catch {
    return null;
  }
}

function setCookie(app: Pick<AppServices, "config">, exchange: Pick<Exchange, "res">, value: string, maxAgeSeconds: number) {
  const cookie = serializeCookie(PENDING_COOKIE, value, {
    httpOnly: true,
    sameSite: "lax",
    path: "/",
    secure: app.config.appUrl.protocol === "https:",
    maxAge: maxAgeSeconds,
  });
  exchange.res.appendHeader("Set-Cookie", cookie);
}

/** Hash of the calling browser's pending sign-in, or null when it has none (then no code is its). */
export function pendingSignInHash(exchange: Pick<Exchange, "req">): string | null {
  const value = readPending(exchange);
  return value ? sha256(value) : null;
}

/**
 * Sets the pending-sign-in cookie for as long as a code lives, and answers the hash to store with the
 * new code. A browser that already has one keeps its value, so every code it asked for stays usable
 * (the mail of an earlier "send a new code" may arrive last).
 */
export function beginPendingSignIn(app: Pick<AppServices, "config">, exchange: Exchange): string {
  const value = readPending(exchange) ?? randomBytes(32).toString("base64url");
  setCookie(app, exchange, value, CODE_TTL_MS / 1000);
  return sha256(value);
}

/** Clears the cookie once the sign-in is done. */
export function endPendingSignIn(app: Pick<AppServices, "config">, exchange: Pick<Exchange, "res">): void {
  setCookie(app, exchange, "", 0);
}
