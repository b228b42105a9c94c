import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
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
      // The README's webhook receiver listens on this machine.
      WEBHOOK_ALLOW_PRIVATE: "true",
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
      const { stdout, stderr } = await promisify(execFile)("bash", ["-c", readmeBlocks()], { env: { ...process.env, ...env }, timeout: 100_000 });
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
      // The second block: pages, a breakdown, a webhook, a scoped token, a retried creation.
      expect(stdout).toMatch(/^links on page 1: 2$/m);
      expect(stdout).toMatch(/^links on page 2: 1, next_cursor null$/m);
      expect(stdout).toMatch(/^\{"by":"country","from":\d+,"to":(\d+|null),"tz":"UTC","total":\{"clicks":\d+,"visitors":\d+\},"rows":\[/m);
      expect(stdout).toMatch(/^\{"by":"day",.*"tz":"Europe\/Berlin"/m);
      expect(stdout).toMatch(/^whsec_[A-Za-z0-9+/=]{32}$/m);
      expect(stdout).toMatch(/^\{"error":"INSUFFICIENT_SCOPE"\}$/m);
      const retried = [...stdout.matchAll(/^created ([0-9a-z]{8})$/gm)].map((m) => m[1]);
      expect(retried).toHaveLength(2);
      expect(retried[0]).toBe(retried[1]);
    }, 120_000);
  }

  it("the README's webhook receiver accepts a delivery signed with the secret and refuses a forged one", async () => {
    const readme = readFileSync("README.md", "utf8");
    const code = /A webhook receiver[\s\S]*?```js\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(code).toBeDefined();
    const port = await freePort();
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "receiver-")), "receiver.mjs");
    writeFileSync(file, code!.replace("listen(8787)", `listen(${port})`));
    const run = (args: string[]) => promisify(execFile)("npm", ["run", "-s", "cli", "--", ...args], { env: { ...process.env, ...env } });
    const email = `hook-${Date.now().toString(36)}@example.com`;
    await run(["user:create", "--email", email]);
    const token = JSON.parse((await run(["token:create", "--email", email])).stdout).token;
    const api = `${env.APP_URL}/api`;
    const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const hook = await (
      await fetch(`${api}/webhooks`, { method: "POST", headers: auth, body: JSON.stringify({ url: `http://127.0.0.1:${port}/`, events: ["link.created"] }) })
    ).json();
    expect(hook.secret).toMatch(/^whsec_/);
    const receiver = spawn("node", [file], { env: { ...process.env, WEBHOOK_SECRET: hook.secret }, stdio: ["ignore", "pipe", "pipe"] });
    try {
      let out = "";
      receiver.stdout!.on("data", (d) => (out += d));
      for (let i = 0; i < 50; i++) {
        try {
          await fetch(`http://127.0.0.1:${port}/`, { method: "GET" });
          break;
        } catch {
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      const forged = await fetch(`http://127.0.0.1:${port}/`, {
        method: "POST",
        headers: { "webhook-id": "msg_1", "webhook-timestamp": String(Math.floor(Date.now() / 1000)), "webhook-signature": "v1,AAAA" },
        body: "{}",
      });
      expect(forged.status).toBe(401);
      const link = await (await fetch(`${api}/links`, { method: "POST", headers: auth, body: JSON.stringify({ url: "https://example.com/hooked" }) })).json();
      for (let i = 0; i < 150 && !out.includes(link.id); i++) await new Promise((r) => setTimeout(r, 100));
      expect(out).toMatch(/^link\.created \{/m);
      expect(out).toContain(link.id);
    } finally {
      receiver.kill();
    }
  }, 60_000);
});
