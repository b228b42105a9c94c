import { createHash } from "node:crypto";
import type { LoaderFunctionArgs } from "@remix-run/node";
import { renderToStaticMarkup } from "react-dom/server";
import { LinktreeContent, pageClass, pageStyle, type PageData } from "../components/linktree-page";
import { PAGE_FRESH_UNTIL_HEADER } from "../lib/page-freshness";

/**
 * A linktree's public page, served on the redirect host at `{REDIRECT_URL}/{slug}` or on its branded
 * domain (server/http/linktree-page.ts forwards here with the page's link record id and a marker in
 * the load context).
 *
 * A resource route rendering its own small document: the page must not carry the dashboard's
 * chrome or any client JavaScript, so it does not go through root.tsx. React escapes every
 * user-supplied text and attribute. The one inline style is per page (its colours) and allowed by its hash.
 * The page itself is drawn by app/components/linktree-page.tsx, which the editor's preview draws too.
 */

const NOT_FOUND_STYLE = pageStyle({
  theme: null,
  palette: { background: "#f4f5f7", text: "#111827", button: "#ffffff", button_text: "#111827" },
  button_style: "rounded",
});

function headers(style: string): Headers {
  // No scripts at all; the page's one inline style is allowed by its hash.
  const csp = `default-src 'none'; style-src 'sha256-${createHash("sha256").update(style).digest("base64")}'; img-src http: https: data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
  return new Headers({
    "Content-Type": "text/html; charset=utf-8",
    // Publishing state, items and their schedule change what this page shows; nothing may keep a copy.
    "Cache-Control": "no-store",
    "Content-Security-Policy": csp,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "strict-origin-when-cross-origin",
  });
}

function Document({ title, head, style, children }: { title: string; head?: React.ReactNode; style: string; children: React.ReactNode }) {
  return (
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{title}</title>
        {/* No favicon request: the redirect host has none, and every path there is a slug. */}
        <link rel="icon" href="data:," />
        {head}
        <style dangerouslySetInnerHTML={{ __html: style }} />
      </head>
      {children}
    </html>
  );
}

function LinktreePage({ page, style }: { page: PageData; style: string }) {
  const description = page.bio ?? `${page.title}: links`;
  const head = (
    <>
      <meta name="description" content={description} />
      <link rel="canonical" href={page.url} />
      <meta property="og:type" content="profile" />
      <meta property="og:title" content={page.title} />
      <meta property="og:description" content={description} />
      <meta property="og:url" content={page.url} />
      <meta property="og:image" content={page.og_image} />
      <meta property="og:image:width" content="1200" />
      <meta property="og:image:height" content="630" />
      <meta property="og:image:alt" content={page.title} />
      <meta name="twitter:card" content="summary_large_image" />
      <meta name="twitter:title" content={page.title} />
      <meta name="twitter:description" content={description} />
      <meta name="twitter:image" content={page.og_image} />
    </>
  );
  return (
    <Document title={page.title} head={head} style={style}>
      <body className={pageClass(page)}>
        <LinktreeContent page={page} />
      </body>
    </Document>
  );
}

function NotFoundPage() {
  return (
    <Document title="Page not found" head={<meta name="robots" content="noindex" />} style={NOT_FOUND_STYLE}>
      <body>
        <main>
          <h1>Page not found</h1>
          <p className="bio">This page does not exist or is not published.</p>
        </main>
      </body>
    </Document>
  );
}

const html = (el: React.ReactElement, status: number, style: string, freshUntil: number | null = null) => {
  const h = headers(style);
  // For the redirect host's copy of the page only: it expires when a scheduled item appears or goes.
  if (freshUntil !== null) h.set(PAGE_FRESH_UNTIL_HEADER, String(freshUntil));
  return new Response(`<!doctype html>${renderToStaticMarkup(el)}`, { status, headers: h });
};

export async function loader({ params, context }: LoaderFunctionArgs) {
  // Only the redirect host's handler sets the marker: on APP_URL this path is just not found.
  if (!(context as { linktreePage?: boolean }).linktreePage) return html(<NotFoundPage />, 404, NOT_FOUND_STYLE);
  try {
    const page = await context.caller.linktree.publicPage({ link_id: params.linkId ?? "" });
    const style = pageStyle(page);
    return html(<LinktreePage page={page} style={style} />, 200, style, page.changes_at);
  } catch (e) {
    // tRPC's code, not `instanceof`: the build holds its own copy of the error classes.
    if ((e as { code?: string }).code === "NOT_FOUND") return html(<NotFoundPage />, 404, NOT_FOUND_STYLE);
    throw e;
  }
}
