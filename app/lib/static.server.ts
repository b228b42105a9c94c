import { createRequire } from "node:module";
import path from "node:path";
import { createReadStream, existsSync, statSync } from "node:fs";
import { createReadableStreamFromReadable } from "@remix-run/node";

const require = createRequire(import.meta.url);

/** swagger-ui-dist files the API reference page needs, served from node_modules (no copy, no CDN). */
const SWAGGER_FILES: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png",
};

export function swaggerFile(name: string): Response {
  const type = SWAGGER_FILES[name];
  if (!type) return new Response("Not found", { status: 404 });
  const dir = path.dirname(require.resolve("swagger-ui-dist/package.json"));
  return fileResponse(path.join(dir, name), type, "public, max-age=86400");
}

export function fileResponse(file: string, type: string, cacheControl: string): Response {
  if (!existsSync(file)) return new Response("Not found", { status: 404 });
  const size = statSync(file).size;
  return new Response(createReadableStreamFromReadable(createReadStream(file)), {
    headers: { "Content-Type": type, "Content-Length": String(size), "Cache-Control": cacheControl, "X-Content-Type-Options": "nosniff" },
  });
}
