import { execFile, spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../test/harness";
import { tempDataDir } from "../../db/test-db";

/**
 * The README's "API in five requests" is pasted as it is into a shell against a fresh
 * `npm start`, twice, and every answer is what the README says.
 */
function readmeBlocks(): string {
  const readme = readFileSync("README.md", "utf8");
  const section = readme.slice(readme.indexOf("## The API in five requests"), readme.indexOf("### TypeScript"));
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
  expect(blocks.length).toBeGreaterThanOrEqual(2);
  return blocks.join("\n");
}

describe("README: the API in five requests", () => {
  let child: ChildProcess | undefined;
  let env: Record<string, string>;
  beforeAll(async () => {
    const [appPort, redirectPort] = [await freePort(), await freePort()];
    env = {
      APP_URL: `http://localhost:${appPort}`,
      REDIRECT_URL: `http://localhost:${redirectPort}`,
      DATA_DIR: tempDataDir(),
      LOG_LEVEL: "warn",
      DATABASE_URL: "",
      REDIS_URL: "",
      SMTP_URL: "",
    };
    child = spawn("npm", ["start"], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let out = "";
    child.stdout!.on("data", (d) => (out += d));
    child.stderr!.on("data", (d) => (out += d));
    const deadline = Date.now() + 90_000;
    for (;;) {
      try {
        if ((await fetch(`${env.APP_URL}/api/openapi.json`)).ok && (await fetch(`${env.REDIRECT_URL}/_/health`)).ok) break;
      } catch {
        // not listening yet
      }
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not come up: ${out}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }, 120_000);
  afterAll(() => {
    try {
      if (child?.pid) process.kill(-child.pid, "SIGTERM");
    } catch {
      // already gone
    }
  });

  const slugs: string[] = [];
  for (const run of [1, 2]) {
    it(`pasted into a shell (run ${run}), every request answers as the README says`, async () => {
      const { stdout, stderr } = await promisify(execFile)("bash", ["-c", readmeBlocks()], { env: { ...process.env, ...env }, timeout: 60_000 });
      const created = /^\{"id":"([0-9a-z]{8})","slug":"(launch-[0-9a-z]+)".*"short_url":"([^"]+)"/m.exec(stdout);
      expect(created, stdout).not.toBeNull();
      const [, id, slug, short] = created!;
      expect(short).toBe(`${env.REDIRECT_URL}/${slug}`);
      expect(slugs).not.toContain(slug);
      slugs.push(slug);
      expect(stdout).toMatch(new RegExp(`^\\{"links":\\[\\{"id":"${id}"`, "m"));
      expect(stdout).toMatch(new RegExp(`^\\{"id":"${id}".*"expires_at":\\d{13},"expiration_url":"https://example.com/over"`, "m"));
      expect(stdout).toMatch(/^301 https:\/\/example\.com\/launch\?utm_source=mail$/m);
      expect(stdout, "the browser-like visit is counted").toMatch(/^\{"count":1,"clicks":\[\{/m);
      expect(stdout).toMatch(/^204$/m);
      expect(stdout).toMatch(/^\{"error":"INVALID_LINK_ID","fields":\{/m);
      expect(stdout + stderr).not.toContain("undefined");
      expect(stderr).not.toContain("no token");
      if (run === 2) expect(stderr).toContain("EMAIL_IN_USE");
    }, 90_000);
  }
});
