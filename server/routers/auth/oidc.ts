import { createHmac, timingSafeEqual } from "node:crypto";
import { eq } from "drizzle-orm";
import * as oauth from "oauth4webapi";
import { parse as parseCookie, serialize as serializeCookie } from "cookie";
import { users } from "../../../db/schema";
import type { Config } from "../../config";
import { AppError, isUniqueViolation } from "../../domain/errors";
import { createUserWithWorkspace, normalizeEmail } from "../../lib/users";
import type { AppServices } from "../../core/services";
import type { Exchange } from "../../trpc/context";
import { getAccount, type AccountDto } from "../account";
import { startLoginSession } from "../sessions";
import { maySignIn } from "./sign-in-policy";

/**
 * Single sign-on with OpenID Connect: the authorization code flow with PKCE. The browser's state,
 * nonce and code verifier travel in a short-lived, signed, HttpOnly cookie set when the flow starts,
 * so the callback only accepts the answer to a flow this browser began (state) whose ID token was
 * issued for it (nonce). The account is the one of the ID token's e-mail, which the provider must
 * have verified; a first sign-in makes it, unless sign-ups are off and the address is not invited.
 */
export const OIDC_COOKIE = "app_oidc";
const FLOW_TTL_MS = 10 * 60 * 1000;

type Oidc = NonNullable<Config["oidc"]>;
/** What single sign-on reads and writes: the configuration, accounts, sessions, and the log of refusals. */
type OidcDeps = Pick<AppServices, "db" | "config" | "lucia" | "log">;
type Flow = { state: string; nonce: string; verifier: string; redirectTo: string; until: number };

export const callbackUrl = (config: Pick<Config, "appUrl">) => `${config.appUrl.href.replace(/\/+$/, "")}/auth/oidc/callback`;

/** A provider that accepts the connection but never answers must not hold the browser for long. */
const REQUEST_TIMEOUT_MS = 10_000;

/**
 * Options of every request to the provider: a time limit, and, for an http issuer (only
 * configurable on a loopback host, for tests), the library's leave to use it.
 */
const httpOptions = (oidc: Oidc) => ({
  signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  ...(new URL(oidc.issuer).protocol === "http:" ? { [oauth.allowInsecureRequests]: true } : {}),
});

/** Discovery once per issuer and process; a failed one is tried again on the next sign-in. */
const discovered = new Map<string, Promise<oauth.AuthorizationServer>>();
function authorizationServer(oidc: Oidc): Promise<oauth.AuthorizationServer> {
  let found = discovered.get(oidc.issuer);
  if (!found) {
    const issuer = new URL(oidc.issuer);
    found = oauth.discoveryRequest(issuer, { algorithm: "oidc", ...httpOptions(oidc) }).then((res) => oauth.processDiscoveryResponse(issuer, res));
    found.catch(() => discovered.delete(oidc.issuer));
    discovered.set(oidc.issuer, found);
  }
  return found;
}

/** The provider's configuration, or 503 SERVICE_UNAVAILABLE (logged) while it cannot be read. */
function discover(app: OidcDeps, oidc: Oidc): Promise<oauth.AuthorizationServer> {
  return authorizationServer(oidc).catch((e: unknown) => {
    app.log.warn({ step: "discovery", error: e instanceof Error ? e.message : String(e) }, "single sign-on refused");
    throw new AppError("SERVICE_UNAVAILABLE");
  });
}

/** client_secret_basic, the default, unless the provider says it only takes client_secret_post. */
function clientAuth(as: oauth.AuthorizationServer, secret: string): oauth.ClientAuth {
  const methods = as.token_endpoint_auth_methods_supported;
  return methods && !methods.includes("client_secret_basic") && methods.includes("client_secret_post")
    ? oauth.ClientSecretPost(secret)
    : oauth.ClientSecretBasic(secret);
}

function configured(app: OidcDeps): Oidc {
  const oidc = app.config.oidc;
  if (!oidc) throw new AppError("NOT_FOUND");
  return oidc;
}

