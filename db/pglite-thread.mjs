// @ts-check
// The embedded database's own thread (db/pglite-remote.ts is the other end). PGlite is PostgreSQL
// compiled to WebAssembly: every statement runs synchronously in the thread that holds it, so in the
// server's thread a batch of clicks stalled every redirect waiting behind it. Here it stalls nobody.
// Plain JavaScript: a worker thread starts without the TypeScript loader (tsx, Vitest).
import { parentPort, workerData } from "node:worker_threads";
import { PGlite, types } from "@electric-sql/pglite";

if (!parentPort) throw new Error("pglite-thread.mjs runs as a worker thread");
const port = parentPort;

/** drizzle keeps dates, intervals and numeric arrays as PostgreSQL's text (drizzle-orm/pglite/session.js). */
const drizzleParsers = Object.fromEntries(
  [types.TIMESTAMP, types.TIMESTAMPTZ, types.INTERVAL, types.DATE, 1231, 1115, 1185, 1187, 1182].map((t) => [t, (/** @type {string} */ v) => v]),
);

const { dir, loadDataDir } = /** @type {{ dir: string, loadDataDir?: ArrayBuffer }} */ (workerData);
const db = await PGlite.create(dir, loadDataDir ? { loadDataDir: new Blob([loadDataDir]) } : {});

/** Open transactions by id: the handle PGlite gave the callback, and how to end it. */
const open = new Map();

/** @param {unknown} e */
function plainError(e) {
  if (!(e instanceof Error)) return { message: String(e) };
  // PGlite's DatabaseError carries code, detail, constraint…: the callers read them (unique violations).
  /** @type {Record<string, unknown>} */
  const out = { message: e.message, name: e.name };
  for (const [k, v] of Object.entries(e)) if (v === undefined || typeof v !== "object" || v === null) out[k] = v;
  return out;
}

/**
 * @param {{ text: string, params?: unknown[], raw?: boolean, tx?: number }} m
 */
function runQuery(m) {
  const target = m.tx === undefined ? db : open.get(m.tx)?.handle;
  if (!target) throw new Error(`transaction ${m.tx} is not open`);
  return target.query(
    m.text,
    m.params ?? [],
    m.raw ? { rowMode: m.rowMode ?? "object", parsers: drizzleParsers } : m.rowMode ? { rowMode: m.rowMode } : undefined,
  );
}

/** @param {any} m */
async function handle(m) {
  switch (m.op) {
    case "query": {
      const r = await runQuery(m);
      return { rows: r.rows, fields: r.fields, affectedRows: r.affectedRows };
    }
    case "begin":
      return new Promise((begun, failed) => {
        let started = false;
        db.transaction(
          (handle) =>
            new Promise((commit, rollback) => {
              open.set(m.tx, { handle, commit, rollback });
              started = true;
              begun(undefined);
            }),
        ).then(
          () => open.get(m.tx)?.ended?.(undefined),
          (e) => {
            const t = open.get(m.tx);
            if (!started) failed(e);
            else if (t?.failed) t.failed(e);
          },
        );
      }).then(() => undefined);
    case "end": {
      const t = open.get(m.tx);
      if (!t) throw new Error(`transaction ${m.tx} is not open`);
      const done = new Promise((ended, failed) => Object.assign(t, { ended, failed }));
      if (m.commit) t.commit();
      else t.rollback(Object.assign(new Error("rolled back"), { rolledBack: true }));
      try {
        await done;
      } catch (e) {
        if (!(/** @type {any} */ (e)?.rolledBack)) throw e;
      } finally {
        open.delete(m.tx);
      }
      return undefined;
    }
    case "copyThen":
      await db.transaction(async (tx) => {
        await tx.query(`copy ${m.table} (${m.columns.join(", ")}) from '/dev/blob' with (format csv)`, [], { blob: new Blob([m.csv]) });
        await tx.query(m.then.text, m.then.params);
      });
      return undefined;
    case "listen":
      await db.listen(m.channel, (payload) => port.postMessage({ channel: m.channel, payload }));
      return undefined;
    case "dump": {
      const blob = await db.dumpDataDir(m.compression ?? "gzip");
      return await blob.arrayBuffer();
    }
    case "close":
      await db.close();
      return undefined;
    default:
      throw new Error(`unknown operation ${m.op}`);
  }
}

port.on("message", (/** @type {any} */ m) => {
  handle(m).then(
    (result) => port.postMessage({ id: m.id, result }, result instanceof ArrayBuffer ? [result] : []),
    (e) => port.postMessage({ id: m.id, error: plainError(e) }),
  );
});
port.postMessage({ ready: true });
