// The container image keeps in node_modules only the packages the bundles leave to it and their own
// dependencies (scripts/prune-node-modules.mjs): found as Node finds them, nested versions included.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { pruneNodeModules } from "../../../scripts/prune-node-modules.mjs";

let work: string;
afterEach(() => rmSync(work, { recursive: true, force: true }));

/** A package folder with its package.json (and a file, so removal has bytes to count). */
function pkg(dir: string, fields: Record<string, unknown> = {}) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: path.basename(dir), ...fields }));
  writeFileSync(path.join(dir, "index.js"), "module.exports = 1;\n");
}

describe("prune-node-modules", () => {
  it("keeps the named packages and what they depend on, and removes every other package, empty scope and dangling link", () => {
    work = mkdtempSync(path.join(tmpdir(), "prune-"));
    const nm = path.join(work, "node_modules");
    pkg(path.join(nm, "native"), { dependencies: { helper: "1", "@scope/lib": "1" }, optionalDependencies: { "native-linux": "1", "native-darwin": "1" } });
    pkg(path.join(nm, "native-linux"));
    pkg(path.join(nm, "helper"), { dependencies: { shared: "2" } });
    // helper needs shared 2, nested; the top-level shared 1 is only a bundled package's.
    pkg(path.join(nm, "helper/node_modules/shared"));
    pkg(path.join(nm, "shared"));
    pkg(path.join(nm, "@scope/lib"), { peerDependencies: { react: "18", absent: "1" } });
    pkg(path.join(nm, "react"));
    pkg(path.join(nm, "data"));
    pkg(path.join(nm, "bundled"), { dependencies: { shared: "1" } });
    pkg(path.join(nm, "@other/bundled"));
    mkdirSync(path.join(nm, ".bin"));
    symlinkSync("../native/index.js", path.join(nm, ".bin/native"));
    symlinkSync("../bundled/index.js", path.join(nm, ".bin/bundled"));
    writeFileSync(path.join(nm, ".package-lock.json"), "{}");

    const r = pruneNodeModules(nm, ["native", "data"]);

    expect(r).toMatchObject({ kept: 7, packages: 3 });
    expect(readdirSync(nm).sort()).toEqual([".bin", "@scope", "data", "helper", "native", "native-linux", "react"]);
    expect(existsSync(path.join(nm, "helper/node_modules/shared/package.json"))).toBe(true);
    expect(readdirSync(path.join(nm, ".bin"))).toEqual(["native"]);
  });

  it("refuses an install that lacks a dependency of a kept package", () => {
    work = mkdtempSync(path.join(tmpdir(), "prune-"));
    const nm = path.join(work, "node_modules");
    pkg(path.join(nm, "native"), { dependencies: { missing: "1" } });
    expect(() => pruneNodeModules(nm, ["native"])).toThrow(/missing \(needed by native\) is not installed/);
    expect(existsSync(path.join(nm, "native"))).toBe(true);
  });
});
