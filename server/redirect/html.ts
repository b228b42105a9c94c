/** Escapes text for HTML content and double-quoted attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE =
  "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;background:#f6f7f9;color:#111}" +
  // border-box: the padding is inside the card's width, so at 390 px it is 358 px wide and the page never scrolls sideways.
  "main{box-sizing:border-box;background:#fff;padding:1.5rem;border-radius:12px;box-shadow:0 1px 4px rgba(0,0,0,.08);max-width:24rem;width:calc(100% - 2rem);overflow-wrap:anywhere}" +
  "h1{font-size:1.25rem;margin:0 0 1rem}label{display:block;font-weight:600;margin-bottom:.25rem}" +
  "input{box-sizing:border-box;width:100%;font-size:1rem;padding:.6rem;border:1px solid #767676;border-radius:6px}" +
  "input:focus,button:focus{outline:3px solid #2563eb;outline-offset:2px}" +
  "button{margin-top:1rem;width:100%;font-size:1rem;padding:.6rem;border:0;border-radius:6px;background:#1d4ed8;color:#fff;cursor:pointer}" +
  ".error{color:#b91c1c;margin:.5rem 0 0}";

/** A small self-contained page (no scripts, no external assets). */
export function page(title: string, body: string, head = ""): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex"><title>${escapeHtml(title)}</title>${head}<style>${STYLE}</style></head><body><main>${body}</main></body></html>`;
}

export const notFoundPage = () => page("Link not found", "<h1>Link not found</h1><p>This short link does not exist or is no longer active.</p>");
export const expiredPage = () => page("Link expired", "<h1>Link expired</h1><p>This short link has expired.</p>");
export const methodNotAllowedPage = () => page("Method not allowed", "<h1>Method not allowed</h1>");
export const unavailablePage = () => page("Unavailable", "<h1>Temporarily unavailable</h1><p>Please try again in a moment.</p>");
