import { isDeepStrictEqual } from "node:util";
import { generateOpenApiDocument, type OpenApiRouter } from "trpc-openapi";
import type { OpenAPIV3 } from "openapi-types";
import { stringify } from "yaml";
import type { Config } from "../config";
import { base, devApiUrl } from "../config";
import { appRouter } from "../routers";
import { BINARY_ANSWERS } from "../routers/qr";
import type { Meta } from "../trpc/init";
import { MAX_GEO_RULES, MAX_LANGUAGE_RULES, MAX_TAGS } from "../routers/links/links.schema";
import { IDEMPOTENCY_HEADER } from "../trpc/idempotency";
import { ERROR_STATUS, type ErrorCode } from "../domain/errors";
import { Examples, type Schema } from "./openapi-examples";

type Procedure = { _def: { meta?: Meta; query?: boolean; mutation?: boolean; middlewares?: unknown[] } };
type Operation = { method: string; path: string; meta: Meta; procedurePath: string; idempotent: boolean };

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
      idempotent: p._def.meta!.idempotent === true,
    }));
}

const STATUS_TEXT: Record<number, string> = {
  400: "Invalid input: `error` is VALIDATION_FAILED or a more specific code, `fields` names every failing input (`body` for a body that is not UTF-8 JSON sent as `application/json`)",
  401: "Missing, invalid or malformed credential",
  403: "Not allowed with this credential: INSUFFICIENT_SCOPE when an API token lacks the operation's scope, FORBIDDEN for a workspace viewer's write",
  404: "Not found, also for another workspace's records",
  405: "Method not allowed on this path",
  409: "Conflict with what is stored, or IDEMPOTENCY_KEY_IN_USE while the first request with the key still runs",
  413: "Body over 64 KiB",
  422: "The Idempotency-Key was used with another body within 24 hours",
  429: "Too many requests in the window; see Retry-After",
  500: "Unexpected failure",
  503: "Database unavailable, or no free slug left; see Retry-After",
  507: "No room left to store the upload",
};

/** The codes a status can carry, from the one table of codes. */
const codesOf = (status: number) => (Object.keys(ERROR_STATUS) as ErrorCode[]).filter((code) => ERROR_STATUS[code] === status);

const URL_FIELDS = new Set(["url", "expiration_url", "og_image", "avatar_url", "ios", "android", "short_url", "not_found_url"]);
/**
 * Members named like URLs that are not URIs: a report's `url` may be a bare slug; an import's mapping
 * names the file's columns, and a rejected row's `url` is the file's text as it was.
 */
const IMPORT_TEXTS = ["url", "expiration_url", "og_image"];
const NOT_URI: Record<string, string[]> = {
  "report.create": ["url"],
  "imports.create": IMPORT_TEXTS,
  "imports.get": IMPORT_TEXTS,
  "imports.list": IMPORT_TEXTS,
};

/** Adds what zod cannot say: URI formats (refined strings lose them), write-only passwords, list limits. */
function annotate(schema: OpenAPIV3.SchemaObject | undefined, request: boolean, notUri: string[] = []): void {
  if (!schema || typeof schema !== "object") return;
  for (const [name, prop] of Object.entries(schema.properties ?? {}) as [string, OpenAPIV3.SchemaObject][]) {
    if (prop.type === "string" && URL_FIELDS.has(name) && !notUri.includes(name)) prop.format = "uri";
    if (request && name === "password") prop.writeOnly = true;
    // Tags are deduplicated before they are counted, so zod's limit sits after a transform it cannot show.
    if (request && name === "tags" && prop.type === "array") prop.maxItems = MAX_TAGS;
    if ((name === "geo" || name === "languages") && prop.additionalProperties && typeof prop.additionalProperties === "object") {
      (prop.additionalProperties as OpenAPIV3.SchemaObject).format = "uri";
      prop.maxProperties = name === "geo" ? MAX_GEO_RULES : MAX_LANGUAGE_RULES;
    }
    annotate(prop, request, notUri);
    if (prop.type === "array") annotate(prop.items as OpenAPIV3.SchemaObject, request, notUri);
  }
}