const sign = (secret: string, payload: string) => createHmac("sha256", secret).update(`oidc:${payload}`).digest("base64url");

function setFlowCookie(app: OidcDeps, exchange: Pick<Exchange, "res">, value: string, maxAgeSeconds: number) {
  exchange.res.appendHeader(
    "Set-Cookie",
    serializeCookie(OIDC_COOKIE, value, {
      httpOnly: true,
      // Lax: the provider's redirect back is a top-level GET, which carries it.
      sameSite: "lax",
      path: "/",
      secure: app.config.appUrl.protocol === "https:",
      maxAge: maxAgeSeconds,
    }),
  );
}

function readFlow(app: OidcDeps, exchange: Pick<Exchange, "req">): Flow | null {
  const raw = exchange.req.headers.cookie;
  if (!raw) return null;
  let value: string | undefined;
  try {
    value = parseCookie(String(raw))[OIDC_COOKIE];
  } catch {
    return null;
  }
  const [payload, mac] = (value ?? "").split(".");
  if (!payload || !mac) return null;
  const expected = Buffer.from(sign(app.config.sessionSecret, payload));
  const given = Buffer.from(mac);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
  try {
    const flow = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Flow;
    return flow.until > Date.now() ? flow : null;
  } catch {
    return null;
  }
}

/** Begins a sign-in: answers the provider's authorization URL and sets the flow's cookie. */
export async function startOidcSignIn(app: OidcDeps, redirectTo: string, exchange: Exchange): Promise<{ url: string }> {
  const oidc = configured(app);
  const as = await discover(app, oidc);
  if (!as.authorization_endpoint) throw new AppError("SERVICE_UNAVAILABLE");
  const flow: Flow = {
    state: oauth.generateRandomState(),
    nonce: oauth.generateRandomNonce(),
    verifier: oauth.generateRandomCodeVerifier(),
    redirectTo,
    until: Date.now() + FLOW_TTL_MS,
  };
  const url = new URL(as.authorization_endpoint);
  url.searchParams.set("client_id", oidc.clientId);
  url.searchParams.set("redirect_uri", callbackUrl(app.config));
  url.searchParams.set("response_type", "code");
  url.searchParams.set("scope", "openid email");
  url.searchParams.set("state", flow.state);
  url.searchParams.set("nonce", flow.nonce);
  url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(flow.verifier));
  url.searchParams.set("code_challenge_method", "S256");
  const payload = Buffer.from(JSON.stringify(flow)).toString("base64url");
  setFlowCookie(app, exchange, `${payload}.${sign(app.config.sessionSecret, payload)}`, FLOW_TTL_MS / 1000);
  return { url: url.href };
}

/**
 * Finishes a sign-in from the callback's query string. A missing or foreign flow, a wrong state, an
 * error from the provider, or a failed code exchange or ID token check: 401 UNAUTHORIZED. A
 * provider that cannot be reached or answers garbage to discovery, or fails to answer the code
 * exchange: 503 SERVICE_UNAVAILABLE. An e-mail the provider did not verify, or a new address while
 * sign-ups are off: 403 FORBIDDEN.
 */
export async function finishOidcSignIn(app: OidcDeps, query: string, exchange: Exchange): Promise<{ account: AccountDto; redirectTo: string }> {
  const oidc = configured(app);
  const flow = readFlow(app, exchange);
  // The flow is used once, whatever happens next.
  setFlowCookie(app, exchange, "", 0);
  if (!flow) throw new AppError("UNAUTHORIZED");
  const step: Step = { app, oidc, as: await discover(app, oidc), client: { client_id: oidc.clientId } };
  const { claims, accessToken } = await exchangeCode(step, flow, query);
  const address = normalizeEmail(await verifiedEmail(step, claims, accessToken));
  const userId = await userFor(app, address);
  if (!userId) throw new AppError("FORBIDDEN");
  const session = await startLoginSession(app, userId, exchange);
  return { account: await getAccount(app.db, userId, session.workspaceId ?? undefined), redirectTo: flow.redirectTo };
}

