// `npm start` builds what is missing, so a fresh checkout starts with one command: the Remix build, when absent or older than app/,
// and the server bundle, every time (esbuild takes a fraction of a second, and a bundle judged fresh
// by file times could be stale after a checkout).
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, statSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import path from "node:path";
import { build as esbuild } from "esbuild";
import { checkDashboardBuild } from "./check-dashboard-build.mjs";
import { ensureTemplate } from "../db/pglite-template.mjs";

const build = "build/index.js";
function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}
// A production install (`npm ci --omit=dev`) has no Remix compiler: it serves the build made by
// `npm run build` before, and says so plainly when there is none.
const canBuild = existsSync("node_modules/@remix-run/dev/package.json");
const sources = existsSync("app") ? Math.max(newest("app"), statSync("remix.config.js").mtimeMs) : 0;
/** The dashboard build, in a process of its own: the database template is made meanwhile. */
let dashboard = Promise.resolve();
if (!existsSync(build) || statSync(build).mtimeMs < sources) {
  if (canBuild) {
    console.log("Building the dashboard (remix build)…");
    dashboard = new Promise((resolve, reject) =>
      spawn("npx", ["remix", "build"], { stdio: "inherit" })
        .on("error", reject)
        .on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`remix build ended with status ${code}`)))),
    );
  } else if (!existsSync(build)) {
    console.error(
      "The dashboard is not built, and this install cannot build it (no development dependencies).\n" +
        "Run `npm ci && npm run build` first (then `npm ci --omit=dev` may drop them again), or copy build/ and public/build/ from such an install.",
    );
    process.exit(1);
  } else {
    console.warn(
      "The dashboard's sources are newer than its build, and this install cannot rebuild it: serving the existing build (run `npm run build` with the development dependencies).",
    );
  }
}
// The embedded database's template (db/pglite-template.mjs): a new DATA_DIR starts as a copy of it
// instead of creating and migrating a database, most of a first start. Made once per migration set;
// without it the server still starts, only slower, so a failure here is a warning.
mkdirSync("build", { recursive: true });
try {
  const started = Date.now();
  const made = await ensureTemplate(path.resolve("build"));
  if (Date.now() - started > 1000) console.log(`Made the embedded database's template ${path.relative(".", made)} (${Date.now() - started} ms).`);
} catch (e) {
  console.warn(`The embedded database's template could not be made (a new DATA_DIR will take longer to start): ${e.message}`);
}
try {
  await dashboard;
} catch (e) {
  console.error(e.message);
  process.exit(1);
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
