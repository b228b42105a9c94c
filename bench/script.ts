// How a bench file starts when it is run by itself (`npx tsx bench/x.ts`) rather than imported by
// bench/run.ts.
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";

// The command line may name the file through a link; the module's URL never does.
const realPath = (p: string) => {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
};

/**
 * Runs `main` when the module at `moduleUrl` (its `import.meta.url`) is the process's entry; exits
 * when it is done (with `process.exitCode`, which a bench may set), or with 1 after printing its error.
 */
export function runAsScript(moduleUrl: string, main: () => Promise<unknown>): void {
  if (!process.argv[1] || realPath(process.argv[1]) !== realPath(fileURLToPath(moduleUrl))) return;
  main().then(
    () => process.exit(),
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
}
