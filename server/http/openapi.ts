import { generateOpenApiDocument, type OpenApiRouter } from "trpc-openapi";
import type { OpenAPIV3 } from "openapi-types";
import { stringify } from "yaml";
import type { Config } from "../config";
import { base, devApiUrl } from "../config";
import { appRouter } from "../routers";
import type { Meta } from "../trpc/init";
import { MAX_GEO_RULES, MAX_TAGS } from "../routers/links/links.schema";
import { IDEMPOTENCY_HEADER, idempotent } from "../trpc/idempotency";

type Procedure = { _def: { meta?: Meta; query?: boolean; mutation?: boolean; middlewares?: unknown[] } };
type Operation = { method: string; path: string; meta: Meta; procedurePath: string; idempotent: boolean };

/** The function the `idempotent` middleware adds to a procedure's chain. */
const idempotencyCheck = (idempotent as unknown as { _middlewares: unknown[] })._middlewares[0];

/** Every REST operation of the router with its meta (public and internal). */
export function restOperations(): Operation[] {
  const procs = (appRouter._def as unknown as { procedures: Record<string, Procedure> }).procedures;
  return Object.entries(procs)
    .filter(([, p]) => p._def.meta?.openapi)
    .map(([procedurePath, p]) => ({
      method: p._def.meta!.openapi!.method,
      path: p._def.meta!.openapi!.path,
      meta: p._def.meta!,
      procedurePath,
      idempotent: p._def.middlewares?.includes(idempotencyCheck) ?? false,
    }));
}

const STATUS_TEXT: Record<number, string> = {
  400: "Invalid input: `error` is VALIDATION_FAILED or a more specific code, `fields` names every failing input",
  401: "Missing, invalid or malformed credential (UNAUTHORIZED)",
  403: "Not allowed with this credential: INSUFFICIENT_SCOPE when the API token lacks the operation's scope",
  404: "Not found (NOT_FOUND), also for another workspace's records",
  405: "Method not allowed on this path (METHOD_NOT_ALLOWED)",
  409: "Conflict (e.g. LINK_ID_ALREADY_IN_USE, SLUG_ALREADY_IN_USE, LINKTREE_LINK_NOT_EDITABLE, DOMAIN_TAKEN, DOMAIN_IN_USE, DOMAIN_LIMIT), or IDEMPOTENCY_KEY_IN_USE while the first request with the key still runs",
  413: "Body over 64 KiB (PAYLOAD_TOO_LARGE)",
  422: "The Idempotency-Key was used with another body within 24 hours (IDEMPOTENCY_KEY_REUSED)",
  415: "Body not sent as JSON (`Content-Type: application/json`), or in another charset or encoding (UNSUPPORTED_MEDIA_TYPE)",
  429: "Too many requests in the window (RATE_LIMITED); see Retry-After",
  500: "Unexpected failure (INTERNAL_ERROR)",
  503: "Database unavailable (SERVICE_UNAVAILABLE); see Retry-After",
};

const URL_FIELDS = new Set(["url", "expiration_url", "og_image", "avatar_url", "ios", "android", "short_url", "not_found_url"]);
/** Members named like URLs that are not URIs: a report's `url` may be a bare slug. */
const NOT_URI: Record<string, string[]> = { "report.create": ["url"] };

/** Adds what zod cannot say: URI formats (refined strings lose them), write-only passwords, list limits. */
function annotate(schema: OpenAPIV3.SchemaObject | undefined, request: boolean, notUri: string[] = []): void {
  if (!schema || typeof schema !== "object") return;
  for (const [name, prop] of Object.entries(schema.properties ?? {}) as [string, OpenAPIV3.SchemaObject][]) {
    if (prop.type === "string" && URL_FIELDS.has(name) && !notUri.includes(name)) prop.format = "uri";
    if (request && name === "password") prop.writeOnly = true;
    // Tags are deduplicated before they are counted, so zod's limit sits after a transform it cannot show.
    if (request && name === "tags" && prop.type === "array") prop.maxItems = MAX_TAGS;
    if (name === "geo" && prop.additionalProperties && typeof prop.additionalProperties === "object") {
      (prop.additionalProperties as OpenAPIV3.SchemaObject).format = "uri";
      prop.maxProperties = MAX_GEO_RULES;
    }
    annotate(prop, request, notUri);
    if (prop.type === "array") annotate(prop.items as OpenAPIV3.SchemaObject, request, notUri);
  }
}

