// The public page of a 50-item linktree, with every cache warm (the page's link record found in the
// link cache and its rendering kept after the first visit): p50/p99 of one visit at a time over
// loopback, an upper bound of the server's time, and the server process's CPU per visit. Target: p50
// at most 5 ms. Beside it, a bare node:http server answering the same bytes from memory
// (bench/bare-page-server.ts), in alternating rounds, so the ratio of the two is judged under the
// same load. Runs the server bundle as `npm start` does, on a fresh PostgreSQL database (BENCH_PG_URL,
// default the local server's `postgres` database, used only to create and drop it).
//
//   npx tsx bench/linktree.ts            (npm run build first; BENCH_ROUNDS visits, default 2,000;
//                                         BENCH_PROFILE=dir writes a CPU profile of the server)
//   `npm run bench` runs it too (BENCH_ONLY=linktree for this section alone).
import path from "node:path";
import { createUserWithWorkspace, issueToken } from "../server/lib/users";
import { summary } from "./load";
import { f, loadPerCores } from "./report";
import { DEFAULT_ADMIN_URL, withScratchDatabase, type Scratch } from "./scratch";
import { runAsScript } from "./script";
import { cpuMs, startBareServer, startServer } from "./server";

export const LINKTREE_ITEMS = 50;
export const LINKTREE_TARGET_MS = 5;
const WARMUP = 200;
/** Rounds of visits, alternating the service and the bare server. */
const SLICES = 4;
const UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";

export type LinktreeBench = { visits: number; bytes: number; p50: number; p99: number; cpuMs: number; bareP50: number; bareP99: number };

/** A bare node:http server answering these bytes and headers, as a child process. */
const startBarePage = (dir: string, page: { headers: Record<string, string>; body: string }) =>
  startBareServer("bare-page-server.ts", path.join(dir, "page.json"), page);

type LinktreeOptions = { adminUrl: string; visits: number; env?: NodeJS.ProcessEnv; profileDir?: string };

export const benchLinktreePage = (opts: LinktreeOptions) => withScratchDatabase("bench_linktree", opts.adminUrl, (s) => measure(opts, s));

async function measure(opts: LinktreeOptions, { url, dataDir, open }: Scratch): Promise<LinktreeBench> {
  const server = await startServer({ ...(opts.env ?? process.env), NODE_ENV: "production" }, { dataDir, databaseUrl: url, profileDir: opts.profileDir });
  const database = await open(2);
  let bare: Awaited<ReturnType<typeof startBarePage>> | undefined;
  try {
    const user = await createUserWithWorkspace(database.db, { email: "linktree@bench.test", plan: "pro" });
    const token = (await issueToken(database.db, user.id, "bench")).token;
    const api = async (method: string, p: string, json: unknown) => {
      const r = await fetch(`http://127.0.0.1:${server.appPort}/api${p}`, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(json),
      });
      if (r.status >= 300) throw new Error(`${method} ${p} answered ${r.status}: ${await r.text()}`);
      return (await r.json()) as { id: string };
    };
    const slug = "bench-page";
    const tree = await api("POST", "/linktrees", {
      slug,
      title: "Bench page",
      bio: "Fifty entries, a theme and every social platform",
      theme: "soft",
      button_style: "pill",
      socials: [
        { platform: "instagram", url: "https://instagram.com/bench" },
        { platform: "github", url: "https://github.com/bench" },
        { platform: "linkedin", url: "https://www.linkedin.com/in/bench" },
        { platform: "email", url: "mailto:bench@example.com" },
      ],
    });
    for (let i = 0; i < LINKTREE_ITEMS; i++) {
      const body = i % 10 === 0 ? { kind: "heading", title: `Section ${i / 10 + 1}` } : { title: `Entry ${i}`, url: `https://example.com/entry/${i}` };
      await api("POST", `/linktrees/${tree.id}/items`, body);
    }
    await api("PATCH", `/linktrees/${tree.id}`, { published: true });

    const first = await fetch(`http://127.0.0.1:${server.redirectPort}/${slug}`, { headers: { "user-agent": UA } });
    const page = { headers: {} as Record<string, string>, body: await first.text() };
    first.headers.forEach((v, k) => {
      if (!["content-length", "date", "connection", "keep-alive"].includes(k)) page.headers[k] = v;
    });
    bare = await startBarePage(dataDir, page);
    const visitor = (url: string) => async () => {
      const r = await fetch(url, { headers: { "user-agent": UA } });
      const body = await r.text();
      if (r.status !== 200) throw new Error(`${url} answered ${r.status}`);
      return body.length;
    };
    const service = visitor(`http://127.0.0.1:${server.redirectPort}/${slug}`);
    const yardstick = visitor(`http://127.0.0.1:${bare.port}/${slug}`);
    for (let i = 0; i < WARMUP; i++) {
      await service();
      await yardstick();
    }

    const perSlice = Math.ceil(opts.visits / SLICES);
    const ms: number[] = [];
    const bareMs: number[] = [];
    let bytes = 0;
    let cpu = 0;
    for (let s = 0; s < SLICES; s++) {
      const cpu0 = cpuMs(server.child.pid!);
      for (let i = 0; i < perSlice; i++) {
        const t0 = performance.now();
        bytes = await service();
        ms.push(performance.now() - t0);
      }
      cpu += cpuMs(server.child.pid!) - cpu0;
      for (let i = 0; i < perSlice; i++) {
        const t0 = performance.now();
        await yardstick();
        bareMs.push(performance.now() - t0);
      }
    }
    const s = summary(ms);
    const b = summary(bareMs);
    return { visits: ms.length, bytes, p50: s.p50, p99: s.p99, cpuMs: cpu / ms.length, bareP50: b.p50, bareP99: b.p99 };
  } finally {
    bare?.child.kill("SIGTERM");
    await server.stop();
  }
}

runAsScript(import.meta.url, async () => {
  const r = await benchLinktreePage({
    adminUrl: process.env.BENCH_PG_URL ?? DEFAULT_ADMIN_URL,
    visits: Number(process.env.BENCH_ROUNDS ?? 2_000),
    profileDir: process.env.BENCH_PROFILE,
  });
  const met = r.p50 <= LINKTREE_TARGET_MS;
  console.log(
    `\n| linktree public page, ${LINKTREE_ITEMS} items, caches warm | bytes | p50 ms | p99 ms | server CPU ms per visit | bare node:http p50 / p99 ms | p50 service/bare | target | load |`,
  );
  console.log(`|---|---|---|---|---|---|---|---|---|`);
  console.log(
    `| ${r.visits} visits, one at a time | ${r.bytes} | ${f(r.p50, 2)} | ${f(r.p99, 2)} | ${f(r.cpuMs, 2)} | ${f(r.bareP50, 2)} / ${f(r.bareP99, 2)} | ${f(r.p50 / r.bareP50, 2)} | p50 ≤ ${LINKTREE_TARGET_MS} ms: ${met ? "met" : "NOT MET"} | ${loadPerCores()} |`,
  );
});
