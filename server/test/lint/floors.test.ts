import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, expect, it } from "vitest";

// `npm run lint` keeps the floors (README "Architecture"): these run its dependency-cruiser rules on small trees.
const run = promisify(execFile);
const config = path.resolve(".dependency-cruiser.cjs");
const depcruise = path.resolve("node_modules/.bin/depcruise");
let dir: string | undefined;
afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

async function cruise(files: Record<string, string>): Promise<{ ok: boolean; out: string }> {
  dir = mkdtempSync(path.join(os.tmpdir(), "floors-"));
  writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions: { module: "ESNext", moduleResolution: "Bundler" } }));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  try {
    const { stdout } = await run(depcruise, ["server", "--config", config], { cwd: dir });
    return { ok: true, out: stdout };
  } catch (e) {
    return { ok: false, out: String((e as { stdout?: string }).stdout) };
  }
}

it("lint accepts imports from the same floor or below", async () => {
  const r = await cruise({
    "server/domain/errors.ts": "export const E = 1;\n",
    "server/lib/ids.ts": 'import { E } from "../domain/errors";\nexport const id = E;\n',
    "server/http/app.ts": 'import { id } from "../lib/ids";\nexport const app = id;\n',
  });
  expect(r.out).toContain("no dependency violations");
  expect(r.ok).toBe(true);
});

it("lint fails on an upward import (lib importing a transport)", async () => {
  const r = await cruise({
    "server/http/errors.ts": "export const E = 1;\n",
    "server/lib/ids.ts": 'import { E } from "../http/errors";\nexport const id = E;\n',
  });
  expect(r.ok).toBe(false);
  expect(r.out).toContain("no-upward-import-from-lib");
});

it("lint fails on an import circle, type-only imports included", async () => {
  const r = await cruise({
    "server/core/a.ts": 'import type { B } from "./b";\nexport type A = { b?: B };\n',
    "server/core/b.ts": 'import type { A } from "./a";\nexport type B = { a?: A };\n',
  });
  expect(r.ok).toBe(false);
  expect(r.out).toContain("no-circular");
});

it("lint fails when the ground floor imports anything of the server", async () => {
  const r = await cruise({
    "server/lib/ids.ts": "export const id = 1;\n",
    "server/domain/errors.ts": 'import { id } from "../lib/ids";\nexport const E = id;\n',
  });
  expect(r.ok).toBe(false);
  expect(r.out).toContain("no-upward-import-from-ground");
});
