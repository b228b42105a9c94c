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
import { buildOpenApiDocument, undescribedParameter } from "./openapi";
import { ERROR_STATUS } from "../domain/errors";

let t: TestServer;
let doc: any;
beforeAll(async () => {
  t = await createTestServer();
  doc = (await http(`${t.api}/openapi.json`)).json;
});
afterAll(() => t?.close());

/** Public paths and methods of the API that must be described (others are added as the API grows). */
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
/** Account administration, sign-in and team administration: served under API_URL, never described. */
const NOT_PUBLIC = /^(GET|POST|PATCH|DELETE) \/(auth|account\/|workspaces|invites|_)/;
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

  it("a wrong method on /openapi.json or /openapi.yaml answers 405 METHOD_NOT_ALLOWED (they are known paths)", async () => {
    for (const file of ["openapi.json", "openapi.yaml"])
      for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
        const r = await http(`${t.api}/${file}`, { method });
        expect([method, file, r.status, r.json]).toEqual([method, file, 405, { error: "METHOD_NOT_ALLOWED" }]);
        expect(r.headers.get("allow")).toBe("GET");
      }
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
    expect(doc.paths["/analytics"].get.responses["404"].content["application/json"].schema.$ref).toBe("#/components/schemas/ErrorResponse");
    const limited = doc.paths["/reports"].post.responses["429"];
    expect(limited.content["application/json"].schema.$ref).toBe("#/components/schemas/ErrorResponse");
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

  it("describes the public API: every public path, and no sign-in, account or team administration path", () => {
    const keys = operations().map((o) => o.key);
    expect(PUBLIC_OPERATIONS.filter((k) => !keys.includes(k))).toEqual([]);
    expect(keys.filter((k) => NOT_PUBLIC.test(k))).toEqual([]);
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
        else if (res.content || status !== "202") {
          const [media] = Object.values(res.content) as any[];
          expect(media.schema, `${key} ${status}`).toBeDefined();
        }
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
    const link = doc.components.schemas.Link;
    expect(link.properties.expires_at.nullable).toBe(true);
    expect(link.properties.password).toBeUndefined();
  });

  it("a click's rule may be any rule the redirect decides by, language and variant included", () => {
    const all = ["ios", "android", "geo", "language", "variant", "url", "expiration_url", "expired_404"];
    for (const name of ["ClickEvent", "WorkspaceClickEvent"])
      expect([...doc.components.schemas[name].properties.rule.enum].sort(), name).toEqual([...all].sort());
  });

  it("gives every error answer the {error, fields} schema, named ErrorResponse (a type named Error would shadow JavaScript's)", () => {
    expect(doc.components.schemas.Error).toBeUndefined();
    expect(doc.components.schemas.ErrorResponse.required).toEqual(["error"]);
    for (const { key, op } of operations())
      for (const [status, res] of Object.entries(op.responses) as [string, any][])
        if (Number(status) >= 400) expect(res.content["application/json"].schema.$ref, `${key} ${status}`).toBe("#/components/schemas/ErrorResponse");
  });

  it("lists every error code as an enum, and each error answer names the codes of its status", () => {
    expect([...doc.components.schemas.ErrorResponse.properties.error.enum].sort()).toEqual(Object.keys(ERROR_STATUS).sort());
    const conflict = doc.paths["/domains"].post.responses["409"];
    expect(conflict.description).toContain("DOMAIN_TAKEN");
    expect(conflict.content["application/json"].example.error).toBe("DOMAIN_TAKEN"); // the code the operation's text names
    expect(doc.paths["/links/{id}"].get.responses["404"].content["application/json"].example).toEqual({ error: "NOT_FOUND" });
  });

  it("names the answers' schemas in components (Link, Linktree, Domain, ClickEvent, …) and answers them by reference, never by a copy", () => {
    const schemas = doc.components.schemas;
    const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
    const answer = (path: string, method: string, status = "200") => doc.paths[path][method].responses[status].content["application/json"].schema;
    expect(answer("/links", "post", "201")).toEqual(ref("Link"));
    expect(answer("/links/{id}", "get")).toEqual(ref("Link"));
    expect(answer("/links/{id}", "patch")).toEqual(ref("Link"));
    expect(schemas.LinkList.properties.links.items).toEqual(ref("Link"));
    expect(schemas.BulkResult.properties.created.items).toEqual(ref("Link"));
    expect(schemas.LinkAnalytics.properties.clicks.items).toEqual(ref("ClickEvent"));
    expect(answer("/linktrees", "post", "201")).toEqual(ref("Linktree"));
    expect(schemas.LinktreeDetail.properties.items.items).toEqual(ref("LinktreeItem"));
    expect(answer("/domains", "post", "201")).toEqual(ref("Domain"));
    expect(schemas.DomainList.properties.domains.items).toEqual(ref("Domain"));
    expect(answer("/account", "get")).toEqual(ref("Account"));
    // Operations added later are named too, once they are served.
    if (doc.paths["/webhooks"]) expect(schemas.WebhookList.properties.webhooks.items).toEqual(ref("Webhook"));
    if (doc.paths["/analytics/breakdown"]) {
      expect(answer("/analytics/breakdown", "get")).toEqual(ref("Breakdown"));
      expect(answer("/links/{id}/analytics/breakdown", "get")).toEqual(ref("Breakdown"));
    }
    // No answer holds an inline copy of a named schema.
    const named = Object.entries(schemas).map(([name, s]: [string, any]) => [name, JSON.stringify({ ...s, description: undefined })] as const);
    const copies: string[] = [];
    const walk = (s: any, where: string, root: string) => {
      if (!s || typeof s !== "object") return;
      if (!s.$ref && s.type === "object") {
        const text = JSON.stringify({ ...s, description: undefined });
        for (const [name, body] of named) if (name !== root && body === text) copies.push(`${where} copies ${name}`);
      }
      for (const [k, v] of Object.entries(s)) if (k !== "example") walk(v, `${where}/${k}`, "");
    };
    for (const { key, op } of operations())
      for (const [status, res] of Object.entries(op.responses) as [string, any][]) walk(res.content, `${key} ${status}`, "");
    for (const [name, s] of Object.entries(schemas)) walk(s, name, name);
    expect(copies).toEqual([]);
  });

  it("describes every parameter", () => {
    const bare = operations().flatMap(({ key, op }) =>
      (op.parameters ?? [])
        .filter((p: any) => typeof p.description !== "string" || !p.description.trim() || p.description === undescribedParameter(p.name))
        .map((p: any) => `${key} ${p.in} ${p.name}`),
    );
    expect(bare).toEqual([]);
  });

  it("gives every request body and answer an example (JSON ones valid for their schema)", async () => {
    const missing: string[] = [];
    for (const { key, op } of operations()) {
      const bodies = [["body", op.requestBody], ...Object.entries(op.responses)] as [string, any][];
      for (const [status, part] of bodies) {
        for (const [type, media] of Object.entries(part?.content ?? {}) as [string, any][])
          if (media.example === undefined) missing.push(`${key} ${status} ${type}`);
      }
    }
    expect(missing).toEqual([]);
    const config = await createConfig({
      extends: ["recommended"],
      rules: { "no-invalid-media-type-examples": "error", "no-invalid-schema-examples": "error" },
    });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: "/openapi.json", config });
    expect(problems.filter((p) => p.ruleId.startsWith("no-invalid")).map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).toEqual([]);
  });

  it("declares 400 and 413 on every POST and PATCH (a body is read and checked first, also where none is expected)", () => {
    for (const { key, op } of operations())
      if (key.startsWith("POST ") || key.startsWith("PATCH ")) expect(Object.keys(op.responses), key).toEqual(expect.arrayContaining(["400", "413"]));
  });

  it("passes a standard OpenAPI linter's recommended rules with no errors", async () => {
    const config = await createConfig({ extends: ["recommended"] });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: "/openapi.json", config });
    expect(problems.filter((p) => p.severity === "error").map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
  });

  it("lists its tags alphabetically, with a contact that has a name, a URL and an e-mail address", () => {
    const names = doc.tags.map((tag: any) => tag.name);
    expect(names).toEqual([...names].sort());
    expect(doc.info.contact).toEqual({ name: expect.any(String), url: expect.any(String), email: expect.stringMatching(/^support@[^@\s]+\.[a-z]{2,}$/) });
  });

  it("generates a typed client (openapi-typescript + openapi-fetch) that compiles and works without hand edits: create, list pages, breakdown, webhook, delete", async () => {
    const { default: openapiTS, astToString } = await import("openapi-typescript");
    const dir = mkdtempSync(path.join(os.tmpdir(), "client-"));
    writeFileSync(path.join(dir, "api.d.ts"), astToString(await openapiTS(doc)));
    symlinkSync(path.resolve("node_modules"), path.join(dir, "node_modules"));
    writeFileSync(
      path.join(dir, "client.ts"),
      `import createClient from "openapi-fetch";
import type { components, paths } from "./api";
type Link = components["schemas"]["Link"];
const browser = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";

export async function run(baseUrl: string, token: string) {
  const client = createClient<paths>({ baseUrl, headers: { authorization: "Bearer " + token } });
  const created: Link[] = [];
  for (const n of [1, 2, 3]) {
    const { data, error } = await client.POST("/links", { body: { url: "https://example.com/typed/" + n, tags: ["typed"] } });
    if (!data) throw new Error("create failed: " + error?.error);
    created.push(data);
  }
  // Pages of two, each asked with the cursor of the one before.
  const pages: string[][] = [];
  let cursor: string | undefined;
  do {
    const { data } = await client.GET("/links", { params: { query: { limit: "2", tag: "typed", ...(cursor ? { cursor } : {}) } } });
    if (!data) throw new Error("list failed");
    pages.push(data.links.map((l: Link) => l.slug));
    cursor = data.next_cursor ?? undefined;
  } while (cursor);

  // One counted visit (a browser's User-Agent), then its breakdown by link once the click is written.
  await fetch(created[0].short_url, { redirect: "manual", headers: { "user-agent": browser } });
  let clicks = 0;
  for (let tries = 0; tries < 50 && clicks === 0; tries++) {
    const { data } = await client.GET("/analytics/breakdown", { params: { query: { by: "link" } } });
    if (!data) throw new Error("breakdown failed");
    clicks = data.rows.find((row) => row.key === created[0].id)?.clicks ?? 0;
    if (!clicks) await new Promise((r) => setTimeout(r, 100));
  }

  const hook = await client.POST("/webhooks", { body: { url: "https://hooks.example.com/typed", events: ["link.created", "link.deleted"] } });
  if (!hook.data) throw new Error("webhook failed: " + hook.error?.error);
  const hooks = await client.GET("/webhooks");
  const removedHook = await client.DELETE("/webhooks/{id}", { params: { path: { id: hook.data.id } } });

  const deleted: number[] = [];
  for (const link of created) deleted.push((await client.DELETE("/links/{id}", { params: { path: { id: link.id } } })).response.status);
  const after = await client.GET("/links", { params: { query: { tag: "typed" } } });
  const missing = await client.GET("/links/{id}", { params: { path: { id: "zzzzzzzz" } } });
  return {
    slugs: created.map((l) => l.slug),
    pages,
    clicks,
    secret: hook.data.secret,
    listed: hooks.data?.webhooks.map((w) => w.id) ?? [],
    hookId: hook.data.id,
    removedHook: removedHook.response.status,
    deleted,
    left: after.data?.links.length,
    missing: missing.error?.error,
  };
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
    try {
      execFileSync(path.resolve("node_modules/.bin/tsc"), ["-p", dir], { stdio: "pipe" });
    } catch (e) {
      throw new Error(String((e as { stdout?: Buffer }).stdout ?? e));
    }
    const user = await t.user();
    const { run } = await import(path.join(dir, "client.ts"));
    const result = await run(t.api, user.token);
    expect(result.slugs).toHaveLength(3);
    for (const slug of result.slugs) expect(slug).toMatch(/^[0-9a-z]{4}$/);
    expect(result.pages.map((p: string[]) => p.length)).toEqual([2, 1]);
    expect(result.pages.flat().sort()).toEqual([...result.slugs].sort());
    expect(result.clicks).toBe(1);
    expect(result.secret).toMatch(/^whsec_/);
    expect(result.listed).toEqual([result.hookId]);
    expect(result.removedHook).toBe(204);
    expect(result.deleted).toEqual([204, 204, 204]);
    expect(result.left).toBe(0);
    expect(result.missing).toBe("NOT_FOUND");
  }, 90_000);
});
