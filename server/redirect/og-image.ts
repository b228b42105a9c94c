import { createHash, randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, stat, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { Piscina } from "piscina";

export const OG_WIDTH = 1200;
export const OG_HEIGHT = 630;

/**
 * What a generated image shows: the title, a subtitle (the short link's host) and, for a linktree's
 * card, its avatar as a data: URL (the renderer never fetches). The same card is the same image.
 */
export type Card = { title: string; subtitle: string; avatar?: string };

/** Bump when the layout in og-worker.mjs changes: images stored under the old one are then not reused. */
const LAYOUT = 2;

/** The file name of a card's image: a hash of everything the image shows, and of the layout. */
export function cardKey(card: Card): string {
  return createHash("sha256")
    .update(JSON.stringify([LAYOUT, card.title, card.subtitle, card.avatar ?? null]))
    .digest("hex")
    .slice(0, 40);
}

/** Every render thread is busy and the queue is full: answer 503 with Retry-After, never wait unbounded. */
export class OgImagesBusy extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super("share-card images: the render queue is full");
  }
}

export type OgImagesOptions = {
  /** Where the images are kept (`${DATA_DIR}/og`). */
  dir: string;
  /** Render threads. One: on a small machine a second would take a core from the requests. */
  threads?: number;
  /** Renders waiting for a thread; past that, OgImagesBusy. */
  queue?: number;
  /** Bytes of images kept on disk; the least recently used go first. */
  maxBytes?: number;
  /** The worker module (tests put a slower one in). */
  worker?: URL;
  /**
   * How long a request waits for its render; past that it gets OgImagesBusy while the render goes
   * on and is stored for the next request. A busy machine starves the low-priority render thread,
   * and a crawler is better served by a quick 503 with Retry-After than by a hung request.
   */
  maxWaitMs?: number;
};

const HAS_KEY = /^[0-9a-f]{40}\.png$/;

/**
 * Share-card images rendered once per card in a worker thread (never on the request thread) and
 * kept on disk, so a second request for the same title, also after a restart, reads the file.
 * Concurrent requests for the same card share one render; renders past the queue's bound fail
 * fast with OgImagesBusy.
 */
export class OgImages {
  /** Renders started by this instance (tests: a stored image is not rendered again). */
  renders = 0;
  private pool: Piscina<Card, Uint8Array>;
  private inflight = new Map<string, Promise<Buffer>>();
  /** Stored images and their sizes, least recently used first (a Map keeps insertion order). */
  private stored = new Map<string, number>();
  private storedBytes = 0;
  private ready: Promise<void> | undefined;
  private readonly dir: string;
  private readonly maxBytes: number;
  private readonly retryAfter: number;
  private readonly maxWaitMs: number;

  constructor(opts: OgImagesOptions) {
    this.dir = opts.dir;
    this.maxWaitMs = opts.maxWaitMs ?? 20_000;
    this.maxBytes = opts.maxBytes ?? 256 * 1024 * 1024;
    const threads = opts.threads ?? 1;
    const queue = opts.queue ?? 16;
    // About how long the queue takes to drain at 40 ms an image, rounded up to whole seconds.
    this.retryAfter = Math.max(1, Math.ceil((queue * 0.04) / threads));
    this.pool = new Piscina({
      filename: (opts.worker ?? new URL("./og-worker.mjs", import.meta.url)).href,
      minThreads: 0,
      maxThreads: threads,
      maxQueue: queue,
      // The thread leaves when idle: satori, resvg and the fonts hold tens of MB, and most
      // instances render rarely. Lower CPU priority than the request thread, but not the lowest:
      // at nice 19 a machine busy with other work starved renders for minutes.
      idleTimeout: 30_000,
      niceIncrement: 5,
    });
  }

