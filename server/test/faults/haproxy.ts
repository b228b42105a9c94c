import { execFileSync, spawn, spawnSync } from "node:child_process";
import path from "node:path";
import { freePort } from "../harness";
import { sleep } from "./instances";

const onPath = (bin: string) => spawnSync("sh", ["-c", `command -v ${bin}`]).status === 0;

/**
 * A program from the machine's package manager (Debian's `haproxy`, `caddy`): present, installed now
 * (root with apt-get), or the reason it is not, for the skip message.
 */
export function ensurePackage(bin: string, pkg = bin): { ok: true } | { ok: false; why: string } {
  if (onPath(bin)) return { ok: true };
  if (process.getuid?.() !== 0)
    return { ok: false, why: `${bin} is not installed and the test does not run as root (install Debian's package: apt-get install -y ${pkg})` };
  if (!onPath("apt-get")) return { ok: false, why: `${bin} is not installed and there is no apt-get to install it with` };
  try {
    execFileSync("apt-get", ["install", "-y", "--no-install-recommends", pkg], { stdio: "ignore", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  } catch (e) {
    return { ok: false, why: `apt-get install ${pkg} failed: ${(e as Error).message}` };
  }
  return onPath(bin) ? { ok: true } : { ok: false, why: `apt-get installed no ${bin} binary` };
}

export const ensureHaproxy = () => ensurePackage("haproxy");

export type Balancer = { app: string; redirect: string; output: string[]; stop(): Promise<void> };

/** deploy/haproxy.cfg as a child process (`-db`: foreground), in front of two instances' ports. */
export async function startHaproxy(boxes: [{ app: number; redirect: number }, { app: number; redirect: number }]): Promise<Balancer> {
  const [appPort, redirectPort] = [await freePort(), await freePort()];
  const env = {
    ...process.env,
    LB_APP_BIND: `127.0.0.1:${appPort}`,
    LB_REDIRECT_BIND: `127.0.0.1:${redirectPort}`,
    BOX1_ADDR: "127.0.0.1",
    BOX1_APP_PORT: String(boxes[0].app),
    BOX1_REDIRECT_PORT: String(boxes[0].redirect),
    BOX2_ADDR: "127.0.0.1",
    BOX2_APP_PORT: String(boxes[1].app),
    BOX2_REDIRECT_PORT: String(boxes[1].redirect),
  };
  const proc = spawn("haproxy", ["-f", path.resolve("deploy/haproxy.cfg"), "-db"], { env, stdio: ["ignore", "pipe", "pipe"] });
  const output: string[] = [];
  proc.stdout!.on("data", (d) => output.push(String(d)));
  proc.stderr!.on("data", (d) => output.push(String(d)));
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  const lb: Balancer = {
    app: `http://127.0.0.1:${appPort}`,
    redirect: `http://127.0.0.1:${redirectPort}`,
    output,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
      await exited;
    },
  };
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`haproxy exited ${proc.exitCode}:\n${output.join("")}`);
    try {
      if ((await fetch(`${lb.redirect}/_/health`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await lb.stop();
      throw new Error(`haproxy did not answer:\n${output.join("")}`);
    }
    await sleep(100);
  }
  return lb;
}
