import { generateOpenApiDocument, type OpenApiRouter } from "trpc-openapi";
import { stringify } from "yaml";
import type { Config } from "../config";
import { base } from "../config";
import { appRouter } from "./router";
import type { Meta } from "./init";

type Procedure = { _def: { meta?: Meta; query?: boolean; mutation?: boolean } };

/** Every REST operation of the router with its meta (public and internal). */
export function restOperations(): { method: string; path: string; meta: Meta; procedurePath: string }[] {
  const procs = (appRouter._def as unknown as { procedures: Record<string, Procedure> }).procedures;
  return Object.entries(procs)
    .filter(([, p]) => p._def.meta?.openapi)
    .map(([procedurePath, p]) => ({ method: p._def.meta!.openapi!.method, path: p._def.meta!.openapi!.path, meta: p._def.meta!, procedurePath }));
}

/** The machine-readable description of the public API (service.md "Versioning", decisions §9). */
export function buildOpenApiDocument(config: Config) {
  const doc = generateOpenApiDocument(appRouter as unknown as OpenApiRouter, {
    title: "Link Shortener API",
    version: "1.0.0",
    baseUrl: base(config.apiUrl),
    description: "Short links, linktrees, click analytics and abuse reports.",
    securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", description: "An API token (`tok_…`) created in the dashboard." } },
  });
  const internal = restOperations().filter((o) => o.meta.internal);
  for (const op of internal) {
    const item = doc.paths[op.path] as Record<string, unknown> | undefined;
    if (!item) continue;
    delete item[op.method.toLowerCase()];
    if (!Object.keys(item).some((k) => ["get", "post", "put", "patch", "delete"].includes(k))) delete doc.paths[op.path];
  }
  doc.servers = [
    { url: base(config.apiUrl), description: "Production" },
    {
      url: "https://{stage}.api.example.com",
      description: "Development",
      variables: { stage: { default: "dev", description: "Deployment stage" } },
    },
  ];
  return doc;
}

let cached: { json: string; yaml: string } | undefined;
export function openApiDocuments(config: Config) {
  if (!cached) {
    const doc = buildOpenApiDocument(config);
    cached = { json: JSON.stringify(doc, null, 2), yaml: stringify(doc) };
  }
  return cached;
}
