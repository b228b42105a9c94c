import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "./config";
import { tempDataDir } from "../db/test-db";

describe("configuration", () => {
  it("applies the documented defaults", () => {
    const c = parseConfig({ DATA_DIR: tempDataDir() });
    expect(c.appUrl.href).toBe("http://localhost:3000/");
    expect(c.apiUrl.href).toBe("http://localhost:3000/api");
    expect(c.redirectUrl.href).toBe("http://localhost:3001/");
    expect(c.redirectDomain).toBe("localhost:3001");
    expect(c.databaseUrl).toBeUndefined();
    expect(c.edgeHeaders).toBe("none");
    expect(c.trustProxy).toBe(false);
  });

  it("derives API_URL from APP_URL and keeps the port in redirect_domain only when not default", () => {
    const c = parseConfig({ APP_URL: "https://app.example.org", REDIRECT_URL: "https://go.example.org", DATA_DIR: tempDataDir() });
    expect(c.apiUrl.href).toBe("https://app.example.org/api");
    expect(c.redirectDomain).toBe("go.example.org");
  });

  it("keeps a generated SESSION_SECRET in DATA_DIR across starts", () => {
    const dir = tempDataDir();
    expect(parseConfig({ DATA_DIR: dir }).sessionSecret).toBe(parseConfig({ DATA_DIR: dir }).sessionSecret);
  });

  it.each([
    ["APP_URL", "not a url"],
    ["REDIRECT_URL", "ftp://x.example"],
    ["DATABASE_URL", "mysql://x"],
    ["REDIS_URL", "http://x"],
    ["SMTP_URL", "mail.example"],
    ["EDGE_HEADERS", "akamai"],
    ["TRUST_PROXY", "maybe?"],
    ["TRUST_PROXY", "maybe"],
    ["TRUST_PROXY", "loopback, 10.0.0.0/33"],
    ["MAIL_FROM", "links at example"],
    ["SIGNUPS", "no"],
    ["ANONYMOUS_LINKS", "false"],
    ["EMAIL_SIGNIN", "disabled"],
    ["WEBHOOK_ALLOW_PRIVATE", "yes"],
    ["LINK_HEALTH_CHECKS", "0"],
    ["OIDC_ISSUER", "not a url"],
    ["REDIRECT_URL", "http://127.0.0.1:5403/path"],
    ["REDIRECT_URL", "http://127.0.0.1:5403?x=1"],
    ["REDIRECT_URL", "http://127.0.0.1:5403#frag"],
    ["REDIRECT_URL", "http://u:p@127.0.0.1:5403"],
    ["APP_URL", "http://127.0.0.1:5402/sub"],
    ["API_URL", "http://127.0.0.1:5402/api?x=1"],
    ["API_URL", "http://user@127.0.0.1:5402/api"],
    ["CLICK_RETENTION_DAYS", "200000000"],
    ["CLICK_RETENTION_DAYS", "99999999999999999999"],
  ])("refuses a wrong %s naming the variable (%s)", (name, value) => {
    expect(() => parseConfig({ DATA_DIR: tempDataDir(), [name]: value })).toThrow(ConfigError);
    expect(() => parseConfig({ DATA_DIR: tempDataDir(), [name]: value })).toThrow(name);
  });

  it("TRUST_PROXY takes true, false, a hop count or a list of addresses, subnets and express's names", () => {
    const trust = (v: string) => parseConfig({ DATA_DIR: tempDataDir(), TRUST_PROXY: v }).trustProxy;
    expect([trust("true"), trust("false"), trust("2"), trust("loopback, 10.0.0.0/8, fd00::/8")]).toEqual([true, false, 2, "loopback, 10.0.0.0/8, fd00::/8"]);
  });

  it("reads the instance switches: SIGNUPS, ANONYMOUS_LINKS, EMAIL_SIGNIN default on, off when set so", () => {
    const on = parseConfig({ DATA_DIR: tempDataDir() });
    expect([on.signups, on.anonymousLinks, on.emailSignin, on.linkHealthChecks, on.webhookAllowPrivate]).toEqual([true, true, true, true, false]);
    const off = parseConfig({
      DATA_DIR: tempDataDir(),
      SIGNUPS: "off",
      ANONYMOUS_LINKS: "off",
      LINK_HEALTH_CHECKS: "off",
      WEBHOOK_ALLOW_PRIVATE: "true",
      EMAIL_SIGNIN: "off",
      OIDC_ISSUER: "https://id.example.com",
      OIDC_CLIENT_ID: "links",
      OIDC_CLIENT_SECRET: "s3cret",
    });
    expect([off.signups, off.anonymousLinks, off.emailSignin, off.linkHealthChecks, off.webhookAllowPrivate]).toEqual([false, false, false, false, true]);
    expect(off.oidc).toEqual({ issuer: "https://id.example.com", clientId: "links", clientSecret: "s3cret", name: "Single sign-on" });
  });

  it("MAIL_FROM is the sender of every mail, as an address or Name <address>", () => {
    expect(parseConfig({ DATA_DIR: tempDataDir(), MAIL_FROM: "Acme Links <links@acme.example>" }).mailFrom).toBe("Acme Links <links@acme.example>");
    expect(parseConfig({ DATA_DIR: tempDataDir(), MAIL_FROM: "links@acme.example" }).mailFrom).toBe("links@acme.example");
  });

  it("refuses a partial OIDC configuration, an http issuer off loopback, and EMAIL_SIGNIN=off without OIDC", () => {
    expect(() => parseConfig({ DATA_DIR: tempDataDir(), OIDC_ISSUER: "https://id.example.com" })).toThrow("OIDC_ISSUER");
    const oidc = { OIDC_CLIENT_ID: "links", OIDC_CLIENT_SECRET: "s3cret" };
    expect(() => parseConfig({ DATA_DIR: tempDataDir(), ...oidc, OIDC_ISSUER: "http://id.example.com" })).toThrow("OIDC_ISSUER");
    expect(parseConfig({ DATA_DIR: tempDataDir(), ...oidc, OIDC_ISSUER: "http://127.0.0.1:9999" }).oidc?.issuer).toBe("http://127.0.0.1:9999");
    expect(() => parseConfig({ DATA_DIR: tempDataDir(), EMAIL_SIGNIN: "off" })).toThrow("EMAIL_SIGNIN");
  });

  it("refuses a REDIRECT_URL on the same host and port as APP_URL (the Host header could not tell them apart)", () => {
    expect(() => parseConfig({ DATA_DIR: tempDataDir(), APP_URL: "http://localhost:4000", REDIRECT_URL: "http://localhost:4000" })).toThrow("REDIRECT_URL");
    expect(parseConfig({ DATA_DIR: tempDataDir(), APP_URL: "http://app.localhost:4000", REDIRECT_URL: "http://go.localhost:4000" }).redirectDomain).toBe(
      "go.localhost:4000",
    );
  });

  it("stops the start with a message naming the variable", () => {
    // The bundle `npm start` runs, built from the sources by the test setup.
    const r = spawnSync(process.execPath, ["build/server.mjs"], {
      env: { ...process.env, EDGE_HEADERS: "akamai", DATA_DIR: tempDataDir(), DATABASE_URL: "" },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("EDGE_HEADERS");
  });
});