/** Statuses a service answers that the operation's shape does not show, by procedure. */
const SERVICE_STATUSES: Record<string, number[]> = {
  "analytics.workspace": [404], // link_id of no link of the workspace
  "report.create": [429], // per address and per slug, without a credential
};

/** The top-level tags: a description for each tag an operation may use. */
const TAG_DESCRIPTIONS: Record<string, string> = {
  links: "Short links on the redirect domain: destination, slug, tags, expiry, targeting, password and share card.",
  analytics: "Click events of short links, per link or for the whole workspace, and their counts grouped by a dimension.",
  linktrees: "Profile pages with an ordered list of items, each counted through its own short link.",
  account: "The user and workspace a credential belongs to.",
  reports: "Public abuse reports about short links, reviewed by a person.",
  domains: "Branded domains: a workspace's own host names, verified by a DNS TXT record, each with its own slug namespace.",
  webhooks: "HTTPS endpoints a workspace subscribes to its events, signed like Standard Webhooks and delivered at least once.",
  health: "Whether each link's destinations still answer, checked daily.",
  qr: "QR codes of short links, as SVG or PNG.",
  audit: "Who created, changed or deleted what in the workspace.",
  imports: "CSV files of links (generic, or the exports of Bitly, Shlink, Kutt and YOURLS) imported as jobs that survive restarts.",
};

/**
 * Answers named in components.schemas, so generated clients get one type each (`Link`, not a copy per
 * operation): the name, the operation (`METHOD /path`) whose success answer holds it, and where in that
 * answer (`""` the whole answer, `links[]` the items of `links`). Every other answer schema equal to a
 * named one becomes a reference to it wherever it appears, so a new operation answering a Link needs no
 * entry. Inner schemas come before the ones holding them. An operation not served is skipped.
 * Why: docs/decisions/016-the-api-document.md.
 */
const NAMED_SCHEMAS: [name: string, operation: string, where: string][] = [
  ["ClickEvent", "GET /links/{id}/analytics", "clicks[]"],
  ["WorkspaceClickEvent", "GET /analytics", "clicks[]"],
  ["LinkAnalytics", "GET /links/{id}/analytics", ""],
  ["WorkspaceAnalytics", "GET /analytics", ""],
  ["Link", "GET /links/{id}", ""],
  ["LinkList", "GET /links", ""],
  ["BulkResult", "POST /links/bulk", ""],
  ["LinkHealth", "GET /links/{id}/health", ""],
  ["LinktreeItem", "POST /linktrees/{id}/items", ""],
  ["Linktree", "POST /linktrees", ""],
  ["LinktreeDetail", "GET /linktrees/{id}", ""],
  ["LinktreeList", "GET /linktrees", ""],
  ["LinktreeAnalytics", "GET /linktrees/{id}/analytics", ""],
  ["Domain", "POST /domains", ""],
  ["DomainList", "GET /domains", ""],
  ["Webhook", "GET /webhooks", "webhooks[]"],
  ["WebhookList", "GET /webhooks", ""],
  ["WebhookWithSecret", "POST /webhooks", ""],
  ["WebhookDelivery", "GET /webhooks/{id}/deliveries", "deliveries[]"],
  ["WebhookDeliveryList", "GET /webhooks/{id}/deliveries", ""],
  ["BreakdownRow", "GET /analytics/breakdown", "rows[]"],
  ["Breakdown", "GET /analytics/breakdown", ""],
  ["AuditEvent", "GET /audit", "events[]"],
  ["AuditLog", "GET /audit", ""],
  ["Account", "GET /account", ""],
  ["ReportReceipt", "POST /reports", ""],
];

/** Optional members a request body's example shows (dotted paths in the body), beyond the required ones. */
const EXAMPLE_MEMBERS: Record<string, string[]> = {
  "POST /links": ["slug", "tags", "og_title"],
  "POST /links/bulk": ["links.tags"],
  "PATCH /links/{id}": ["expires_at", "expiration_url"],
  "POST /linktrees": ["bio"],
  "PATCH /linktrees/{id}": ["published"],
  "PATCH /domains/{id}": ["not_found_url"],
  "POST /reports": ["detail"],
};

