// @ts-check
// A new embedded database (PGlite) starts as a copy of a template: a data directory with every
// migration applied, made once per migration set and kept in build/ (by `npm run build` and `npm
// start`'s build step, scripts/ensure-build.mjs). Creating a database runs PostgreSQL's initdb in
// WebAssembly, most of a first start; copying a made one takes a fraction of a second. Migrations
// still run after the copy, so a template older than the code ends up current all the same.
// A new data directory is made beside its final place and renamed there only when whole: a process
// killed during the first start leaves no half-made database (the next start would refuse it).
// Plain JavaScript: scripts/ensure-build.mjs runs it without the TypeScript loader.
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, rmdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

// "../": right from db/ and from the server bundle (build/server.mjs) alike, see db/client.ts.
export const migrationsFolder = fileURLToPath(new URL("../db/migrations", import.meta.url));
export const templateRoot = fileURLToPath(new URL("../build", import.meta.url));
const PREFIX = "pglite-template-";

/** PGlite's version: a template made by another one may hold another PostgreSQL's files. */
function pgliteVersion() {
  const entry = createRequire(import.meta.url).resolve("@electric-sql/pglite");
  let dir = path.dirname(entry);
  while (!existsSync(path.join(dir, "package.json"))) dir = path.dirname(dir);
  return String(JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")).version);
}

/** Names the template of these migrations on this PGlite: `<pglite version>-<hash of the migrations>`. */
export function templateKey(folder = migrationsFolder) {
  const hash = createHash("sha256");
  const files = readdirSync(folder)
    .filter((f) => f.endsWith(".sql"))
    .sort();
  for (const f of ["meta/_journal.json", ...files]) hash.update(f).update(readFileSync(path.join(folder, f)));
  return `${pgliteVersion()}-${hash.digest("hex").slice(0, 16)}`;
}

/**
 * The template to start from: the one of the current migrations, else (migrations added since it
 * was made) the newest one of this PGlite version, else undefined.
 * @param {string} [root]
 */
export function findTemplate(root = templateRoot) {
  const key = templateKey();
  const exact = path.join(root, PREFIX + key);
  if (existsSync(exact)) return exact;
  if (!existsSync(root)) return undefined;
  const sameVersion = `${PREFIX}${key.slice(0, key.lastIndexOf("-"))}-`;
  return readdirSync(root)
    .filter((f) => f.startsWith(sameVersion) && !f.includes(".new-"))
    .map((f) => path.join(root, f))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
}

/**
 * Makes the current template in `root` unless there is one, and removes the others.
 * @param {string} [root]
 * @returns {Promise<string>} its path
 */
export async function ensureTemplate(root = templateRoot) {
  const target = path.join(root, PREFIX + templateKey());
  if (!existsSync(target)) await makeMigrated(target, { shared: true });
  for (const f of readdirSync(root)) {
    const p = path.join(root, f);
    if (!f.startsWith(PREFIX) || p === target) continue;
    // Another process's template in the making stays; that of a process that died goes.
    const making = f.indexOf(".new-");
    if (making !== -1 && alive(Number(f.slice(making + 5)))) continue;
    rmSync(p, { recursive: true, force: true });
  }
  return target;
}

/**
 * A new PGlite data directory at `target` with every migration of `folder` applied, made in a
 * temporary directory beside it and renamed. `shared` (a template) leaves it readable by others:
 * the service may run as another user than the one who built it.
 * @param {string} target
 * @param {{ folder?: string, shared?: boolean, empty?: boolean }} [opts] empty: made whole but not migrated
 */
export async function makeMigrated(target, opts = {}) {
  const { PGlite } = await import("@electric-sql/pglite");
  const { drizzle } = await import("drizzle-orm/pglite");
  const { migrate } = await import("drizzle-orm/pglite/migrator");
  const tmp = temporary(target);
  const db = await PGlite.create(tmp);
  try {
    if (!opts.empty) await migrate(drizzle(db), { migrationsFolder: opts.folder ?? migrationsFolder });
  } finally {
    await db.close();
  }
  setModes(tmp, opts.shared ? 0o755 : 0o700, opts.shared ? 0o644 : 0o600);
  place(tmp, target);
}

/**
 * Gives `dir` a database when it has none: a copy of `template`, or, without one, a database made
 * and migrated there. Either way it appears whole or not at all.
 * @param {string} dir
 * @param {string | undefined} template
 * @param {{ empty?: boolean }} [opts] without a template: an empty database instead of a migrated one
 */
export async function prepareDataDir(dir, template, opts = {}) {
  if (existsSync(path.join(dir, "PG_VERSION"))) return;
  if (!template) return makeMigrated(dir, { empty: opts.empty });
  const tmp = temporary(dir);
  copyDir(template, tmp);
  place(tmp, dir);
}

/** A fresh temporary directory beside `target`, after removing those of processes that died. */
function temporary(target) {
  const parent = path.dirname(target);
  mkdirSync(parent, { recursive: true });
  const mine = `${path.basename(target)}.new-`;
  for (const f of readdirSync(parent)) {
    if (!f.startsWith(mine)) continue;
    const pid = Number(f.slice(mine.length));
    if (pid !== process.pid && alive(pid)) continue;
    rmSync(path.join(parent, f), { recursive: true, force: true });
  }
  return path.join(parent, mine + process.pid);
}

/** @param {number} pid */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return /** @type {NodeJS.ErrnoException} */ (e).code === "EPERM";
  }
}

/**
 * Renames the finished `tmp` to `target`. An empty `target` (made by hand, or by an older version
 * before it failed) gives way; one with other files is kept aside, never deleted; one another
 * process finished first wins, and ours goes.
 * @param {string} tmp
 * @param {string} target
 */
function place(tmp, target) {
  if (existsSync(target) && !existsSync(path.join(target, "PG_VERSION"))) {
    if (readdirSync(target).length === 0) rmdirSync(target);
    else renameSync(target, `${target}.incomplete-${Date.now()}`);
  }
  try {
    renameSync(tmp, target);
  } catch (e) {
    const code = /** @type {NodeJS.ErrnoException} */ (e).code;
    if (code !== "ENOTEMPTY" && code !== "EEXIST") throw e;
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * Copies a directory tree; the copy is the service's own (0700, 0600), as PostgreSQL keeps its files.
 * @param {string} from
 * @param {string} to
 */
function copyDir(from, to) {
  mkdirSync(to, { mode: 0o700 });
  for (const e of readdirSync(from, { withFileTypes: true })) {
    const a = path.join(from, e.name);
    const b = path.join(to, e.name);
    if (e.isDirectory()) copyDir(a, b);
    else {
      copyFileSync(a, b);
      chmodSync(b, 0o600);
    }
  }
}

/**
 * @param {string} dir
 * @param {number} dirMode
 * @param {number} fileMode
 */
function setModes(dir, dirMode, fileMode) {
  chmodSync(dir, dirMode);
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) setModes(p, dirMode, fileMode);
    else chmodSync(p, fileMode);
  }
}