/** Statuses a service answers that the operation's shape does not show, by procedure. */
const SERVICE_STATUSES: Record<string, number[]> = {
  "analytics.workspace": [404], // link_id of no link of the workspace
  "report.create": [429], // per address and per slug, without a credential
  "domain.verify": [413, 415], // a POST: its body is read (and must be empty of members) although it has none
};

/** The top-level tag list: every tag an operation uses, in this order. */
const TAG_DESCRIPTIONS: Record<string, string> = {
  links: "Short links on the redirect domain: destination, slug, tags, expiry, targeting, password and share card.",
  analytics: "Click events of short links, per link or for the whole workspace.",
  linktrees: "Profile pages with an ordered list of items, each counted through its own short link.",
  account: "The user and workspace a credential belongs to.",
  reports: "Public abuse reports about short links, reviewed by a person.",
  domains: "Branded domains: a workspace's own host names, verified by a DNS TXT record, each with its own slug namespace.",
};

function errorStatuses(op: Operation, o: OpenAPIV3.OperationObject): number[] {
  const s = new Set<number>([...(op.meta.errors ?? []), ...(SERVICE_STATUSES[op.procedurePath] ?? [])]);
  // Every operation reads a body or a query string, and a repeated or bracketed query parameter is a 400.
  s.add(400);
  if (o.requestBody) {
    s.add(413);
    s.add(415);
  }
  if (op.meta.openapi?.protect) {
    s.add(401);
    s.add(429); // per-token hourly limit
  }
  if (op.path.includes("{")) s.add(404);
  if (op.meta.scope) s.add(403); // a token without the scope
  if (op.idempotent) {
    s.add(409);
    s.add(422);
  }
  s.add(500);
  s.add(503);
  return [...s].sort();
}

