import { mkdtempSync, readdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, type CliRun } from "./cli.test-helper";

/**
 * Every way to get the command line wrong: one line `{"error": "USAGE", "message"}` on stderr naming
 * what is wrong, exit code 2, nothing on stdout, and no database opened (the data directory stays
 * empty); another failure (here a configuration error) exits 1; --help and --version exit 0.
 */
type Run = CliRun<unknown> & { dataDir: string };

/** The command line in a data directory of its own, which the test may then look into. */
async function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "cli-errors-"));
  return { ...(await runCli(args, env, { timeoutMs: 60_000, defaults: { DATA_DIR: dataDir, LOG_LEVEL: "silent" } })), dataDir };
}

/** The one line of a failure, parsed; fails the test when stderr is anything else. */
function failure(r: Run): { error: string; message: string } {
  const lines = r.stderr.trimEnd().split("\n");
  expect(lines, r.stderr).toHaveLength(1);
  expect(r.stdout).toBe("");
  return JSON.parse(lines[0]) as { error: string; message: string };
}

async function expectUsage(args: string[], names: string) {
  const r = await cli(args);
  const f = failure(r);
  expect([r.code, f.error], `cli ${args.join(" ")}`).toEqual([2, "USAGE"]);
  expect(f.message, `cli ${args.join(" ")}`).toContain(names);
  expect(f.message).toContain("--help");
  expect(readdirSync(r.dataDir), "nothing opened in DATA_DIR").toEqual([]);
}

/** Each command with a valid set of its required options. */
const COMMANDS: [string, string[]][] = [
  ["user:create", ["--email", "a@example.com"]],
  ["token:create", ["--email", "a@example.com"]],
  ["user:list", []],
  ["user:delete", ["--email", "a@example.com"]],
  ["token:revoke", ["--id", "tok_x"]],
  ["reports:list", []],
  ["backup:create", ["--out", "b.jsonl.gz"]],
  ["backup:restore", ["--in", "b.jsonl.gz"]],
  ["db:migrate", []],
  ["links:import", ["--email", "a@example.com", "--file", "links.csv"]],
];

describe("the command line's usage errors (exit code 2, one line)", () => {
  it("an unknown command names it", async () => {
    await expectUsage(["links:frobnicate"], "unknown command links:frobnicate");
  });

  it("no command at all says so", async () => {
    await expectUsage([], "no command given");
  });

  it("an unknown option names it, for every command", async () => {
    for (const [command, ok] of COMMANDS) await expectUsage([command, ...ok, "--frobnicate"], "--frobnicate");
  }, 180_000);

  it("a required option left out is named, for every command that has one", async () => {
    for (const [command, ok] of COMMANDS) {
      if (!ok.length) continue;
      await expectUsage([command], `${command} needs ${ok[0]}`);
    }
  }, 180_000);

  it("an option given without its value names the option", async () => {
    await expectUsage(["user:delete", "--email"], "--email");
  });

  it("an option given twice names it", async () => {
    await expectUsage(["user:delete", "--email", "a@example.com", "--email", "b@example.com"], "--email is given more than once");
  });

  it("a value of links:import's --on-conflict or --title-to outside the usage names the option", async () => {
    await expectUsage(["links:import", "--email", "a@example.com", "--file", "links.csv", "--on-conflict", "bogus"], "--on-conflict");
    await expectUsage(["links:import", "--email", "a@example.com", "--file", "links.csv", "--title-to", "bogus"], "--title-to");
  });

  it("a stray argument names it", async () => {
    await expectUsage(["user:list", "extra"], "unexpected argument extra");
  });
});

describe("the command line's other answers", () => {
  it("a configuration error is one line with exit code 1", async () => {
    const r = await cli(["user:list"], { APP_URL: "not a url" });
    const f = failure(r);
    expect([r.code, f.error]).toEqual([1, "CONFIG"]);
    expect(f.message).toContain("APP_URL");
  });

  it("--help after a command prints the help and exits 0", async () => {
    const r = await cli(["user:create", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("exit code 1 (2 for a wrong command line");
    expect(r.stderr).toBe("");
  });

  it("--version exits 0 with the version on stdout", async () => {
    const r = await cli(["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\S+ \d+\.\d+\.\d+\n$/);
  });
});
