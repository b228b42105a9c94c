import { Worker } from "node:worker_threads";

/** What drizzle-orm/pglite and this project call on a PGlite instance; served by a worker thread. */
export type RemoteResult = { rows: unknown[]; fields: { name: string; dataTypeID: number }[]; affectedRows?: number };
type QueryOptions = { rowMode?: "array" | "object"; parsers?: unknown };
type Queryable = { query(text: string, params?: unknown[], opts?: QueryOptions): Promise<RemoteResult> };

type Pending = { resolve(v: unknown): void; reject(e: unknown): void };

/**
 * The embedded database (PGlite) in a worker thread of its own (db/pglite-thread.mjs), with the
 * part of PGlite's interface that drizzle uses: query, transaction. Statements run there; this
 * thread only posts them and their answers, so a long statement (a batch of clicks, an import)
 * no longer holds up every request. A transaction keeps PGlite's lock in the worker until this
 * side commits or rolls back, exactly as in one thread.
 */
export class RemotePglite implements Queryable {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners = new Map<string, Set<(payload: string) => void>>();
  private nextId = 1;
  private nextTx = 1;
  private dead: Error | undefined;

  private constructor(worker: Worker) {
    this.worker = worker;
    worker.on("message", (m: { id?: number; result?: unknown; error?: Record<string, unknown>; channel?: string; payload?: string }) => {
      if (m.channel !== undefined) {
        for (const cb of this.listeners.get(m.channel) ?? []) cb(m.payload ?? "");
        return;
      }
      const p = m.id === undefined ? undefined : this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id!);
      if (!this.pending.size) worker.unref();
      if (m.error) p.reject(Object.assign(new Error(String(m.error.message)), m.error));
      else p.resolve(m.result);
    });
    const fail = (e: Error) => {
      // The database is gone (the worker crashed): every caller gets a connection-level error (503).
      this.dead ??= Object.assign(new Error(`embedded database stopped: ${e.message}`), { code: "57P02" });
      for (const p of this.pending.values()) p.reject(this.dead);
      this.pending.clear();
    };
    worker.on("error", fail);
    worker.on("exit", (code) => fail(new Error(`exit ${code}`)));
  }

  static async create(dir: string, loadDataDir?: Blob): Promise<RemotePglite> {
    const data = loadDataDir ? await loadDataDir.arrayBuffer() : undefined;
    // "../db/": also right from the server bundle (build/server.mjs), see db/client.ts.
    const worker = new Worker(new URL("../db/pglite-thread.mjs", import.meta.url), {
      workerData: { dir, loadDataDir: data },
      transferList: data ? [data] : [],
    });
    await new Promise<void>((resolve, reject) => {
      const onMessage = (m: { ready?: boolean }) => {
        if (!m.ready) return;
        worker.off("error", reject);
        resolve();
      };
      worker.once("error", reject);
      worker.once("message", onMessage);
    });
    worker.unref();
    return new RemotePglite(worker);
  }

  private call<T>(message: Record<string, unknown>): Promise<T> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    // Referenced only while a statement is out: an idle database does not keep the process alive
    // (a CLI command ends when its work does), a pending one does (its caller awaits it).
    if (!this.pending.size) this.worker.ref();
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage({ ...message, id });
    });
  }

  query(text: string, params: unknown[] = [], opts?: QueryOptions, tx?: number): Promise<RemoteResult> {
    // drizzle passes parsers that keep dates as text; functions cannot cross threads, the worker has the same ones.
    return this.call({ op: "query", text, params, rowMode: opts?.rowMode, raw: opts?.parsers !== undefined, tx });
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const tx = this.nextTx++;
    await this.call({ op: "begin", tx });
    let result: T;
    try {
      result = await fn({ query: (text, params, opts) => this.query(text, params, opts, tx) });
    } catch (e) {
      await this.call({ op: "end", tx, commit: false }).catch(() => {});
      throw e;
    }
    await this.call({ op: "end", tx, commit: true });
    return result;
  }

  async copyThen(table: string, columns: readonly string[], csv: string, then: { text: string; params: unknown[] }): Promise<void> {
    await this.call({ op: "copyThen", table, columns, csv, then });
  }

  async listen(channel: string, onMessage: (payload: string) => void): Promise<void> {
    let set = this.listeners.get(channel);
    if (!set) {
      this.listeners.set(channel, (set = new Set()));
      await this.call({ op: "listen", channel });
    }
    set.add(onMessage);
  }

  async dumpDataDir(compression: "gzip" | "none" = "gzip"): Promise<Blob> {
    return new Blob([await this.call<ArrayBuffer>({ op: "dump", compression })]);
  }

  async close(): Promise<void> {
    if (this.dead) return;
    await this.call({ op: "close" }).catch(() => {});
    await this.worker.terminate();
  }
}
