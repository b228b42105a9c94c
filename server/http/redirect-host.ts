import type { IncomingMessage, ServerResponse } from "node:http";

/** A plain request handler, as node:http calls it. */
export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * The redirect host's two halves. `fastPath` answers what it can (GET/HEAD of a slug, a share
 * card's image) without Express setting anything up, and says whether it took the request;
 * `routes` is the Express app for everything else (the other `/_` paths, the password post,
 * linktree pages).
 */
export type RedirectParts = { fastPath: (req: IncomingMessage, res: ServerResponse) => boolean; routes: RequestListener };

/** One handler: the fast path first, Express for whatever it leaves. */
export function composeRedirectHost({ fastPath, routes }: RedirectParts): RequestListener {
  return (req, res) => {
    if (!fastPath(req, res)) routes(req, res);
  };
}
