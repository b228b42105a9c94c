// `npx tsx bench/webhooks.ts`: the webhooks' two targets, on a fresh PostgreSQL database it creates (and drops).
//   1. redirect throughput with one active link.clicked webhook vs none, alternating rounds in one run
//      (target: with ≥ 0.9 × without); the deliveries a round made are all sent before the next round.
//   2. 10,000 clicks → 10,000 deliveries to a local receiver, none lost across a kill -9 of the server
//      while it is delivering (it is started again on the same database and data directory).
// Env: BENCH_DATABASE_URL (admin URL; default postgres://postgres@127.0.0.1:5432/postgres), BENCH_ROUNDS (3),
// BENCH_SECONDS (5), BENCH_CONNECTIONS (50), BENCH_LINKS (1000), BENCH_CLICKS (10000), BENCH_ONLY (throughput,crash),
// BENCH_DRAIN_SECONDS (600: how long a round's deliveries may take to be sent before the next round).
import { execSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { links, webhooks } from "../db/schema";
import { newLinkId } from "../server/lib/ids";
import { createUserWithWorkspace } from "../server/lib/users";
import { PEOPLE } from "../server/redirect/ua-fixtures";
import { runLoad, slugRequest } from "./load";
import { f, machine } from "./report";
import { DEFAULT_ADMIN_URL, withScratchDatabase, type Scratch } from "./scratch";
import { runAsScript } from "./script";
import { insertLinks, linkRows } from "./seed";
import { forkBench, root, sleep, startServer, stopWithin, type Server } from "./server";

const env = process.env;
const ROUNDS = Number(env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 50);
const LINKS = Number(env.BENCH_LINKS ?? 1000);
const CLICKS = Number(env.BENCH_CLICKS ?? 10_000);
const DRAIN_MS = Number(env.BENCH_DRAIN_SECONDS ?? 600) * 1000;
const ONLY = env.BENCH_ONLY ? new Set(env.BENCH_ONLY.split(",")) : null;
const on = (s: string) => !ONLY || ONLY.has(s);
const ADMIN_URL = env.BENCH_DATABASE_URL ?? DEFAULT_ADMIN_URL;
const UA = PEOPLE.windowsChrome;

type Counts = { received: number; ids: number; clicks: number };

async function startReceiver() {
  const { child, ready, ask } = await forkBench<{ port: number }>("webhooks-receiver.ts");
  return {
    child,
    url: `http://127.0.0.1:${ready.port}/hook`,
    count: () => ask<Counts>("count"),
    reset: (linkId = "") => ask<Counts>(linkId ? `link:${linkId}` : "reset"),
  };
}

async function measure({ url, dataDir, sql, open }: Scratch) {
  const database = await open(2);
  const receiver = await startReceiver();
  const children: ChildProcess[] = [receiver.child];
  let server: Server | undefined;
  const serverEnv = { ...env, WEBHOOK_ALLOW_PRIVATE: "true" };
  const start = async () => {
    server = await startServer(serverEnv, { dataDir, databaseUrl: url });
    children.push(server.child);
    return server;
  };
  const pending = async () => Number((await sql`select count(*)::int as n from webhook_deliveries where status = 'pending'`)[0].n);
  const drained = async (ms: number) => {
    const until = Date.now() + ms;
    while ((await pending()) > 0 && Date.now() < until) await sleep(200);
    return (await pending()) === 0;
  };
  try {
    const now = Date.now();
    const user = await createUserWithWorkspace(database.db, { email: `bench-${randomBytes(4).toString("hex")}@example.com`, plan: "pro" });
    const rows = linkRows(LINKS, user.workspaceId, (i) => ({ slug: `wh-${i}`, url: `https://example.com/landing/${i}` }), now);
    await insertLinks(database.db, rows);
    const webhookId = newLinkId();
    await database.db.insert(webhooks).values({
      id: webhookId,
      workspaceId: user.workspaceId,
      url: receiver.url,
      events: ["link.clicked"],
      active: false,
      secret: `whsec_${randomBytes(24).toString("base64")}`,
      createdAt: now,
      updatedAt: now,
    });
    const setActive = (active: boolean) => sql`update webhooks set active = ${active} where id = ${webhookId}`;
    const s = await start();
    const host = `127.0.0.1:${s.redirectPort}`;
    const slugs = rows.map((r) => r.slug);

    if (on("throughput")) {
      console.log(`\n== redirects with one link.clicked webhook vs none (${ROUNDS} rounds of ${SECONDS} s each, ${CONNECTIONS} connections)`);
      await runLoad({ host: "127.0.0.1", port: s.redirectPort, connections: CONNECTIONS, seconds: 2, request: slugRequest(host, slugs, UA) });
      const rps = { with: [] as number[], without: [] as number[] };
      for (let round = 0; round < ROUNDS; round++) {
        // Alternating which goes first, so a drift of the machine's load favours neither.
        for (const mode of round % 2 ? (["with", "without"] as const) : (["without", "with"] as const)) {
          await setActive(mode === "with");
          await receiver.reset();
          const r = await runLoad({
            host: "127.0.0.1",
            port: s.redirectPort,
            connections: CONNECTIONS,
            seconds: SECONDS,
            request: slugRequest(host, slugs, UA),
          });
          const ok = r.statuses.get(301) ?? 0;
          rps[mode].push(ok / r.seconds);
          // Every delivery of the round is sent before the next round starts.
          const done = await drained(DRAIN_MS);
          const got = await receiver.count();
          console.log(
            `  round ${round + 1} ${mode.padEnd(7)}: ${f(ok / r.seconds)} redirects/s (${f(ok)} answered, ${r.errors} errors)` +
              (mode === "with" ? `; ${f(got.received)} deliveries received${done ? "" : `, some still pending after ${DRAIN_MS / 1000} s`}` : ""),
          );
        }
      }
      const sum = (a: number[]) => a.reduce((x, y) => x + y, 0);
      const ratio = sum(rps.with) / sum(rps.without);
      console.log(`  with / without: ${f(ratio, 3)}  (target ≥ 0.9${ratio >= 0.9 ? ", met" : ", NOT MET"})`);
    }

    if (on("crash")) {
      console.log(`\n== ${f(CLICKS)} clicks → ${f(CLICKS)} deliveries across a kill -9 of the server`);
      await setActive(true);
      await drained(120_000);
      await receiver.reset();
      // A link of its own, so its clicks are only these.
      const target = {
        id: newLinkId(),
        workspaceId: user.workspaceId,
        slug: "wh-crash",
        url: "https://example.com/crash",
        createdAt: Date.now(),
        updatedAt: Date.now(),
      };
      await database.db.insert(links).values(target);
      await receiver.reset(target.id);
      const t0 = performance.now();
      const load = await runLoad({
        host: "127.0.0.1",
        port: s.redirectPort,
        connections: 20,
        maxRequests: CLICKS,
        request: () => `GET /${target.slug} HTTP/1.1\r\nHost: ${host}\r\nUser-Agent: ${UA}\r\nConnection: keep-alive\r\n\r\n`,
      });
      const answered = load.statuses.get(301) ?? 0;
      console.log(`  ${f(answered)} clicks answered 301 in ${f(load.seconds, 1)} s (${load.errors} errors)`);
      // Kill it while it is delivering: some deliveries sent, some claimed, most waiting.
      let seen = await receiver.count();
      const killBy = Date.now() + 60_000;
      while (seen.received < Math.min(2000, CLICKS / 5) && Date.now() < killBy) {
        await sleep(20);
        seen = await receiver.count();
      }
      s.child.kill("SIGKILL");
      await new Promise((r) => s.child.once("exit", r));
      const atKill = await receiver.count();
      const killedAt = (performance.now() - t0) / 1000;
      console.log(`  kill -9 at ${f(killedAt, 1)} s, after ${f(atKill.received)} deliveries received (${f(atKill.clicks)} distinct clicks)`);
      const restarted = await start();
      console.log(`  started again in ${f(restarted.startMs / 1000, 1)} s`);
      const until = Date.now() + 300_000;
      let got = await receiver.count();
      let mostAt = 0;
      while (got.clicks < answered && Date.now() < until) {
        await sleep(250);
        got = await receiver.count();
        // All but the few claimed when it died, which wait for their lease to run out.
        if (!mostAt && got.clicks >= answered - 64) mostAt = (performance.now() - t0) / 1000;
      }
      if (mostAt) console.log(`  all but the last 64 delivered at ${f(mostAt, 1)} s`);
      const seconds = (performance.now() - t0) / 1000;
      const stored = Number((await sql`select count(*)::int as n from clicks where link_id = ${target.id}`)[0].n);
      const statuses = await sql`select status, count(*)::int as n from webhook_deliveries d where d.payload->>'link_id' = ${target.id} group by 1 order by 1`;
      console.log(
        `  clicks stored: ${f(stored)}; distinct clicks delivered: ${f(got.clicks)} of ${f(answered)} (lost: ${f(answered - got.clicks)}), ` +
          `requests received: ${f(got.received)} (${f(got.received - got.ids)} repeated after the crash, same webhook-id), ${f(seconds, 1)} s from the first click`,
      );
      console.log(`  deliveries by status: ${statuses.map((r) => `${r.status} ${f(Number(r.n))}`).join(", ")}`);
      console.log(`  none lost: ${got.clicks === answered && stored === answered ? "yes" : "NO"}`);
    }
  } finally {
    receiver.child.kill(); // SIGTERM: tsx passes it on to the receiver's process
    const last = server;
    if (last) await stopWithin(last);
    for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  }
}

runAsScript(import.meta.url, async () => {
  execSync("node scripts/ensure-build.mjs", { cwd: root, stdio: "inherit" });
  console.log(machine());
  await withScratchDatabase("bench_wh", ADMIN_URL, measure);
});