  /**
   * The card's PNG: from disk when stored, else rendered and stored. `beforeRender` runs only when
   * this call starts a render (a caller's budget: joining a render under way or reading the file
   * costs it nothing). Throws OgImagesBusy when the queue is full.
   */
  async get(card: Card, beforeRender?: () => Promise<void>): Promise<Buffer> {
    const key = cardKey(card);
    // An unreadable directory leaves the cache empty (every card renders), not the route failing.
    await (this.ready ??= this.scan().catch(() => {}));
    if (this.stored.has(key)) {
      try {
        const png = await readFile(this.file(key));
        this.touch(key, png.length);
        return png;
      } catch (e) {
        // Removed behind our back (another instance sharing the directory evicted it): render again.
        if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
        this.forget(key);
      }
    }
    let p = this.inflight.get(key);
    if (p) return this.bounded(p);
    await beforeRender?.();
    p = this.inflight.get(key);
    if (p) return this.bounded(p);
    p = this.renderAndStore(key, card).finally(() => this.inflight.delete(key));
    this.inflight.set(key, p);
    p.catch(() => {}); // a caller that stopped waiting does not leave the failure unhandled
    return this.bounded(p);
  }

  /** The render's result, or OgImagesBusy once `maxWaitMs` has passed (the render goes on). */
  private bounded(p: Promise<Buffer>): Promise<Buffer> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new OgImagesBusy(this.retryAfter)), this.maxWaitMs);
    });
    return Promise.race([p, late]).finally(() => clearTimeout(timer));
  }

  /** Renders waiting for a thread. */
  get queued(): number {
    return this.pool.queueSize;
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }

  private file = (key: string) => path.join(this.dir, `${key}.png`);

  private async renderAndStore(key: string, card: Card): Promise<Buffer> {
    const png = Buffer.from(await this.render(card));
    await this.store(key, png);
    return png;
  }

  private async render(card: Card): Promise<Uint8Array> {
    this.renders++;
    try {
      return await this.pool.run(card);
    } catch (e) {
      if (e instanceof Error && e.message === "Task queue is at limit") throw new OgImagesBusy(this.retryAfter);
      throw e;
    }
  }

  /** Written whole, then renamed: a reader (this or another instance) never sees half an image. */
  private async store(key: string, png: Buffer) {
    const tmp = path.join(this.dir, `.${key}.${randomBytes(6).toString("hex")}.tmp`);
    try {
      await writeFile(tmp, png);
      await rename(tmp, this.file(key));
    } catch {
      // A full or read-only disk costs a render next time, not this answer.
      await unlink(tmp).catch(() => {});
      return;
    }
    this.touch(key, png.length);
    while (this.storedBytes > this.maxBytes && this.stored.size > 1) {
      const oldest = this.stored.keys().next().value as string;
      this.forget(oldest);
      await unlink(this.file(oldest)).catch(() => {});
    }
  }

  private touch(key: string, size: number) {
    this.forget(key);
    this.stored.set(key, size);
    this.storedBytes += size;
  }

  private forget(key: string) {
    const size = this.stored.get(key);
    if (size === undefined) return;
    this.stored.delete(key);
    this.storedBytes -= size;
  }

  /** What is on disk from earlier runs, oldest first; temp files a crash left behind are removed. */
  private async scan() {
    await mkdir(this.dir, { recursive: true });
    const found: { key: string; size: number; at: number }[] = [];
    for (const name of await readdir(this.dir)) {
      const full = path.join(this.dir, name);
      if (name.endsWith(".tmp")) {
        await unlink(full).catch(() => {});
        continue;
      }
      if (!HAS_KEY.test(name)) continue;
      const s = await stat(full).catch(() => null);
      if (s) found.push({ key: name.slice(0, -4), size: s.size, at: s.mtimeMs });
    }
    for (const f of found.sort((a, b) => a.at - b.at)) this.touch(f.key, f.size);
  }
}

const byDir = new Map<string, OgImages>();

/**
 * The images of a data directory: one pool and one disk cache per process, however many redirect
 * apps serve it. The first call makes it (with `opts`), later calls get the same one.
 */
export function ogImagesIn(dataDir: string, opts: Omit<OgImagesOptions, "dir"> = {}): OgImages {
  const dir = path.join(dataDir, "og");
  let images = byDir.get(dir);
  if (!images) byDir.set(dir, (images = new OgImages({ ...opts, dir })));
  return images;
}
