import { createHash } from "node:crypto";
import type { LoaderFunctionArgs } from "@remix-run/node";
import { renderToStaticMarkup } from "react-dom/server";

/**
 * A linktree's public page, served on the redirect host at `{REDIRECT_URL}/{slug}`
 * (server/http/linktree-page.ts forwards here with a marker in the load context).
 *
 * A resource route rendering its own small document: the page must not carry the dashboard's
 * chrome or any client JavaScript, so it does not go through root.tsx. React escapes every
 * user-supplied text and attribute.
 */

type PageData = {
  slug: string;
  title: string;
  bio: string | null;
  avatar_url: string | null;
  url: string;
  items: { id: string; title: string; short_url: string }[];
};

const STYLE = `
:root{color-scheme:light dark;--bg:#f4f5f7;--fg:#111827;--muted:#4b5563;--btn:#ffffff;--btn-fg:#111827;--btn-border:#d1d5db;--focus:#1d4ed8}
@media (prefers-color-scheme:dark){:root{--bg:#0f172a;--fg:#f1f5f9;--muted:#cbd5e1;--btn:#1e293b;--btn-fg:#f8fafc;--btn-border:#475569;--focus:#93c5fd}}
*{box-sizing:border-box}
body{margin:0;min-height:100vh;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:36rem;margin:0 auto;padding:2.5rem 1rem 3rem;text-align:center}
.avatar{width:96px;height:96px;border-radius:50%;object-fit:cover;display:block;margin:0 auto 1rem;background:var(--btn-border)}
h1{font-size:1.5rem;line-height:1.25;margin:0 0 .5rem;overflow-wrap:anywhere}
.bio{color:var(--muted);margin:0 0 1.75rem;white-space:pre-line;overflow-wrap:anywhere}
ul{list-style:none;margin:0;padding:0;display:grid;gap:.75rem}
a.item{display:flex;align-items:center;justify-content:center;min-height:3.25rem;padding:.75rem 1rem;border:1px solid var(--btn-border);border-radius:.75rem;background:var(--btn);color:var(--btn-fg);font-weight:600;text-decoration:none;overflow-wrap:anywhere;transition:transform .1s}
a.item:hover{transform:translateY(-1px);border-color:var(--fg)}
a.item:focus-visible{outline:3px solid var(--focus);outline-offset:3px}
.empty{color:var(--muted)}
@media (prefers-reduced-motion:reduce){a.item{transition:none}a.item:hover{transform:none}}
`.trim();

// No scripts at all; the one inline style is allowed by its hash.
const CSP = `default-src 'none'; style-src 'sha256-${createHash("sha256").update(STYLE).digest("base64")}'; img-src http: https: data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

function headers(): Headers {
  return new Headers({
    "Content-Type": "text/html; charset=utf-8",
    // Publishing state and items change what this page shows; nothing may keep a copy.
    "Cache-Control": "no-store",
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "strict-origin-when-cross-origin",
  });
}

function Document({ title, head, children }: { title: string; head?: React.ReactNode; children: React.ReactNode }) {
  return (
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{title}</title>
        {/* No favicon request: the redirect host has none, and every path there is a slug. */}
        <link rel="icon" href="data:," />
        {head}
        <style dangerouslySetInnerHTML={{ __html: STYLE }} />
      </head>
      <body>{children}</body>
    </html>
  );
}

function LinktreePage({ page }: { page: PageData }) {
  const description = page.bio ?? `${page.title}: links`;
  const head = (
    <>
      <meta name="description" content={description} />
      <link rel="canonical" href={page.url} />
      <meta property="og:type" content="profile" />
      <meta property="og:title" content={page.title} />
      <meta property="og:description" content={description} />
      <meta property="og:url" content={page.url} />
      {page.avatar_url ? <meta property="og:image" content={page.avatar_url} /> : null}
      <meta name="twitter:card" content="summary" />
      <meta name="twitter:title" content={page.title} />
      <meta name="twitter:description" content={description} />
      {page.avatar_url ? <meta name="twitter:image" content={page.avatar_url} /> : null}
    </>
  );
  return (
    <Document title={page.title} head={head}>
      <main>
        <header>
          {page.avatar_url ? <img className="avatar" src={page.avatar_url} alt="" width={96} height={96} /> : null}
          <h1>{page.title}</h1>
          {page.bio ? <p className="bio">{page.bio}</p> : null}
        </header>
        {page.items.length ? (
          <nav aria-label={`Links of ${page.title}`}>
            <ul>
              {page.items.map((item) => (
                <li key={item.id}>
                  <a className="item" href={item.short_url}>
                    {item.title}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
        ) : (
          <p className="empty">No links yet.</p>
        )}
      </main>
    </Document>
  );
}

function NotFoundPage() {
  return (
    <Document title="Page not found" head={<meta name="robots" content="noindex" />}>
      <main>
        <h1>Page not found</h1>
        <p className="bio">This page does not exist or is not published.</p>
      </main>
    </Document>
  );
}

const html = (el: React.ReactElement, status: number) => new Response(`<!doctype html>${renderToStaticMarkup(el)}`, { status, headers: headers() });

export async function loader({ params, context }: LoaderFunctionArgs) {
  // Only the redirect host's handler sets the marker: on APP_URL this path is just not found.
  if (!(context as { linktreePage?: boolean }).linktreePage) return html(<NotFoundPage />, 404);
  try {
    const page = await context.caller.linktree.publicPage({ slug: params.slug ?? "" });
    return html(<LinktreePage page={page} />, 200);
  } catch (e) {
    // tRPC's code, not `instanceof`: the build holds its own copy of the error classes.
    if ((e as { code?: string }).code === "NOT_FOUND") return html(<NotFoundPage />, 404);
    throw e;
  }
}