/** The machine-readable description of the public API (`/openapi.json` and `/openapi.yaml`, generated from the routers). */
export function buildOpenApiDocument(config: Config): OpenAPIV3.Document {
  const apiBase = base(config.apiUrl);
  const doc = generateOpenApiDocument(appRouter as unknown as OpenApiRouter, {
    title: "Link Shortener API",
    version: "1.0.0",
    baseUrl: apiBase,
    description:
      "Short links on their own redirect domain, per-link rules, click analytics, linktrees and abuse reports. " +
      'All bodies are JSON; timestamps are integers in milliseconds since the Unix epoch. Errors are `{"error": CODE}`, ' +
      "with `fields` on every 400.",
    securitySchemes: {
      bearerAuth: { type: "http", scheme: "bearer", description: "An API token (`tok_…`) created in the dashboard, shown once." },
    },
  }) as unknown as OpenAPIV3.Document;

  doc.info.license = { name: "Proprietary", url: `${base(config.appUrl)}/terms` };
  doc.info.contact = { name: "Support", url: `${base(config.appUrl)}/docs` };
  // Production, and a development server whose host holds the stage: API_DEV_URL, or API_URL with
  // `{stage}.` before its host.
  doc.servers = [
    { url: apiBase, description: "Production (API_URL)" },
    {
      url: config.apiDevUrl ?? devApiUrl(config.apiUrl),
      description: "Development: the deployment of one stage (API_DEV_URL)",
      variables: { stage: { default: "dev", description: "Name of the development stage, part of the host" } },
    },
  ];

  const components = (doc.components ??= {});
  components.responses = {};
  components.securitySchemes = {
    ...components.securitySchemes,
    sessionCookie: { type: "apiKey", in: "cookie", name: "app_session", description: "Dashboard session (browsers only)." },
  };
  components.schemas = {
    ...components.schemas,
    Error: {
      type: "object",
      required: ["error"],
      properties: {
        error: { type: "string", description: "A code such as VALIDATION_FAILED, UNAUTHORIZED, NOT_FOUND", example: "NOT_FOUND" },
        fields: {
          type: "object",
          description: "Present on every 400: each input name with what is wrong with it",
          additionalProperties: { type: "array", items: { type: "string" } },
        },
      },
    },
  };
  const errorResponse = (status: number): OpenAPIV3.ResponseObject => ({
    description: STATUS_TEXT[status] ?? "Error",
    ...(status === 429 || status === 503 ? { headers: { "Retry-After": { description: "Seconds until the limit resets", schema: { type: "integer" } } } } : {}),
    content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
  });

  for (const op of restOperations()) {
    const item = doc.paths[op.path] as Record<string, OpenAPIV3.OperationObject> | undefined;
    const method = op.method.toLowerCase();
    const o = item?.[method];
    if (!item || !o) continue;
    if (op.meta.internal) {
      delete item[method];
      if (!Object.keys(item).some((k) => ["get", "post", "put", "patch", "delete"].includes(k))) delete doc.paths[op.path];
      continue;
    }
    const success = op.meta.successStatus ?? 200;
    const ok = o.responses["200"] as OpenAPIV3.ResponseObject;
    const responses: OpenAPIV3.ResponsesObject = {};
    if (success === 204) responses["204"] = { description: "Done; no body" };
    else {
      annotate((ok.content?.["application/json"]?.schema as OpenAPIV3.SchemaObject) ?? undefined, false);
      responses[String(success)] = { ...ok, description: success === 201 ? "Created" : "OK" };
    }
    for (const status of errorStatuses(op, o)) responses[String(status)] = errorResponse(status);
    o.responses = responses;

    const body = (o.requestBody as OpenAPIV3.RequestBodyObject | undefined)?.content?.["application/json"]?.schema as OpenAPIV3.SchemaObject | undefined;
    annotate(body, true, NOT_URI[op.procedurePath]);
    if (body && method === "patch") body.minProperties = 1;
    if (method === "get" || method === "delete") delete o.requestBody;
    if (o.parameters && !o.parameters.length) delete o.parameters;

    if (op.meta.scope) {
      o.description = `${o.description ?? ""} API tokens need the \`${op.meta.scope}\` scope (403 INSUFFICIENT_SCOPE without it).`.trim();
      (o as Record<string, unknown>)["x-scopes"] = [op.meta.scope];
    }
    if (op.idempotent) {
      o.parameters = [
        ...(o.parameters ?? []),
        {
          name: IDEMPOTENCY_HEADER,
          in: "header",
          required: false,
          description:
            "1-255 printable ASCII characters. The same key with the same body within 24 hours answers the first answer again (status and body) " +
            "and creates nothing; with another body 422 IDEMPOTENCY_KEY_REUSED; while the first still runs 409 IDEMPOTENCY_KEY_IN_USE.",
          schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7E]+$" },
        },
      ];
    }

    if (op.meta.openapi?.protect) o.security = [{ bearerAuth: [] }, { sessionCookie: [] }];
    else if (op.procedurePath === "link.create") o.security = [{}, { bearerAuth: [] }, { sessionCookie: [] }];
    else o.security = [];
  }

  const used = new Set(Object.values(doc.paths).flatMap((item) => Object.values(item ?? {}).flatMap((o) => (o as OpenAPIV3.OperationObject).tags ?? [])));
  const order = Object.keys(TAG_DESCRIPTIONS);
  const rank = (tag: string) => (order.includes(tag) ? order.indexOf(tag) : order.length);
  doc.tags = [...used].sort((a, b) => rank(a) - rank(b)).map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? name }));
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
