// The dashboard's analytics page with a large workspace: its HTML weight and time to answer, and
// the link picker's look-up, at BENCH_LINKS links (default 100,000). Runs the server bundle as
// `npm start` does, on a fresh PostgreSQL database (BENCH_PG_URL, default the local server's
// `postgres` database, used only to create and drop it).
//
//   npx tsx bench/analytics-page.ts            (npm run build first)
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { DEFAULT_ADMIN_URL, withScratchDatabase, type Scratch } from "./scratch";
import { runAsScript } from "./script";
import { startServer } from "./server";
import { summary } from "./load";

const LINKS = Number(process.env.BENCH_LINKS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const ADMIN_URL = process.env.BENCH_PG_URL ?? DEFAULT_ADMIN_URL;

const fmt = (n: number) => n.toLocaleString("en-US", { maximumFractionDigits: 1 });

async function signIn(appUrl: string, dataDir: string, email: string): Promise<string> {
  const started = Date.now();
  const json = { "Content-Type": "application/json", Origin: appUrl };
  const r = await fetch(`${appUrl}/api/auth/start`, { method: "POST", headers: json, body: JSON.stringify({ email }) });
  if (r.status !== 204) throw new Error(`auth/start answered ${r.status}`);
  // The code is usable only with the pending-sign-in cookie the start set.
  const pending =
    r.headers
      .getSetCookie()
      .find((c) => c.startsWith("app_signin="))
      ?.split(";")[0] ?? "";
  let code: string | undefined;
  for (let i = 0; i < 100 && !code; i++) {
    const dir = path.join(dataDir, "outbox");
    let files: string[] = [];
    try {
      files = readdirSync(dir);
    } catch {
      // no mail yet
    }
    for (const f of files) {
      const m = JSON.parse(readFileSync(path.join(dir, f), "utf8")) as { to: string; text: string; created_at: string | number };
      if (m.to === email && new Date(m.created_at).getTime() >= started - 1000) code = /\b\d{6}\b/.exec(m.text)?.[0];
    }
    if (!code) await new Promise((res) => setTimeout(res, 100));
  }
  if (!code) throw new Error("no sign-in code mailed");
  const v = await fetch(`${appUrl}/api/auth/verify`, { method: "POST", headers: { ...json, cookie: pending }, body: JSON.stringify({ email, code }) });
  const cookie = v.headers
    .getSetCookie()
    .find((c) => c.startsWith("app_session="))
    ?.split(";")[0];
  if (!cookie) throw new Error(`auth/verify answered ${v.status} without a session: ${await v.text()} (code ${code})`);
  return cookie;
}

/** `rounds` GETs one after another: p50/p99 in ms and the body's bytes. */
async function time(url: string, cookie: string, rounds = ROUNDS) {
  const ms: number[] = [];
  let bytes = 0;
  let status = 0;
  for (let i = 0; i < rounds + 2; i++) {
    const t0 = performance.now();
    const r = await fetch(url, { headers: { cookie }, redirect: "manual" });
    const body = await r.arrayBuffer();
    if (i >= 2) ms.push(performance.now() - t0); // two warm-up requests
    bytes = body.byteLength;
    status = r.status;
  }
  return { ...summary(Float64Array.from(ms).sort()), bytes, status };
}

async function measure({ url, dataDir, sql }: Scratch) {
  const server = await startServer({ ...process.env, NODE_ENV: "production" }, { dataDir, databaseUrl: url });
  const appUrl = `http://127.0.0.1:${server.appPort}`;
  try {
    const cookie = await signIn(appUrl, dataDir, `bench-analytics-${Date.now()}@example.com`);
    const account = (await (await fetch(`${appUrl}/api/account`, { headers: { cookie } })).json()) as { workspace: { id: string } };
    const ws = account.workspace.id;
    const now = Date.now();
    const t0 = performance.now();
    await sql.unsafe(`
      insert into links (id, workspace_id, slug, url, kind, created_at, updated_at)
      select 'b' || lpad(i::text, 7, '0'), '${ws}', 'bench-' || i, 'https://example.com/landing/' || i, 'link', ${now} - i * 1000, ${now} - i * 1000
      from generate_series(1, ${LINKS}) i`);
    await sql.unsafe(`vacuum analyze links`);
    console.log(`${fmt(LINKS)} links seeded in ${fmt((performance.now() - t0) / 1000)} s`);

    const rows: [string, string][] = [
      ["analytics page, all links, last 30 days", `${appUrl}/analytics`],
      ["analytics page, one link", `${appUrl}/analytics?link=b0000042`],
      ["links list, first page", `${appUrl}/links`],
      ["picker look-up: link.suggest, empty text", `${appUrl}/api/trpc/link.suggest?input=${encodeURIComponent(JSON.stringify({}))}`],
      ["picker look-up: link.suggest, 'bench-4242'", `${appUrl}/api/trpc/link.suggest?input=${encodeURIComponent(JSON.stringify({ q: "bench-4242" }))}`],
      [
        "picker look-up: link.suggest, 'landing/99999' (one match)",
        `${appUrl}/api/trpc/link.suggest?input=${encodeURIComponent(JSON.stringify({ q: "landing/99999" }))}`,
      ],
    ];
    console.log(`\n| ${fmt(LINKS)} links | status | bytes | p50 ms | p99 ms |\n|---|---|---|---|---|`);
    for (const [label, url] of rows) {
      const r = await time(url, cookie);
      console.log(`| ${label} | ${r.status} | ${fmt(r.bytes)} | ${fmt(r.p50)} | ${fmt(r.p99)} |`);
    }
  } finally {
    await server.stop();
  }
}

runAsScript(import.meta.url, () => withScratchDatabase("bench_analytics", ADMIN_URL, measure));
