// The in-process benches: slug allocation and click ingestion, straight against PostgreSQL.
import { count, countDistinct, eq } from "drizzle-orm";
import type { Database } from "../db/client";
import { clicks, links } from "../db/schema";
import { parseConfig } from "../server/config";
import { pickFreeSlug } from "../server/lib/slugs";
import { insertLink } from "../server/routers/links/links.service";
import { createServices } from "../server/core/services";
import { startClickRecorder } from "../server/core/clicks";
import { PEOPLE } from "../server/redirect/ua-fixtures";
import { summary } from "./load";

/**
 * The app's services in this process, on the bench's database, without their own click recorder:
 * an in-process bench calls what it measures itself.
 */
export async function inProcessServices(database: Database, databaseUrl: string, dataDir: string, env: Record<string, string> = {}) {
  const config = parseConfig({
    APP_URL: "http://127.0.0.1:1",
    REDIRECT_URL: "http://127.0.0.1:2",
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    LOG_LEVEL: "error",
    ...env,
  });
  const app = await createServices(config, database);
  await app.clicks?.close();
  return app;
}

/** pickFreeSlug latency (sequential) and concurrent inserts with generated slugs (none twice). */
export async function benchSlugs(database: Database, o: { picks: number; workers: number; perWorker: number }) {
  const { db } = database;
  for (let i = 0; i < 50; i++) await pickFreeSlug(db); // warm the pool and the plan cache
  const lat: number[] = [];
  for (let i = 0; i < o.picks; i++) {
    const t = performance.now();
    await pickFreeSlug(db);
    lat.push(performance.now() - t);
  }
  const pick = summary(lat);
  const insLat: number[] = [];
  const made: string[] = [];
  await Promise.all(
    Array.from({ length: o.workers }, async () => {
      for (let i = 0; i < o.perWorker; i++) {
        const t = performance.now();
        const row = await insertLink(db, { workspaceId: "slugs", url: "https://example.com/generated" });
        insLat.push(performance.now() - t);
        made.push(row.slug);
      }
    }),
  );
  const insert = summary(insLat);
  const distinct = new Set(made).size;
  const [{ live }] = await database.db
    .select({ live: countDistinct(links.slug) })
    .from(links)
    .where(eq(links.workspaceId, "slugs"));
  const [{ rows }] = await database.db.select({ rows: count() }).from(links).where(eq(links.workspaceId, "slugs"));
  return { pick, insert, made: made.length, distinct, allFourChars: made.every((s) => /^[0-9a-z]{4}$/.test(s)), uniqueInDb: live === rows };
}

/**
 * The click recorder on its own: a burst of `n` visits offered far faster than any database
 * takes them (chunks of `chunk` per event-loop turn), until all are stored. Memory is the
 * process's peak RSS and the recorder's peak in-memory buffer.
 */
export async function benchIngest(databaseUrl: string, dataDir: string, o: { n: number; chunk: number; publicIps: boolean }) {
  const { openDatabase } = await import("../db/client");
  const database = await openDatabase({ databaseUrl, migrate: false });
  const app = await inProcessServices(database, databaseUrl, dataDir, { EDGE_HEADERS: "none" });
  const linkId = "ingest01";
  const [{ before }] = await app.db.select({ before: count() }).from(clicks).where(eq(clicks.linkId, linkId));
  const rec = startClickRecorder(app);
  // Visitors from a spread of public addresses and a few browsers, as a real burst would be.
  const agents = Object.values(PEOPLE);
  // Public addresses need a GeoIP lookup in the writer; private ones (or an edge's headers) don't.
  const ips = Array.from({ length: 2000 }, (_, i) =>
    o.publicIps ? `${(i % 200) + 20}.${(i * 7) % 250}.${(i * 13) % 250}.${(i % 250) + 1}` : `10.${i % 250}.${(i * 7) % 250}.${(i % 200) + 1}`,
  );
  global.gc?.();
  const rss0 = process.memoryUsage().rss;
  let peakRss = rss0;
  let peakBuffered = 0;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    peakBuffered = Math.max(peakBuffered, rec.buffered);
  }, 20);
  const t0 = performance.now();
  for (let i = 0; i < o.n;) {
    const end = Math.min(o.n, i + o.chunk);
    for (; i < end; i++) {
      rec.recordVisit({
        linkId,
        workspaceId: "ingest",
        timestamp: Date.now(),
        userAgent: agents[i % agents.length],
        ip: ips[i % ips.length],
        referer: null,
        rule: "url",
        edge: null,
      });
    }
    peakBuffered = Math.max(peakBuffered, rec.buffered);
    await new Promise((r) => setImmediate(r));
  }
  const offeredMs = performance.now() - t0;
  await rec.flush();
  while (rec.buffered > 0) await rec.flush();
  const ms = performance.now() - t0;
  clearInterval(sampler);
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  await rec.close();
  const [{ after }] = await app.db.select({ after: count() }).from(clicks).where(eq(clicks.linkId, linkId));
  await app.limits.close();
  app.mail.close();
  await database.close();
  return {
    n: o.n,
    stored: Number(after) - Number(before),
    perSecond: o.n / (ms / 1000),
    offeredPerSecond: o.n / (offeredMs / 1000),
    peakRssMb: peakRss / 2 ** 20,
    rssGrowthMb: (peakRss - rss0) / 2 ** 20,
    peakBuffered,
  };
}
