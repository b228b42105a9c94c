// `npm start` builds what is missing, so a fresh checkout starts with one command: the Remix build, when absent or older than app/,
// and the server bundle, every time (esbuild takes a fraction of a second, and a bundle judged fresh
// by file times could be stale after a checkout).
import { copyFileSync, existsSync, readdirSync, renameSync, statSync, writeFileSync } from "node:fs";
import { execSync } from "node:child_process";
import path from "node:path";
import { build as esbuild } from "esbuild";
import { checkDashboardBuild } from "./check-dashboard-build.mjs";

const build = "build/index.js";
function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}
const sources = Math.max(newest("app"), statSync("remix.config.js").mtimeMs);
if (!existsSync(build) || statSync(build).mtimeMs < sources) {
  console.log("Building the dashboard (remix build)…");
  execSync("npx remix build", { stdio: "inherit" });
}
try {
  checkDashboardBuild();
} catch (e) {
  console.error(e.message);
  process.exit(1);
}

// The server as one ES module, packages left to node_modules. Run by plain node it needs no loader:
// tsx's loader thread held about 40 MB of the server's memory (docs/performance.md). It sits one
// folder below the root, as server/ and db/ do, so `new URL("../db/…", import.meta.url)` finds the
// migrations and the PGlite thread from the bundle and from the sources alike.
const SERVER_BUNDLE = "build/server.mjs";
const out = await esbuild({
  entryPoints: ["server/main.ts"],
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  write: false,
  logLevel: "warning",
});
// Written whole, then renamed: an instance starting at the same moment never reads half a file.
writeFileSync(`${SERVER_BUNDLE}.tmp`, out.outputFiles[0].contents);
renameSync(`${SERVER_BUNDLE}.tmp`, SERVER_BUNDLE);

// The share-card renderer's worker thread (server/redirect/og-worker.mjs, plain JavaScript that
// imports only packages): the bundle starts it as `new URL("./og-worker.mjs", import.meta.url)`,
// so it goes beside the bundle, whole then renamed like the bundle.
copyFileSync("server/redirect/og-worker.mjs", "build/og-worker.mjs.tmp");
renameSync("build/og-worker.mjs.tmp", "build/og-worker.mjs");
