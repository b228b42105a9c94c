import { spawn, type ChildProcess } from "node:child_process";
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../test/harness";
import { tempDataDir } from "../../db/test-db";

/**
 * A process manager signals the process it started, `npm start` itself. SIGTERM or
 * SIGINT to it must drain the server and free its ports, and npm must exit 0.
 */
const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect(port, "127.0.0.1");
    s.once("connect", () => (s.destroy(), resolve(false)));
    s.once("error", () => resolve(true));
  });

async function answers(url: string) {
  try {
    return (await fetch(url)).ok;
  } catch {
    return false;
  }
}

describe("npm start", () => {
  let child: ChildProcess | undefined;
  afterEach(() => {
    // Whatever the outcome, nothing of this test keeps running: npm leads its own process group.
    try {
      if (child?.pid) process.kill(-child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  });

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`${signal} to the npm process stops the server, frees its ports and exits 0`, async () => {
      const [appPort, redirectPort] = [await freePort(), await freePort()];
      child = spawn("npm", ["start"], {
        // The default set-up of `npm start`: embedded PGlite in a fresh DATA_DIR.
        env: {
          ...process.env,
          APP_URL: `http://127.0.0.1:${appPort}`,
          REDIRECT_URL: `http://127.0.0.1:${redirectPort}`,
          DATA_DIR: tempDataDir(),
          LOG_LEVEL: "info",
          DATABASE_URL: "",
          REDIS_URL: "",
          SMTP_URL: "",
        },
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      });
      let out = "";
      child.stdout!.on("data", (d) => (out += d));
      child.stderr!.on("data", (d) => (out += d));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child!.once("exit", (code, sig) => resolve({ code, signal: sig })),
      );

      const deadline = Date.now() + 90_000;
      while (!((await answers(`http://127.0.0.1:${redirectPort}/_/health`)) && (await answers(`http://127.0.0.1:${appPort}/api/openapi.json`)))) {
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not come up: ${out}`);
        await new Promise((r) => setTimeout(r, 250));
      }

      process.kill(child.pid!, signal); // the npm process only, as a process manager does
      const result = await Promise.race([exited, new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 20_000))]);
      expect(result, out).toEqual({ code: 0, signal: null });
      expect(out).toContain('"draining"');
      expect(out).toContain('"stopped"');
      expect(await refused(appPort), `port ${appPort} still answers`).toBe(true);
      expect(await refused(redirectPort), `port ${redirectPort} still answers`).toBe(true);
    }, 120_000);
  }
});
