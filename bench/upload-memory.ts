// `npx tsx bench/upload-memory.ts`: the server's memory while six accounts upload a 19 MB CSV each to
// the dashboard's import form at once (the file form of /links/import, multipart), against the server
// bundle `npm start` runs, on the embedded database. Uploads go to disk as they arrive, so the peak
// resident memory (VmHWM) should stay near what the idle server holds. Prints the idle RSS, the peak
// and the uploads' statuses. Env: BENCH_UPLOADS (6), BENCH_UPLOAD_MB (19).
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort, root } from "./server";

const UPLOADS = Number(process.env.BENCH_UPLOADS ?? 6);
const MB = Number(process.env.BENCH_UPLOAD_MB ?? 19);

const memory = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0);
  return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A CSV of about `mb` megabytes: url,slug rows. */
function csvOf(mb: number): Buffer {
  const rows = ["url,slug"];
  let size = 9;
  for (let i = 0; size < mb * 1024 * 1024; i++) {
    const row = `https://example.com/landing/page/${i}?utm_source=upload-bench,up-${i.toString(36)}`;
    rows.push(row);
    size += row.length + 1;
  }
  return Buffer.from(rows.join("\n") + "\n");
}

function multipart(file: Buffer, boundary = "----uploadb0undary") {
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="format"\r\n\r\nauto\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="links.csv"\r\nContent-Type: text/csv\r\n\r\n`,
  );
  return { body: Buffer.concat([head, file, Buffer.from(`\r\n--${boundary}--\r\n`)]), type: `multipart/form-data; boundary=${boundary}` };
}

async function main() {
  const [appPort, redirectPort] = [await freePort(), await freePort()];
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "bench-upload-"));
  const appUrl = `http://127.0.0.1:${appPort}`;
  const child = spawn(process.execPath, ["--heap-growing-percent=50", "--max-semi-space-size=8", path.join(root, "build/server.mjs")], {
    env: {
      ...process.env,
      APP_URL: appUrl,
      REDIRECT_URL: `http://127.0.0.1:${redirectPort}`,
      DATA_DIR: dataDir,
      LOG_LEVEL: "warn",
      NODE_ENV: "production",
      DATABASE_URL: "",
      REDIS_URL: "",
      SMTP_URL: "",
      LINK_HEALTH_CHECKS: "off",
    },
    stdio: ["ignore", "inherit", "inherit"],
  });
  try {
    for (let i = 0; ; i++) {
      if (i > 360) throw new Error("the server did not start");
      if (
        await fetch(`${appUrl}/login`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      await sleep(250);
    }
    // One account (and so one workspace) per upload: a workspace keeps one staged upload.
    const cookies: string[] = [];
    for (let i = 0; i < UPLOADS; i++) {
      const email = `upload-${i}@bench.test`;
      const start = await fetch(`${appUrl}/api/auth/start`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email }),
      });
      const pending = start.headers
        .getSetCookie()
        .find((c) => c.startsWith("app_signin="))!
        .split(";")[0];
      let code: string | undefined;
      for (let tries = 0; !code && tries < 100; tries++) {
        const dir = path.join(dataDir, "outbox");
        const mails = readdirSync(dir).map((f) => JSON.parse(readFileSync(path.join(dir, f), "utf8")) as { to: string; text: string });
        code = mails.find((m) => m.to === email)?.text.match(/\b\d{6}\b/)?.[0];
        if (!code) await sleep(100);
      }
      const verify = await fetch(`${appUrl}/api/auth/verify`, {
        method: "POST",
        headers: { "content-type": "application/json", cookie: pending },
        body: JSON.stringify({ email, code }),
      });
      cookies.push(
        verify.headers
          .getSetCookie()
          .find((c) => c.startsWith("app_session="))!
          .split(";")[0],
      );
    }
    const form = multipart(csvOf(MB));
    await sleep(2000);
    const idle = memory(child.pid!);
    const t0 = performance.now();
    const statuses = await Promise.all(
      cookies.map((cookie) =>
        fetch(`${appUrl}/links/import`, {
          method: "POST",
          headers: { cookie, "content-type": form.type, origin: appUrl },
          body: form.body,
          redirect: "manual",
        }).then(async (r) => `${r.status}${(await r.text()).includes('name="upload"') ? " staged" : ""}`),
      ),
    );
    const seconds = (performance.now() - t0) / 1000;
    const after = memory(child.pid!);
    console.log(
      `\n| ${UPLOADS} uploads of ${(form.body.length / 1024 / 1024).toFixed(1)} MB at once | answers | seconds | server RSS idle | peak RSS before / after the uploads (VmHWM) | peak − idle |`,
    );
    console.log(`|---|---|---|---|---|---|`);
    console.log(
      `| dashboard import form | ${statuses.join(", ")} | ${seconds.toFixed(1)} | ${idle.rss.toFixed(0)} MB | ${idle.peak.toFixed(0)} / ${after.peak.toFixed(0)} MB | ${(after.peak - idle.rss).toFixed(0)} MB |`,
    );
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
