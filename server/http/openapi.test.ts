import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { createConfig, lintFromString } from "@redocly/openapi-core";
import { createTestServer, http, type TestServer } from "../test/harness";
import { parseConfig } from "../config";
import { tempDataDir } from "../../db/test-db";
import { buildOpenApiDocument } from "./openapi";

let t: TestServer;
let doc: any;
beforeAll(async () => {
  t = await createTestServer();
  doc = (await http(`${t.api}/openapi.json`)).json;
});
afterAll(() => t?.close());

/** Every public path and method of the API (team, account and admin paths are not public). */
const PUBLIC_OPERATIONS = [
  "GET /account",
  "POST /reports",
  "GET /links",
  "POST /links",
  "POST /links/bulk",
  "GET /links/{id}",
  "PATCH /links/{id}",
  "DELETE /links/{id}",
  "GET /links/{id}/analytics",
  "GET /analytics",
  "GET /linktrees",
  "POST /linktrees",
  "GET /linktrees/{id}",
  "PATCH /linktrees/{id}",
  "DELETE /linktrees/{id}",
  "POST /linktrees/{id}/items",
  "PATCH /linktrees/{id}/items/{itemId}",
  "DELETE /linktrees/{id}/items/{itemId}",
  "GET /linktrees/{id}/analytics",
  "GET /domains",
  "POST /domains",
  "POST /domains/{id}/verify",
  "PATCH /domains/{id}",
  "DELETE /domains/{id}",
];
const operations = () =>
  Object.entries(doc.paths).flatMap(([p, item]: [string, any]) =>
    Object.keys(item)
      .filter((m) => ["get", "post", "patch", "put", "delete"].includes(m))
      .map((m) => ({ key: `${m.toUpperCase()} ${p}`, op: item[m] })),
  );

