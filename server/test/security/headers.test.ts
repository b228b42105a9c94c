import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { http } from "../harness";
import { startLoggedServer, type LoggedServer } from "./servers";

/** Helmet headers on API and dashboard answers; HSTS only when the public URL is https. */
const directives = (csp: string) =>
  new Map(
    csp
      .split(";")
      .map((d) => d.trim().split(/\s+/))
      .map(([k, ...v]) => [k, v] as [string, string[]]),
  );

function expectHardened(headers: Headers, what: string) {
  const csp = headers.get("content-security-policy") ?? "";
  expect(csp, `${what}: CSP`).not.toBe("");
  const d = directives(csp);
  expect(d.get("frame-ancestors"), `${what}: frame-ancestors`).toEqual(["'none'"]);
  const scripts = d.get("script-src") ?? d.get("default-src") ?? [];
  expect(scripts, `${what}: script-src`).not.toContain("'unsafe-inline'");
  expect(scripts, `${what}: script-src`).not.toContain("'unsafe-eval'");
  expect(
    scripts.some((s) => s === "*" || s === "http:" || s === "https:"),
    `${what}: script-src allows any host`,
  ).toBe(false);
  expect(headers.get("x-content-type-options"), what).toBe("nosniff");
  expect(headers.get("x-powered-by"), what).toBeNull();
}

describe("security headers on http", () => {
  let s: LoggedServer;
  beforeAll(async () => void (s = await startLoggedServer()));
  afterAll(() => s.close());

  it("API answers carry a CSP without unsafe-inline scripts and frame-ancestors 'none'", async () => {
    for (const path of ["/links", "/openapi.json", "/nope"]) expectHardened((await http(`${s.api}${path}`)).headers, `GET /api${path}`);
    expectHardened((await http(`${s.api}/links`, { method: "POST", json: { url: "javascript:x" } })).headers, "POST /api/links 400");
  });

  it("dashboard origin answers carry the same CSP", async () => {
    expectHardened((await http(`${s.appUrl}/`)).headers, "GET /");
  });

  it("no HSTS when APP_URL is http", async () => {
    expect((await http(`${s.api}/links`)).headers.get("strict-transport-security")).toBeNull();
    expect((await http(`${s.appUrl}/`)).headers.get("strict-transport-security")).toBeNull();
  });

  it("the redirect host's own pages cannot be framed and run no script", async () => {
    const res = await http(`${s.redirect}/no-such-slug`);
    expect(res.status).toBe(404);
    const d = directives(res.headers.get("content-security-policy") ?? "");
    expect(d.get("frame-ancestors")).toEqual(["'none'"]);
    expect(d.get("script-src") ?? d.get("default-src")).not.toContain("'unsafe-inline'");
  });
});

describe("security headers when APP_URL is https", () => {
  let s: LoggedServer;
  beforeAll(async () => void (s = await startLoggedServer({ https: true })));
  afterAll(() => s.close());

  it("HSTS is sent on API and dashboard answers", async () => {
    for (const url of [`${s.api}/links`, `${s.appUrl}/`]) {
      const hsts = (await http(url)).headers.get("strict-transport-security") ?? "";
      expect(hsts, url).toMatch(/max-age=(\d+)/);
      expect(Number(/max-age=(\d+)/.exec(hsts)![1]), url).toBeGreaterThanOrEqual(15_552_000);
    }
  });
});

// Dashboard pages rendered by Remix need the build (CI runs `npm run build` before the tests).
describe.skipIf(!existsSync("build/index.js"))("dashboard pages (Remix build)", () => {
  let s: LoggedServer;
  beforeAll(async () => void (s = await startLoggedServer({ remix: true })));
  afterAll(() => s.close());

  it("every inline script carries the response's CSP nonce", async () => {
    for (const path of ["/login", "/report", "/"]) {
      const res = await http(`${s.appUrl}${path}`);
      expect(res.status, path).toBeLessThan(500);
      expectHardened(res.headers, `GET ${path}`);
      const nonce = /'nonce-([^']+)'/.exec(res.headers.get("content-security-policy") ?? "")?.[1];
      for (const tag of res.text.match(/<script\b[^>]*>/g) ?? []) {
        if (/\bsrc=/.test(tag)) continue;
        expect(tag, `${path}: inline script without the nonce`).toContain(`nonce="${nonce}"`);
      }
    }
  });
});