/** Descriptions of parameters whose procedure gives none (a procedure's own `.describe()` wins). */
const PARAMETER_TEXT: Record<string, string> = {
  from: "Start of the range, inclusive, in milliseconds since the Unix epoch. Absent: from the first click.",
  to: "End of the range, inclusive, in milliseconds since the Unix epoch. Absent: up to now.",
  link_id: "Only the clicks of this link (its id).",
  by: "The dimension the rows are grouped by.",
  tz: "IANA time zone of the day and hour buckets (default UTC).",
  limit: "At most this many items in the answer.",
  cursor: "The `next_cursor` of the previous page, with the same other parameters.",
  format: "The image format.",
  size: "Width and height of a PNG image, in pixels.",
  fg: "Foreground colour, `#rrggbb`.",
  bg: "Background colour, `#rrggbb`.",
  margin: "Quiet zone around the code, in modules.",
  ecl: "Error correction level.",
  health: "Only links whose destinations are in this state.",
};
/** Breakdown filters: one value of a dimension, named like it. */
const DIMENSIONS = ["country", "region", "city", "device", "os", "browser", "referrer_domain", "rule", "variant", "trigger"];
const dimensionFilter = (name: string) => `Only clicks whose \`${name}\` is this value, as the rows give it; \`(none)\` selects clicks without one.`;

/** The last resort for a parameter nobody described (openapi.test.ts fails on it, so it does not stay). */
export const undescribedParameter = (name: string) => `The \`${name}\` parameter; the operation's description says what it does.`;

/** A path parameter: the id of the resource named just before it (`/links/{id}`: the link). */
function pathParameterText(path: string, name: string): string {
  const segments = path.split("/");
  const at = segments.indexOf(`{${name}}`);
  const resource = (segments[at - 1] ?? "record").replace(/s$/, "");
  return name === "id" || name.endsWith("Id") ? `Id of the ${resource.replace(/^items$/, "item")}.` : `The ${name} of the ${resource}.`;
}

const SVG_EXAMPLE =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 29 29"><rect width="29" height="29" fill="#ffffff"/><path fill="#000000" d="M2 2h7v7H2zM20 2h7v7h-7zM2 20h7v7H2z"/></svg>';

const RATE_LIMIT_HEADERS: Record<string, OpenAPIV3.HeaderObject> = {
  "RateLimit-Limit": { description: "Requests allowed in the window (answers to an API token)", schema: { type: "integer" } },
  "RateLimit-Remaining": { description: "Requests left in the window (answers to an API token)", schema: { type: "integer" } },
  "RateLimit-Reset": { description: "Seconds until the window resets (answers to an API token)", schema: { type: "integer" } },
};

function errorStatuses(op: Operation, o: OpenAPIV3.OperationObject): number[] {
  const s = new Set<number>([...(op.meta.errors ?? []), ...(SERVICE_STATUSES[op.procedurePath] ?? [])]);
  // Every operation reads a body or a query string, and a repeated or bracketed query parameter is a 400.
  s.add(400);
  // A body is read on every POST and PATCH, also where none is expected: its size is checked first.
  if (o.requestBody || ["POST", "PATCH", "PUT"].includes(op.method)) s.add(413);
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

type Json = Record<string, unknown>;
const isJson = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** Calls `visit` on every schema below `schema` (not itself), deepest first; `visit` answers a replacement. */
function mapSubschemas(schema: Json, visit: (s: Json) => Json): void {
  const each = (get: () => unknown, set: (v: Json) => void) => {
    const child = get();
    if (!isJson(child)) return;
    mapSubschemas(child, visit);
    set(visit(child));
  };
  if (isJson(schema.properties)) {
    const props = schema.properties;
    for (const k of Object.keys(props))
      each(
        () => props[k],
        (v) => (props[k] = v),
      );
  }
  each(
    () => schema.items,
    (v) => (schema.items = v),
  );
  each(
    () => schema.additionalProperties,
    (v) => (schema.additionalProperties = v),
  );
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    const list = schema[key];
    if (Array.isArray(list))
      list.forEach((_, i) =>
        each(
          () => list[i],
          (v) => (list[i] = v),
        ),
      );
  }
}