describe("the API description", () => {
  it("is served at /openapi.json and /openapi.yaml with the same content", async () => {
    const yaml = await http(`${t.api}/openapi.yaml`);
    expect(yaml.status).toBe(200);
    expect(yaml.headers.get("content-type")).toContain("yaml");
    expect(parseYaml(yaml.text)).toEqual(doc);
  });

  it("declares version 1.0.0, a production server at API_URL and a development server whose host holds a stage variable", () => {
    expect(doc.info.version).toBe("1.0.0");
    const api = new URL(t.api);
    // The test server's API_URL is on 127.0.0.1: an address has no subdomains, `dev.localhost` is loopback too.
    expect(doc.servers).toEqual([
      { url: t.api, description: expect.any(String) },
      {
        url: `http://{stage}.localhost:${api.port}/api`,
        description: expect.any(String),
        variables: { stage: { default: "dev", description: expect.any(String) } },
      },
    ]);
    for (const [apiUrl, dev] of [
      ["https://api.example.com", "https://{stage}.api.example.com"],
      ["https://example.com:8443/api/", "https://{stage}.example.com:8443/api"],
      ["http://[::1]:3000/api", "http://{stage}.localhost:3000/api"],
    ]) {
      const config = parseConfig({ API_URL: apiUrl, DATA_DIR: tempDataDir() });
      expect(buildOpenApiDocument(config).servers?.[1]?.url, apiUrl).toBe(dev);
      expect(new URL(dev.replace("{stage}", "dev")).hostname.startsWith("dev."), dev).toBe(true);
    }
  });

  it("takes the development server from API_DEV_URL when set, and refuses one without {stage} in its host", () => {
    const dev = "https://{stage}.api.example.com/v1";
    const config = parseConfig({ APP_URL: "https://app.example.com", DATA_DIR: tempDataDir(), API_DEV_URL: `${dev}/` });
    expect(buildOpenApiDocument(config).servers).toEqual([
      { url: "https://app.example.com/api", description: expect.any(String) },
      { url: dev, description: expect.any(String), variables: { stage: { default: "dev", description: expect.any(String) } } },
    ]);
    for (const bad of ["https://api.example.com/{stage}", "ftp://{stage}.example.com", "https://{stage}.exa mple.com"])
      expect(() => parseConfig({ DATA_DIR: tempDataDir(), API_DEV_URL: bad }), bad).toThrow(/API_DEV_URL/);
  });

  it("lists every tag its operations use at the top level, each with a description, and no other", () => {
    const used = new Set(operations().flatMap(({ op }) => op.tags));
    expect(doc.tags.map((tag: any) => tag.name).sort()).toEqual([...used].sort());
    for (const tag of doc.tags) {
      expect(tag.description, tag.name).toEqual(expect.any(String));
      expect(tag.description, tag.name).not.toBe(tag.name); // not the fallback
    }
  });

  it("declares GET /analytics 404 (unknown link_id) and POST /reports 429 with Retry-After", () => {
    expect(doc.paths["/analytics"].get.responses["404"].content["application/json"].schema.$ref).toBe("#/components/schemas/Error");
    const limited = doc.paths["/reports"].post.responses["429"];
    expect(limited.content["application/json"].schema.$ref).toBe("#/components/schemas/Error");
    expect(limited.headers["Retry-After"]).toBeDefined();
  });

  it("does not call the report url a URI (a bare slug is accepted) but keeps the links' URLs URIs", () => {
    const report = doc.paths["/reports"].post.requestBody.content["application/json"].schema.properties.url;
    expect(report.type).toBe("string");
    expect(report.format).toBeUndefined();
    expect(report.maxLength).toBe(2000);
    const link = doc.paths["/links"].post.requestBody.content["application/json"].schema.properties;
    expect([link.url.format, link.expiration_url.format, link.og_image.format]).toEqual(["uri", "uri", "uri"]);
  });

  it("allows at most 10 tags (maxItems) on create and update", () => {
    for (const [path, method] of [
      ["/links", "post"],
      ["/links/{id}", "patch"],
    ]) {
      const tags = doc.paths[path][method].requestBody.content["application/json"].schema.properties.tags;
      expect(tags, `${method} ${path}`).toMatchObject({ type: "array", maxItems: 10, items: { pattern: "^[0-9a-z-]{1,24}$" } });
    }
  });

  it("gives the length limits of the schemas (JSON Schema counts code points, as the API does)", () => {
    const link = doc.paths["/links"].post.requestBody.content["application/json"].schema.properties;
    expect(link.og_title.maxLength).toBe(120);
    expect(link.og_description.maxLength).toBe(240);
    expect([link.password.minLength, link.password.maxLength]).toEqual([4, 200]);
    const tree = doc.paths["/linktrees"].post.requestBody.content["application/json"].schema.properties;
    expect([tree.title.maxLength, tree.bio.maxLength]).toEqual([100, 300]);
    const report = doc.paths["/reports"].post.requestBody.content["application/json"].schema.properties;
    expect([report.detail.maxLength, report.email.maxLength]).toEqual([1000, 200]);
  });

  it("describes exactly the public API: every public path and nothing outside it", () => {
    expect(
      operations()
        .map((o) => o.key)
        .sort(),
    ).toEqual([...PUBLIC_OPERATIONS].sort());
  });

  it("gives every operation an operationId, summary, description, tag, security and its statuses with schemas", () => {
    const ids = new Set<string>();
    for (const { key, op } of operations()) {
      expect(op.operationId, key).toEqual(expect.any(String));
      expect(ids.has(op.operationId), key).toBe(false);
      ids.add(op.operationId);
      expect(op.summary, key).toEqual(expect.any(String));
      expect(op.description, key).toEqual(expect.any(String));
      expect(op.tags?.length, key).toBeGreaterThan(0);
      expect(op.security, key).toBeDefined();
      for (const [status, res] of Object.entries(op.responses) as [string, any][]) {
        if (status === "204") expect(res.content, key).toBeUndefined();
        else expect(res.content["application/json"].schema, `${key} ${status}`).toBeDefined();
      }
    }
  });

  it("documents 201 on create and 204 on delete", () => {
    expect(Object.keys(doc.paths["/links"].post.responses)).toContain("201");
    expect(doc.paths["/links/{id}"].delete.responses["204"]).toBeDefined();
    expect(doc.paths["/links/{id}"].delete.responses["200"]).toBeUndefined();
  });

  it("uses the bearer scheme, optional on POST /links and absent on POST /reports", () => {
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
    expect(doc.paths["/links"].get.security).toContainEqual({ bearerAuth: [] });
    expect(doc.paths["/links"].post.security).toContainEqual({});
    expect(doc.paths["/reports"]?.post.security).toEqual([]);
  });

  it("marks PATCH bodies minProperties 1, the password write-only and nullable fields nullable", () => {
    const body = doc.paths["/links/{id}"].patch.requestBody.content["application/json"].schema;
    expect(body.minProperties).toBe(1);
    expect(body.properties.password.writeOnly).toBe(true);
    expect(body.properties.expires_at.nullable).toBe(true);
    const link = doc.paths["/links"].post.responses["201"].content["application/json"].schema;
    expect(link.properties.expires_at.nullable).toBe(true);
    expect(link.properties.password).toBeUndefined();
  });

  it("gives errors the {error, fields} schema", () => {
    const r = doc.paths["/links"].post.responses["400"].content["application/json"].schema;
    expect(r.$ref).toBe("#/components/schemas/Error");
    expect(doc.components.schemas.Error.required).toEqual(["error"]);
  });

  it("passes a standard OpenAPI linter's recommended rules with no errors", async () => {
    const config = await createConfig({ extends: ["recommended"] });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: "/openapi.json", config });
    expect(problems.filter((p) => p.severity === "error").map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
  });

  it("generates a typed client that compiles and works without hand edits", async () => {
    const { default: openapiTS, astToString } = await import("openapi-typescript");
    const dir = mkdtempSync(path.join(os.tmpdir(), "client-"));
    writeFileSync(path.join(dir, "api.d.ts"), astToString(await openapiTS(doc)));
    symlinkSync(path.resolve("node_modules"), path.join(dir, "node_modules"));
    writeFileSync(
      path.join(dir, "client.ts"),
      `import createClient from "openapi-fetch";
import type { paths } from "./api";
export async function run(baseUrl: string, token: string) {
  const client = createClient<paths>({ baseUrl, headers: { authorization: "Bearer " + token } });
  const created = await client.POST("/links", { body: { url: "https://example.com/typed", tags: ["typed"] } });
  if (!created.data) throw new Error("create failed");
  const slug: string = created.data.slug;
  const list = await client.GET("/links");
  return { slug, count: list.data?.links.length ?? 0 };
}
`,
    );
    writeFileSync(
      path.join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          module: "ESNext",
          moduleResolution: "Bundler",
          target: "ES2022",
          lib: ["ES2022", "DOM"],
          skipLibCheck: true,
        },
        files: ["client.ts"],
      }),
    );
    execFileSync(path.resolve("node_modules/.bin/tsc"), ["-p", dir], { stdio: "pipe" });
    const user = await t.user();
    const { run } = await import(path.join(dir, "client.ts"));
    const result = await run(t.api, user.token);
    expect(result.slug).toMatch(/^[0-9a-z]{4}$/);
    expect(result.count).toBe(1);
  }, 60_000);
});
