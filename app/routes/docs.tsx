import type { LoaderFunctionArgs } from "@remix-run/node";

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The API reference: swagger-ui-dist renders `${API_URL}/openapi.json`. A full document of its own
 * (not a Remix page) because the renderer is a classic script bundle; the CSP allows 'self' scripts,
 * so the bundle and its start-up code (public/swagger-init.js) are files, never inline.
 */
export function loader({ context }: LoaderFunctionArgs) {
  const api = context.urls.api;
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference · Links</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<style>
  body{margin:0;font-family:system-ui,sans-serif;background:#fff}
  .top{display:flex;gap:1rem;align-items:center;flex-wrap:wrap;padding:.75rem 1rem;border-bottom:1px solid #e2e8f0}
  .top a{color:#4338ca}
  .top h1{font-size:1.1rem;margin:0}
  #swagger-ui{min-height:80vh}
  /* Swagger UI's own colours, darkened to reach 4.5:1 (WCAG AA). */
  .swagger-ui .info .title small{background:#4b5563}
  .swagger-ui .info .title small.version-stamp{background:#3f6212}
  .swagger-ui .info a,.swagger-ui .info .url,.swagger-ui .info .link{color:#1d4ed8}
  .swagger-ui .opblock .opblock-summary-method{background:#334155}
  .swagger-ui .opblock.opblock-get .opblock-summary-method{background:#1d4ed8}
  .swagger-ui .opblock.opblock-post .opblock-summary-method{background:#166534}
  .swagger-ui .opblock.opblock-put .opblock-summary-method{background:#9a3412}
  .swagger-ui .opblock.opblock-patch .opblock-summary-method{background:#0f766e}
  .swagger-ui .opblock.opblock-delete .opblock-summary-method{background:#b91c1c}
  .swagger-ui .btn.authorize{color:#166534;border-color:#166534}
  .swagger-ui .btn.authorize svg{fill:#166534}
</style>
</head>
<body>
<header class="top"><a href="/">← Links</a><h1>API reference</h1><a href="${esc(api)}/openapi.json">openapi.json</a><a href="${esc(api)}/openapi.yaml">openapi.yaml</a></header>
<main id="swagger-ui" data-url="${esc(api)}/openapi.json"><noscript><p style="padding:1rem">The interactive reference needs JavaScript. The description itself is at <a href="${esc(api)}/openapi.json">openapi.json</a>.</p></noscript></main>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/swagger-init.js"></script>
<script src="/docs/a11y.js"></script>
</body>
</html>`;
  return new Response(html, { headers: { "Content-Type": "text/html; charset=utf-8" } });
}