type Step = { app: OidcDeps; oidc: Oidc; as: oauth.AuthorizationServer; client: oauth.Client };

/** Logs why a step refused the sign-in, and the answer it becomes. */
function refused(app: OidcDeps, step: string, e: unknown, code: "UNAUTHORIZED" | "SERVICE_UNAVAILABLE" = "UNAUTHORIZED"): AppError {
  const error = e instanceof oauth.AuthorizationResponseError ? e.error : e instanceof Error ? e.message : String(e);
  app.log.warn({ step, error }, "single sign-on refused");
  return new AppError(code);
}

/** The callback's state checked and its code exchanged for a validated ID token (with the flow's PKCE verifier and nonce). */
async function exchangeCode({ app, oidc, as, client }: Step, flow: Flow, query: string): Promise<{ claims: oauth.IDToken; accessToken: string }> {
  let params: URLSearchParams;
  try {
    // Also where the provider's own error answer (the person cancelled: access_denied) ends up.
    params = oauth.validateAuthResponse(as, client, new URLSearchParams(query), flow.state);
  } catch (e) {
    throw refused(app, "authorization response", e);
  }
  // A provider that cannot be reached, times out or fails with a 5xx while exchanging the code is
  // down, not refusing: the person may try again later.
  let response: Response;
  try {
    response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      clientAuth(as, oidc.clientSecret),
      params,
      callbackUrl(app.config),
      flow.verifier,
      httpOptions(oidc),
    );
  } catch (e) {
    throw refused(app, "token request", e, "SERVICE_UNAVAILABLE");
  }
  if (response.status >= 500) throw refused(app, "token request", `status ${response.status}`, "SERVICE_UNAVAILABLE");
  try {
    const result = await oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: flow.nonce, requireIdToken: true });
    return { claims: oauth.getValidatedIdTokenClaims(result)!, accessToken: result.access_token };
  } catch (e) {
    throw refused(app, "token response", e);
  }
}

/** The person's e-mail address, when the provider says it verified it; else 403 FORBIDDEN. */
async function verifiedEmail({ app, oidc, as, client }: Step, claims: oauth.IDToken, accessToken: string): Promise<string> {
  let { email, email_verified: verified } = claims as { email?: unknown; email_verified?: unknown };
  // Providers that keep the e-mail out of the ID token answer it from the userinfo endpoint.
  if (typeof email !== "string" && as.userinfo_endpoint) {
    let info: Response;
    try {
      info = await oauth.userInfoRequest(as, client, accessToken, httpOptions(oidc));
    } catch (e) {
      throw refused(app, "userinfo request", e, "SERVICE_UNAVAILABLE");
    }
    if (info.status >= 500) throw refused(app, "userinfo request", `status ${info.status}`, "SERVICE_UNAVAILABLE");
    try {
      ({ email, email_verified: verified } = await oauth.processUserInfoResponse(as, client, claims.sub, info));
    } catch (e) {
      throw refused(app, "userinfo response", e);
    }
  }
  // Microsoft Entra ID never sends email_verified; its optional claim xms_edov says the address's
  // domain is one the tenant's admin has proven to own, which is the same assurance.
  if (verified === undefined && (claims as { xms_edov?: unknown }).xms_edov === true) verified = true;
  if (typeof email !== "string" || verified !== true) throw new AppError("FORBIDDEN");
  return email;
}

/** The account of this address, made on first sign-in when sign-ups allow it; null when they do not. */
async function userFor(app: OidcDeps, address: string): Promise<string | null> {
  return app.db.transaction(async (tx) => {
    const [existing] = await tx.select({ id: users.id }).from(users).where(eq(users.email, address));
    if (existing) return existing.id;
    if (!(await maySignIn(tx, app.config, address))) return null;
    try {
      return (await tx.transaction((sp) => createUserWithWorkspace(sp, { email: address }))).id;
    } catch (e) {
      if (!isUniqueViolation(e, "users_email_idx")) throw e;
      const [made] = await tx.select({ id: users.id }).from(users).where(eq(users.email, address));
      return made.id;
    }
  });
}