const withoutDescription = (s: Json) => {
  const { description: _d, example: _e, ...rest } = s;
  return rest;
};

/** The schema at `where` ("" or "links[]") inside an answer schema; its setter replaces it. */
function locate(schema: Json, where: string): { get: () => Json | undefined; set: (v: Json) => void } | undefined {
  if (!where) return undefined;
  const steps = where.split(".");
  let node: Json = schema;
  for (let i = 0; i < steps.length; i++) {
    const array = steps[i].endsWith("[]");
    const name = array ? steps[i].slice(0, -2) : steps[i];
    const props = node.properties;
    if (!isJson(props) || !isJson(props[name])) return undefined;
    const holder = array ? props[name] : props;
    const key = array ? "items" : name;
    if (i === steps.length - 1) {
      return { get: () => (isJson(holder[key]) ? (holder[key] as Json) : undefined), set: (v) => (holder[key] = v) };
    }
    const next = holder[key];
    if (!isJson(next)) return undefined;
    node = next;
  }
  return undefined;
}

/**
 * Moves the NAMED_SCHEMAS into components.schemas and replaces every equal answer schema (a nullable
 * one too) by a reference. Request bodies keep their own schemas: they differ from answers.
 */
function nameSchemas(doc: OpenAPIV3.Document, answers: { key: string; get: () => Json | undefined; set: (v: Json) => void }[]) {
  const schemas = doc.components!.schemas as Record<string, Json>;
  const replaceEverywhere = (name: string, target: Json) => {
    const ref = { $ref: `#/components/schemas/${name}` };
    const bare = withoutDescription(target);
    const swap = (s: Json): Json => {
      if (s.$ref) return s;
      const plain = withoutDescription(s);
      if (isDeepStrictEqual(plain, bare)) return ref;
      if (s.nullable === true && isDeepStrictEqual({ ...plain, nullable: undefined }, { ...bare, nullable: undefined }))
        return { type: "object", nullable: true, allOf: [ref], ...(s.description ? { description: s.description } : {}) };
      return s;
    };
    for (const answer of answers) {
      const root = answer.get();
      if (!root || root.$ref) continue;
      mapSubschemas(root, swap);
      answer.set(swap(root));
    }
    for (const [other, schema] of Object.entries(schemas)) if (other !== name) mapSubschemas(schema, swap);
  };
  for (const [name, operation, where] of NAMED_SCHEMAS) {
    if (schemas[name]) continue;
    const answer = answers.find((a) => a.key === operation);
    const root = answer?.get();
    if (!root || root.$ref) continue;
    const found = where ? locate(root, where)?.get() : root;
    if (!found || found.$ref || found.type !== "object") continue;
    schemas[name] = withoutDescription(found);
    replaceEverywhere(name, schemas[name]);
  }
}

/** The machine-readable description of the public API (`/openapi.json` and `/openapi.yaml`, generated from the routers). */
export function buildOpenApiDocument(config: Config): OpenAPIV3.Document {
  const doc = generatedDocument(config);
  const components = (doc.components ??= {});
  addSharedComponents(components);
  const answers: Answer[] = [];
  const requests: Request[] = [];
  for (const op of restOperations()) describeOperation(doc, op, answers, requests);
  nameSchemas(doc, answers);
  for (const schema of [...answers.map((a) => a.get()), ...requests.map((r) => r.media.schema as Json), ...Object.values(components.schemas ?? {})])
    if (schema) mapSubschemas(schema as Json, (sub) => inclusiveBounds(spreadNullable(sub)));
  addExamples(doc, answers, requests);
  // Alphabetical, as linters expect.
  const used = new Set(Object.values(doc.paths).flatMap((item) => Object.values(item ?? {}).flatMap((o) => (o as OpenAPIV3.OperationObject).tags ?? [])));
  doc.tags = [...used].sort().map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? name }));
  return doc;
}

