// `npm start` builds what is missing (decisions §1): the Remix build, when absent or older than app/.
import { existsSync, readdirSync, statSync } from "node:fs";
import { execSync } from "node:child_process";
import path from "node:path";

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
