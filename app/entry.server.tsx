import { PassThrough } from "node:stream";
import type { ActionFunctionArgs, AppLoadContext, EntryContext, LoaderFunctionArgs } from "@remix-run/node";
import { createReadableStreamFromReadable } from "@remix-run/node";
import { isRouteErrorResponse, RemixServer } from "@remix-run/react";
import { isbot } from "isbot";
import { renderToPipeableStream } from "react-dom/server";
import { NonceContext } from "./lib/nonce";

const ABORT_DELAY = 5_000;

/**
 * Remix's default node entry, plus the CSP nonce: helmet allows only scripts carrying this
 * response's nonce (server/http/app.ts), and Remix's <Scripts/>, <ScrollRestoration/> and the
 * single-fetch stream are inline scripts.
 */
export default function handleRequest(
  request: Request,
  responseStatusCode: number,
  responseHeaders: Headers,
  remixContext: EntryContext,
  loadContext: AppLoadContext,
) {
  const nonce = loadContext.nonce ?? "";
  // The outage page (a loader's 503): clients and load balancers are told when to come back.
  if (responseStatusCode === 503 && !responseHeaders.has("Retry-After")) responseHeaders.set("Retry-After", "5");
  const waitForAll = isbot(request.headers.get("user-agent") ?? "") || remixContext.isSpaMode;
  return new Promise((resolve, reject) => {
    let shellRendered = false;
    const { pipe, abort } = renderToPipeableStream(
      <NonceContext.Provider value={nonce}>
        <RemixServer context={remixContext} url={request.url} abortDelay={ABORT_DELAY} nonce={nonce} />
      </NonceContext.Provider>,
      {
        nonce,
        [waitForAll ? "onAllReady" : "onShellReady"]() {
          shellRendered = true;
          const body = new PassThrough();
          responseHeaders.set("Content-Type", "text/html");
          resolve(new Response(createReadableStreamFromReadable(body), { headers: responseHeaders, status: responseStatusCode }));
          pipe(body);
        },
        onShellError(error: unknown) {
          reject(error);
        },
        onError(error: unknown) {
          responseStatusCode = 500;
          if (shellRendered) loadContext.report.failure(error, "dashboard render failed", { path: new URL(request.url).pathname });
        },
      },
    );
    setTimeout(abort, ABORT_DELAY);
  });
}

/**
 * Replaces Remix's default, which printed every error, a 404 for an unknown path included, to stderr
 * with its stack: the logs are JSON lines only. An answer of 4xx (no such route, method refused) is
 * no failure; a request the client gave up on is not logged either.
 */
export function handleError(error: unknown, { request, context }: LoaderFunctionArgs | ActionFunctionArgs) {
  if (request.signal.aborted) return;
  if (isRouteErrorResponse(error) && error.status < 500) return;
  // The database away: one line when it goes and one when it is back, not one per page.
  if (isRouteErrorResponse(error) && error.status === 503) return context.report.outage();
  context.report.failure(error, "dashboard request failed", { path: new URL(request.url).pathname });
}
