import { spawn, execFile, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { freePort } from "../server/test/harness";

export const SCREENSHOTS = path.resolve("e2e/screenshots");

export type Server = { appUrl: string; redirectUrl: string; dataDir: string; env: Record<string, string>; stop(): Promise<void> };

/** The server bundle `npm start` runs (build/server.mjs, built by `npm run test:e2e`), on free ports with a temporary DATA_DIR (PGlite); `extraEnv` adds variables (e.g. DNS_SERVERS). */
export async function startServer(extraEnv: Record<string, string> = {}): Promise<Server> {
  const [appPort, redirectPort] = [await freePort(), await freePort()];
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "e2e-"));
  const env = {
    APP_URL: `http://127.0.0.1:${appPort}`,
    REDIRECT_URL: `http://127.0.0.1:${redirectPort}`,
    DATA_DIR: dataDir,
    LOG_LEVEL: "warn",
    NODE_ENV: "production" as const,
    ...extraEnv,
  };
  const child: ChildProcess = spawn(process.execPath, [path.resolve("build/server.mjs")], {
    env: { ...process.env, ...env, DATABASE_URL: "", REDIS_URL: "", SMTP_URL: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stdout!.on("data", (d) => (log += d));
  child.stderr!.on("data", (d) => (log += d));
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited: ${log}`);
    try {
      if ((await fetch(`${env.APP_URL}/login`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`server did not start: ${log}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    appUrl: env.APP_URL,
    redirectUrl: env.REDIRECT_URL,
    dataDir,
    env,
    async stop() {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await new Promise((r) => child.once("exit", r));
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Headless Chromium says "HeadlessChrome", which the redirect host rightly does not count as a click. */
export const USER_AGENT = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";

export async function launch(): Promise<Browser> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
}

/** Pages that collect CSP violations and uncaught errors, so a test can assert there were none. */
export async function newPage(ctx: BrowserContext): Promise<Page & { problems: string[] }> {
  const page = (await ctx.newPage()) as Page & { problems: string[] };
  page.problems = [];
  page.on("console", (m) => {
    if (m.type() === "error" && /Content Security Policy|Refused to/i.test(m.text())) page.problems.push(m.text());
  });
  page.on("pageerror", (e) => page.problems.push(String(e)));
  return page;
}

/** Waits until the page's React tree has committed (the root layout marks <html>): keys pressed before can reach the browser's own form submission instead of the page's. */
export const hydrated = (page: Page) => page.locator("html[data-hydrated]").waitFor({ state: "attached" });

/** The sign-in code: the only 6-digit number in the newest outbox mail to `email`. */
export async function codeFor(dataDir: string, email: string, after: number): Promise<string> {
  const dir = path.join(dataDir, "outbox");
  const deadline = Date.now() + 10_000;
  for (;;) {
    let files: string[] = [];
    try {
      files = readdirSync(dir);
    } catch {
      // no mail yet
    }
    const mails = files
      .map((f) => JSON.parse(readFileSync(path.join(dir, f), "utf8")) as { to: string; text: string; created_at: number | string })
      .filter((m) => m.to === email && new Date(m.created_at).getTime() >= after - 1000)
      .sort((a, b) => new Date(b.created_at).getTime() - new Date(a.created_at).getTime());
    const code = mails[0]?.text.match(/\b\d{6}\b/)?.[0];
    if (code) return code;
    if (Date.now() > deadline) throw new Error(`no code mailed to ${email}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function signIn(page: Page, server: Server, email: string) {
  await page.goto(`${server.appUrl}/login`);
  const started = Date.now();
  await page.getByLabel("E-mail").fill(email);
  await page.getByRole("button", { name: "Send code" }).click();
  await page.getByLabel("Code").waitFor();
  await page.getByLabel("Code").fill(await codeFor(server.dataDir, email, started));
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/links/);
}

/** The command line (`npm run cli --`) from its bundle, which `npm run test:e2e` builds with the server's. */
export async function cli(server: Server, ...args: string[]): Promise<unknown> {
  const { stdout } = await promisify(execFile)(process.execPath, [path.resolve("build/cli.mjs"), ...args], {
    env: { ...process.env, ...server.env },
  });
  return JSON.parse(stdout);
}

export const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });

/** The invitation link in the newest mail to `to`. */
export async function invitationLink(dataDir: string, to: string): Promise<string> {
  const dir = path.join(dataDir, "outbox");
  const deadline = Date.now() + 10_000;
  for (;;) {
    let files: string[] = [];
    try {
      files = readdirSync(dir);
    } catch {
      // no mail yet
    }
    const mails = files
      .map((f) => JSON.parse(readFileSync(path.join(dir, f), "utf8")) as { to: string; text: string; created_at: number | string })
      .filter((m) => m.to === to && m.text.includes("/invites/"))
      .sort((a, b) => new Date(b.created_at).getTime() - new Date(a.created_at).getTime());
    const url = mails[0]?.text.match(/https?:\/\/\S*\/invites\/[0-9A-Za-z]{32}/)?.[0];
    if (url) return url;
    if (Date.now() > deadline) throw new Error(`no invitation mailed to ${to}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
