import { createHash, createSign, generateKeyPairSync, randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A minimal OpenID Connect provider on loopback for tests: discovery, an authorization endpoint that
 * signs in whoever `nextUser` says at once (no page), a token endpoint that checks the client secret,
 * the redirect URI and the PKCE verifier, and RS256 ID tokens. `tamper` bends one answer to test a refusal:
 * `nonce`/`audience` in the ID token, `authorizeError` sends the browser back with that error instead
 * of a code, `token: "garbage"` answers the code exchange with a 502 HTML page.
 */
export type ProviderUser = { sub: string; email?: string; email_verified?: boolean; xms_edov?: boolean };
export type OidcProvider = {
  issuer: string;
  clientId: string;
  clientSecret: string;
  nextUser: ProviderUser;
  /** The query of the last authorization request. */
  lastAuthorize: URLSearchParams | null;
  /** The form of the last token request. */
  lastToken: URLSearchParams | null;
  tamper: { nonce?: string; audience?: string; authorizeError?: string; token?: "garbage" };
  close(): Promise<void>;
};

const b64 = (v: object | Buffer) => (Buffer.isBuffer(v) ? v : Buffer.from(JSON.stringify(v))).toString("base64url");

/** `onlyPost`: the provider lists and takes client_secret_post only (credentials in the form). */
export async function startOidcProvider(opts: { onlyPost?: boolean } = {}): Promise<OidcProvider> {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const kid = randomBytes(4).toString("hex");
  const grants = new Map<string, { user: ProviderUser; nonce: string; challenge: string; redirectUri: string }>();
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const p: OidcProvider = {
    issuer,
    clientId: "links-test",
    clientSecret: randomBytes(16).toString("hex"),
    nextUser: { sub: "1", email: "someone@example.com", email_verified: true },
    lastAuthorize: null,
    lastToken: null,
    tamper: {},
    close: () => new Promise((r) => server.close(() => r())),
  };
  const idToken = (user: ProviderUser, nonce: string) => {
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: issuer, aud: p.tamper.audience ?? p.clientId, iat: now, exp: now + 300, nonce: p.tamper.nonce ?? nonce, ...user };
    const signing = `${b64({ alg: "RS256", typ: "JWT", kid })}.${b64(claims)}`;
    return `${signing}.${createSign("RSA-SHA256").update(signing).sign(privateKey).toString("base64url")}`;
  };
  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
    res.end(JSON.stringify(body));
  };
  server.on("request", (req, res) => {
    const url = new URL(req.url ?? "/", issuer);
    if (url.pathname === "/.well-known/openid-configuration")
      return json(res, 200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        userinfo_endpoint: `${issuer}/userinfo`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ["code"],
        subject_types_supported: ["public"],
        id_token_signing_alg_values_supported: ["RS256"],
        code_challenge_methods_supported: ["S256"],
        ...(opts.onlyPost ? { token_endpoint_auth_methods_supported: ["client_secret_post"] } : {}),
      });
    if (url.pathname === "/jwks") return json(res, 200, { keys: [{ ...publicKey.export({ format: "jwk" }), kid, alg: "RS256", use: "sig" }] });
    if (url.pathname === "/authorize") {
      p.lastAuthorize = url.searchParams;
      const q = url.searchParams;
      if (p.tamper.authorizeError) {
        const back = new URL(q.get("redirect_uri")!);
        back.searchParams.set("error", p.tamper.authorizeError);
        back.searchParams.set("state", q.get("state") ?? "");
        res.writeHead(302, { location: back.href });
        return res.end();
      }
      const code = randomBytes(16).toString("hex");
      grants.set(code, { user: p.nextUser, nonce: q.get("nonce") ?? "", challenge: q.get("code_challenge") ?? "", redirectUri: q.get("redirect_uri") ?? "" });
      const back = new URL(q.get("redirect_uri")!);
      back.searchParams.set("code", code);
      back.searchParams.set("state", q.get("state") ?? "");
      res.writeHead(302, { location: back.href });
      return res.end();
    }
    if (url.pathname === "/token" && req.method === "POST" && p.tamper.token === "garbage") {
      res.writeHead(502, { "content-type": "text/html" });
      return res.end("<html><body>Bad gateway</body></html>");
    }
    if (url.pathname === "/token" && req.method === "POST") {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        const form = new URLSearchParams(body);
        p.lastToken = form;
        // Basic credentials are form-encoded before base64 (client_secret_basic).
        const [id, secret] = opts.onlyPost
          ? [form.get("client_id"), req.headers.authorization ? null : form.get("client_secret")]
          : Buffer.from(String(req.headers.authorization ?? "").replace(/^Basic /, ""), "base64")
              .toString("utf8")
              .split(":")
              .map((v) => decodeURIComponent(v.replace(/\+/g, " ")));
        if (id !== p.clientId || secret !== p.clientSecret) return json(res, 401, { error: "invalid_client" });
        const grant = grants.get(form.get("code") ?? "");
        grants.delete(form.get("code") ?? "");
        const verifier = form.get("code_verifier") ?? "";
        const challenge = createHash("sha256").update(verifier).digest("base64url");
        if (!grant || form.get("grant_type") !== "authorization_code" || grant.redirectUri !== form.get("redirect_uri") || grant.challenge !== challenge)
          return json(res, 400, { error: "invalid_grant" });
        json(res, 200, { access_token: randomBytes(16).toString("hex"), token_type: "Bearer", expires_in: 300, id_token: idToken(grant.user, grant.nonce) });
      });
      return;
    }
    json(res, 404, { error: "not_found" });
  });
  return p;
}
