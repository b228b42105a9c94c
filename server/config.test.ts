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
  ])("refuses a wrong %s naming the variable", (name, value) => {
    expect(() => parseConfig({ DATA_DIR: tempDataDir(), [name]: value })).toThrow(ConfigError);
    expect(() => parseConfig({ DATA_DIR: tempDataDir(), [name]: value })).toThrow(name);
  });

  it("refuses a REDIRECT_URL on the same host and port as APP_URL (the Host header could not tell them apart)", () => {
    expect(() => parseConfig({ DATA_DIR: tempDataDir(), APP_URL: "http://localhost:4000", REDIRECT_URL: "http://localhost:4000" })).toThrow("REDIRECT_URL");
    expect(parseConfig({ DATA_DIR: tempDataDir(), APP_URL: "http://app.localhost:4000", REDIRECT_URL: "http://go.localhost:4000" }).redirectDomain).toBe(
      "go.localhost:4000",
    );
  });

  it("stops the start with a message naming the variable", () => {
    const r = spawnSync("node_modules/.bin/tsx", ["server/main.ts"], {
      env: { ...process.env, EDGE_HEADERS: "akamai", DATA_DIR: tempDataDir(), DATABASE_URL: "" },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("EDGE_HEADERS");
  });
});
