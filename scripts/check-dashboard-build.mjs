// The dashboard is a client of the routers: its server build (build/index.js) must hold none of
// the server's modules, or one process would run two copies of their state (the services, the
// click recorder, the caches) and two error classes. Remix's metafile lists every bundled input.
import { readFileSync } from "node:fs";

/** Inputs the dashboard build must never hold: the server's services, routers, helpers, transports and the database layer. */
export const FORBIDDEN_INPUT = /^(server\/(core|routers|lib|http|trpc|redirect|admin)\/|db\/)/;

/** The metafile's inputs under a forbidden folder, sorted. */
export function forbiddenInputs(metafile) {
  return Object.keys(metafile?.inputs ?? {})
    .map((p) => p.replace(/\\/g, "/").replace(/^\.\//, ""))
    .filter((p) => FORBIDDEN_INPUT.test(p))
    .sort();
}

/** Throws, naming each forbidden input, when the built dashboard holds server code. */
export function checkDashboardBuild(file = "build/metafile.server.json") {
  const found = forbiddenInputs(JSON.parse(readFileSync(file, "utf8")));
  if (found.length) {
    throw new Error(
      `The dashboard build (${file}) bundles server modules:\n  ${found.join("\n  ")}\n` +
        "app/ may import only types from server/ and db/: reach the server through the load context's caller (or an Express route in server/http/).",
    );
  }
}