/** An operation's JSON answer, read and replaced in place while schemas get their names. */
type Answer = { key: string; get: () => Json | undefined; set: (v: Json) => void };
/** An operation's JSON request body. */
type Request = { key: string; media: OpenAPIV3.MediaTypeObject };

/** What trpc-openapi makes of the routers, with this instance's info and servers. */
function generatedDocument(config: Config): OpenAPIV3.Document {
  const apiBase = base(config.apiUrl);
  const doc = generateOpenApiDocument(appRouter as unknown as OpenApiRouter, {
    title: "Link Shortener API",
    version: "1.0.0",
    baseUrl: apiBase,
    description:
      "Short links on their own redirect domain, per-link rules, click analytics, linktrees and abuse reports. " +
      'All bodies are JSON; timestamps are integers in milliseconds since the Unix epoch. Errors are `{"error": CODE}` (the ErrorResponse schema), ' +
      "with `fields` on every 400.",
    securitySchemes: {
      bearerAuth: { type: "http", scheme: "bearer", description: "An API token (`tok_…`) created in the dashboard, shown once." },
    },
  }) as unknown as OpenAPIV3.Document;

  doc.info.license = { name: "Proprietary", url: `${base(config.appUrl)}/terms` };
  doc.info.contact = { name: "Support", url: `${base(config.appUrl)}/docs`, email: supportEmail(config.appUrl) };
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
  return doc;
}

/** The session cookie beside tokens, and the one error schema every error answer names. */
function addSharedComponents(components: OpenAPIV3.ComponentsObject): void {
  delete components.responses;
  components.securitySchemes = {
    ...components.securitySchemes,
    sessionCookie: { type: "apiKey", in: "cookie", name: "app_session", description: "Dashboard session (browsers only)." },
  };
  // Not `Error`: a generated client's type of that name would shadow JavaScript's own Error.
  components.schemas = {
    ...components.schemas,
    ErrorResponse: {
      type: "object",
      required: ["error"],
      properties: {
        error: { type: "string", enum: Object.keys(ERROR_STATUS), description: "What went wrong, as a code", example: "NOT_FOUND" },
        fields: {
          type: "object",
          description: "Present on every 400: each input name with what is wrong with it",
          additionalProperties: { type: "array", items: { type: "string" } },
        },
      },
      example: { error: "NOT_FOUND" },
    },
  };
}

/** An error answer of an operation: the ErrorResponse schema, the codes the status can carry, an example. */
function errorResponse(status: number, o: OpenAPIV3.OperationObject): OpenAPIV3.ResponseObject {
  const codes = codesOf(status);
  // The example's code: one the operation's own text names, else the status's first.
  const text = `${o.summary ?? ""} ${o.description ?? ""}`;
  const code = status === 400 ? "VALIDATION_FAILED" : (codes.find((c) => text.includes(c)) ?? codes[0] ?? "INTERNAL_ERROR");
  const example = status === 400 ? { error: code, fields: { [firstInput(o)]: ["is required"] } } : { error: code };
  return {
    description: `${STATUS_TEXT[status] ?? "Error"}. \`error\`: ${codes.join(", ") || "INTERNAL_ERROR"}`,
    ...(status === 429 || status === 503
      ? { headers: { "Retry-After": { description: "Seconds to wait before trying again", schema: { type: "integer" } } } }
      : {}),
    content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorResponse" }, example } },
  };
}

