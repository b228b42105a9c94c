// Keeps in a production node_modules only what the builds leave to it, for the container image:
// `node scripts/prune-node-modules.mjs build/node-modules.json [node_modules]`, after `npm ci --omit=dev`.
// The bundles (scripts/ensure-build.mjs) hold every other package, so the image keeps the packages
// that file names (imported by the bundles or found by path at run time) and their own dependencies,
// found as Node finds them from each package's folder, and removes every other package with the
// links in .bin to them. npm's record of the install (.package-lock.json) goes too: it would list
// what is no longer there.
import { existsSync, lstatSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The folder Node finds package `name` in from `dir` (a package's folder, or the project's), or undefined. */
function findPackage(root, dir, name) {
  for (let d = dir; ; d = path.dirname(d)) {
    const candidate = path.join(d, "node_modules", name);
    if (existsSync(path.join(candidate, "package.json"))) return candidate;
    if (d === path.dirname(root) || d === path.dirname(d)) return undefined;
  }
}

/**
 * The folders of `names` and of everything they depend on (dependencies, optional dependencies
 * installed, peer dependencies installed), as Node resolves them. A missing dependency that is
 * neither optional nor a peer throws: the install is not the one the builds were made against.
 */
export function reachablePackages(root, names) {
  const kept = new Set();
  const queue = names.map((name) => ({ name, from: path.dirname(root), by: "build/node-modules.json" }));
  while (queue.length) {
    const { name, from, by } = queue.shift();
    const dir = findPackage(root, from, name);
    if (!dir) throw new Error(`prune-node-modules: ${name} (needed by ${by}) is not installed`);
    if (kept.has(dir)) continue;
    kept.add(dir);
    const pkg = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
    for (const dep of Object.keys(pkg.dependencies ?? {})) queue.push({ name: dep, from: dir, by: name });
    const optional = new Set([...Object.keys(pkg.optionalDependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})]);
    for (const dep of optional) if (findPackage(root, dir, dep)) queue.push({ name: dep, from: dir, by: name });
  }
  return kept;
}

/** Every package folder under a node_modules folder (`name`, `@scope/name`), with its own nested ones. */
function packageDirs(modules, out = []) {
  if (!existsSync(modules)) return out;
  for (const e of readdirSync(modules, { withFileTypes: true })) {
    if (e.name.startsWith(".")) continue;
    const p = path.join(modules, e.name);
    if (e.name.startsWith("@")) {
      for (const s of readdirSync(p, { withFileTypes: true }))
        if (s.isDirectory()) packageDirs(path.join(p, s.name, "node_modules"), out).push(path.join(p, s.name));
    } else if (e.isDirectory()) packageDirs(path.join(p, "node_modules"), out).push(p);
  }
  return out;
}

function sizeOf(p) {
  const s = lstatSync(p);
  if (!s.isDirectory()) return s.size;
  let n = 0;
  for (const e of readdirSync(p)) n += sizeOf(path.join(p, e));
  return n;
}

/** Removes from `root` (a node_modules folder) every package not reachable from `names`. */
export function pruneNodeModules(root, names) {
  const kept = reachablePackages(root, names);
  let removed = 0;
  let packages = 0;
  for (const dir of packageDirs(root)) {
    if (kept.has(dir) || !existsSync(dir)) continue;
    removed += sizeOf(dir);
    packages++;
    rmSync(dir, { recursive: true, force: true });
  }
  // Scopes left empty, links to removed packages, npm's record of the removed ones.
  for (const e of readdirSync(root)) {
    const p = path.join(root, e);
    if (e.startsWith("@") && readdirSync(p).length === 0) rmSync(p, { recursive: true });
  }
  for (const bin of [root, ...kept].map((d) => path.join(d === root ? d : path.join(d, "node_modules"), ".bin"))) {
    if (!existsSync(bin)) continue;
    for (const link of readdirSync(bin)) {
      const p = path.join(bin, link);
      let target;
      try {
        target = realpathSync(p);
      } catch {
        target = undefined;
      }
      if (!target || !existsSync(target)) rmSync(p, { force: true });
    }
    if (readdirSync(bin).length === 0) rmSync(bin, { recursive: true });
  }
  rmSync(path.join(root, ".package-lock.json"), { force: true });
  return { kept: kept.size, packages, removed };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [list = "build/node-modules.json", modules = "node_modules"] = process.argv.slice(2);
  const root = path.resolve(modules);
  if (!statSync(root).isDirectory()) throw new Error(`${root} is not a folder`);
  const { packages: names } = JSON.parse(readFileSync(list, "utf8"));
  const r = pruneNodeModules(root, names);
  console.log(`prune-node-modules: kept ${r.kept} packages for ${names.length} named in ${list}; removed ${r.packages} (${Math.round(r.removed / 1e6)} MB)`);
}
