// Runs after `npm install` / `npm ci` (postinstall): mends a defect of postgres.js 3.4.9 in place.
//
// A connection whose socket failed while a query was running (ECONNRESET) keeps that query as its
// current one. Reconnected later for another query, it takes a server's refusal at start-up (FATAL:
// database not accepting connections, too many clients, starting up) for that stale query's error and
// waits for an answer that never comes: the new query reconnects for ever instead of failing, so a
// request waited instead of answering 503 (README, Performance; db/refused-connections.test.ts).
// A new socket has no query running: this clears it there. Exact text, so another version of
// postgres.js stops the install here instead of running unmended.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const MARK = "query = null /* mended by scripts/patch-postgres.mjs */";
const before = "    socket || (socket = await createSocket())\n";
const after = `    socket || (${MARK}, socket = await createSocket())\n`;

// npm runs install scripts in the project's root.
const root = path.resolve("node_modules/postgres");
const { version } = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
if (version !== "3.4.9") {
  console.error(`scripts/patch-postgres.mjs: written for postgres 3.4.9, found ${version}: check whether the defect is fixed, then update or drop this script`);
  process.exit(1);
}
for (const file of ["src/connection.js", "cjs/src/connection.js"]) {
  const p = path.join(root, file);
  const text = readFileSync(p, "utf8");
  if (text.includes(MARK)) continue;
  if (text.split(before).length !== 2) {
    console.error(`scripts/patch-postgres.mjs: the line to mend is not in ${p} exactly once`);
    process.exit(1);
  }
  writeFileSync(p, text.replace(before, after));
}
