import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { pgliteTemplate } from "../../db/test-db";

/**
 * Before the test files load: the bundles built from the current sources (the command-line tests run
 * build/cli.mjs; scripts/ensure-build.mjs takes a second or two when the dashboard is built already),
 * and the migrated PGlite template.
 */
export default async function setup() {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
  const built = spawnSync(process.execPath, ["scripts/ensure-build.mjs"], { cwd: root, stdio: "inherit" });
  if (built.status !== 0) throw new Error(`scripts/ensure-build.mjs ended with status ${built.status}`);
  if (!process.env.DATABASE_URL) await pgliteTemplate();
}