/** One REST operation as its procedure's meta describes it: answers, errors, parameters, scope, security. */
function describeOperation(doc: OpenAPIV3.Document, op: Operation, answers: Answer[], requests: Request[]): void {
  const item = doc.paths[op.path] as Record<string, OpenAPIV3.OperationObject> | undefined;
  const method = op.method.toLowerCase();
  const o = item?.[method];
  if (!item || !o) return;
  if (op.meta.internal) {
    delete item[method];
    if (!Object.keys(item).some((k) => ["get", "post", "put", "patch", "delete"].includes(k))) delete doc.paths[op.path];
    return;
  }
  const key = `${op.method} ${op.path}`;
  const success = op.meta.successStatus ?? 200;
  const ok = o.responses["200"] as OpenAPIV3.ResponseObject;
  const responses: OpenAPIV3.ResponsesObject = {};
  const headers = op.meta.openapi?.protect ? { ...RATE_LIMIT_HEADERS } : undefined;
  // A procedure that answers nothing (z.void(): an empty schema) sends no body, whatever its status.
  const json = ok.content?.["application/json"]?.schema;
  const noBody = success === 204 || !ok.content || (json !== undefined && isJson(json) && Object.keys(json).length === 0);
  if (noBody) responses[String(success)] = { description: success === 202 ? "Accepted; no body" : "Done; no body", ...(headers ? { headers } : {}) };
  else {
    const media = ok.content?.["application/json"];
    annotate((media?.schema as OpenAPIV3.SchemaObject) ?? undefined, false, NOT_URI[op.procedurePath]);
    const answer: OpenAPIV3.ResponseObject = {
      ...ok,
      description: success === 201 ? "Created" : success === 202 ? "Accepted" : "OK",
      ...(headers ? { headers } : {}),
    };
    // A file answer is its bytes in one of its content types, not the procedure's JSON.
    const files = BINARY_ANSWERS[op.procedurePath];
    if (files) answer.content = Object.fromEntries(files.map((t) => [t, { schema: { type: "string", format: "binary" } }]));
    responses[String(success)] = answer;
    if (media && !files) answers.push({ key, get: () => media.schema as Json | undefined, set: (v) => (media.schema = v as OpenAPIV3.SchemaObject) });
  }
  for (const status of errorStatuses(op, o)) responses[String(status)] = errorResponse(status, o);
  o.responses = responses;

  const bodyMedia = (o.requestBody as OpenAPIV3.RequestBodyObject | undefined)?.content?.["application/json"];
  const body = bodyMedia?.schema as OpenAPIV3.SchemaObject | undefined;
  annotate(body, true, NOT_URI[op.procedurePath]);
  if (body && method === "patch") body.minProperties = 1;
  if (method === "get" || method === "delete") delete o.requestBody;
  else if (bodyMedia) requests.push({ key, media: bodyMedia });

  for (const p of (o.parameters ?? []) as OpenAPIV3.ParameterObject[]) {
    p.description ??=
      p.in === "path"
        ? pathParameterText(op.path, p.name)
        : (PARAMETER_TEXT[p.name] ?? (DIMENSIONS.includes(p.name) ? dimensionFilter(p.name) : undescribedParameter(p.name)));
  }
  if (o.parameters && !o.parameters.length) delete o.parameters;

  // What linters ask of every operation, for a procedure whose meta leaves it out.
  o.description ||= o.summary;
  if (!o.tags?.length) o.tags = [op.path.split("/")[1] || "api"];
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
        example: "7f3c2a9e-launch-mail",
      },
    ];
  }

  if (op.meta.openapi?.protect) o.security = [{ bearerAuth: [] }, { sessionCookie: [] }];
  else if (op.procedurePath === "link.create") o.security = [{}, { bearerAuth: [] }, { sessionCookie: [] }];
  else o.security = [];
}

/** Examples, made from the schemas (a named schema's example is made once and reused), and for files. */
function addExamples(doc: OpenAPIV3.Document, answers: Answer[], requests: Request[]): void {
  const schemas = (doc.components?.schemas ?? {}) as Record<string, Schema>;
  const examples = new Examples(schemas);
  for (const answer of answers) {
    const schema = answer.get();
    const media = findMedia(doc, answer.key);
    if (schema && media) media.example = examples.of(schema, ["answer"], "answer");
  }
  // Files (a QR code's SVG or PNG): the SVG as its text, other bytes named, since JSON cannot hold them.
  for (const item of Object.values(doc.paths))
    for (const o of Object.values(item ?? {}) as OpenAPIV3.OperationObject[])
      for (const response of Object.values(o.responses ?? {}) as OpenAPIV3.ResponseObject[])
        for (const [type, media] of Object.entries(response.content ?? {}))
          if (type !== "application/json" && media.example === undefined)
            media.example = type === "image/svg+xml" ? SVG_EXAMPLE : `(the ${type.split("/")[1].toUpperCase()} file's bytes)`;
  for (const { key, media } of requests) {
    if (media.schema) media.example = examples.of(media.schema as Schema, [bodyName(key)], "request", EXAMPLE_MEMBERS[key]);
  }
}

