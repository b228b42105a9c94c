import { execFile } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root folder, where the command line runs. */
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/**
 * The command line as `npm run cli` runs it, bundled: the test setup bundles it from the sources before
 * any file runs (scripts/ensure-build.mjs), and a bundle starts in a third of the CPU time that tsx
 * takes to compile the sources on every run.
 */
export const cliBundle = path.join(root, "build/cli.mjs");

/** `json`: its output (or its error output) if that is JSON; the tests say what shape they read. */
export type CliRun<J> = { code: number; stdout: string; stderr: string; json: J };

/** Runs the command line (`npm run cli -- …`) with only PATH, HOME, `defaults` and the values `env` sets in its environment. */
export function runCli<J = unknown>(
  args: string[],
  env: Record<string, string | undefined>,
  opts: { timeoutMs: number; defaults?: Record<string, string> },
): Promise<CliRun<J>> {
  const childEnv: Record<string, string> = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...opts.defaults };
  for (const [k, v] of Object.entries(env)) if (v !== undefined) childEnv[k] = v;
  return new Promise((resolve) => {
    execFile(process.execPath, [cliBundle, ...args], { cwd: root, env: childEnv as NodeJS.ProcessEnv, timeout: opts.timeoutMs }, (err, stdout, stderr) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout || stderr);
      } catch {
        json = undefined;
      }
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr, json: json as J });
    });
  });
}
