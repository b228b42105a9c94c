import type { IncomingMessage } from "node:http";

/**
 * True when the request asks for HTML by name (`Accept: text/html…`, as a browser's navigation
 * does, and not with `q=0`). Error answers are the service's JSON errors for every other client (a
 * script, `curl`, `fetch`), and a readable page for a person.
 */
export function wantsHtml(req: Pick<IncomingMessage, "headers">): boolean {
  const accept = req.headers.accept;
  if (!accept) return false;
  for (const part of accept.split(",")) {
    const [type, ...params] = part.split(";");
    if (type.trim().toLowerCase() !== "text/html") continue;
    const q = params.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith("q="));
    return q === undefined || Number(q.slice(2)) > 0;
  }
  return false;
}