/**
 * support@ the dashboard's host. A host with no dot (localhost) or an address makes no valid e-mail
 * address, and a local instance has no mailbox anyway: the reserved example domain then.
 */
function supportEmail(appUrl: URL): string {
  const host = appUrl.hostname;
  return /^[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}$/i.test(host) ? `support@${host}` : "support@example.com";
}

/**
 * OpenAPI 3.0 reads `nullable` only beside `type`: a nullable union (zod's `a.or(b).nullable()`) gets it
 * on each of its branches instead.
 */
function spreadNullable(s: Json): Json {
  if (s.nullable !== true || s.type !== undefined) return s;
  for (const key of ["anyOf", "oneOf"]) {
    const branches = s[key];
    if (!Array.isArray(branches)) continue;
    const { nullable: _n, ...rest } = s;
    return { ...rest, [key]: branches.map((b: Json) => (b.$ref || b.type === undefined ? b : { ...b, nullable: true })) };
  }
  return s;
}

/**
 * An integer above 0 is an integer of at least 1: said so, because some example validators read
 * OpenAPI 3.0's boolean `exclusiveMinimum` as the number of later JSON Schema versions and fail.
 */
function inclusiveBounds(s: Json): Json {
  if (s.type !== "integer") return s;
  const out = { ...s };
  if (out.exclusiveMinimum === true && typeof out.minimum === "number") {
    out.minimum = Math.floor(out.minimum) + 1;
    delete out.exclusiveMinimum;
  }
  if (out.exclusiveMaximum === true && typeof out.maximum === "number") {
    out.maximum = Math.ceil(out.maximum) - 1;
    delete out.exclusiveMaximum;
  }
  return out;
}

/** The success answer's JSON media of `METHOD /path`. */
function findMedia(doc: OpenAPIV3.Document, key: string): OpenAPIV3.MediaTypeObject | undefined {
  const [method, path] = key.split(" ");
  const o = (doc.paths[path] as Record<string, OpenAPIV3.OperationObject> | undefined)?.[method.toLowerCase()];
  const success = Object.entries(o?.responses ?? {}).find(([status]) => status.startsWith("2"));
  return (success?.[1] as OpenAPIV3.ResponseObject | undefined)?.content?.["application/json"];
}

/** What a body is named for its example's values: its path's last resource, singular (`POST /webhooks`: Webhook). */
function bodyName(key: string): string {
  const last =
    key
      .split(" ")[1]
      .split("/")
      .filter((segment) => segment && !segment.startsWith("{"))
      .pop() ?? "body";
  return last.charAt(0).toUpperCase() + last.slice(1).replace(/s$/, "");
}

/** The input a 400 example names: the body's first required member, else the first parameter. */
function firstInput(o: OpenAPIV3.OperationObject): string {
  const body = (o.requestBody as OpenAPIV3.RequestBodyObject | undefined)?.content?.["application/json"]?.schema as OpenAPIV3.SchemaObject | undefined;
  return body?.required?.[0] ?? Object.keys(body?.properties ?? {})[0] ?? (o.parameters?.[0] as OpenAPIV3.ParameterObject | undefined)?.name ?? "body";
}

/** The document is built once per configuration (its server URLs come from it), on first request. */
const built = new WeakMap<Config, { json: string; yaml: string }>();
export function openApiDocuments(config: Config) {
  let docs = built.get(config);
  if (!docs) {
    const doc = buildOpenApiDocument(config);
    docs = { json: JSON.stringify(doc, null, 2), yaml: stringify(doc) };
    built.set(config, docs);
  }
  return docs;
}
