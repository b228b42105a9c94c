import type http from "node:http";
import { performance } from "node:perf_hooks";
import type { DurationHistogram, DurationSeries } from "../lib/metrics";
import { appRouter } from "../routers";

/**
 * Request durations per origin and route for `/_/metrics`. The route label is always one of a few
 * fixed names (a REST path template, a tRPC procedure, a Remix route id, `redirect` for the redirect
 * host's slugs), never the raw path: a label per URL would grow without end.
 */
export type OriginKind = "app" | "api" | "redirect";

const STARTED = Symbol("started");
const ROUTE = Symbol("route");
const TIMER = Symbol("timer");
type Timed = http.ServerResponse & { [STARTED]: number; [ROUTE]: string | undefined; [TIMER]: OriginTimer };

/** What a request that no handler named is counted as. */
export const UNMATCHED = "unmatched";

/** The route the answer belongs to (a handler that knows it says so; the last one to say wins). */
export function setRoute(res: http.ServerResponse, route: string): void {
  if (TIMER in res) (res as Timed)[ROUTE] = route;
}

/** The redirect host's own paths, each a fixed label; anything else on it is a slug. */
function redirectRoute(url: string): string {
  if (url.charCodeAt(1) !== 95 /* _ */ || url.charCodeAt(2) !== 47 /* / */) return "redirect";
  const path = url.split("?")[0];
  if (path.startsWith("/_/og/")) return "/_/og/{id}.png";
  return path === "/_/health" || path === "/_/tls/ask" ? path : "/_/other";
}

/** The dashboard's and API's paths served outside a named route. */
function fixedRoute(kind: OriginKind, path: string, procedures: ReadonlySet<string>): string {
  if (kind === "api") {
    if (path === "/openapi.json" || path === "/openapi.yaml") return path;
    if (path.startsWith("/trpc/")) {
      // A batch is named by its procedures only when there is one: any mix would be a new label.
      const name = path.slice("/trpc/".length);
      return procedures.has(name) ? `trpc ${name}` : name.includes(",") ? "trpc batch" : "trpc unknown";
    }
  }
  if (kind === "app" && path.startsWith("/build/")) return "/build/*";
  return UNMATCHED;
}

class OriginTimer {
  private readonly series = new Map<string, DurationSeries>();
  /** The redirect host's slugs: kept at hand, the per-redirect cost is one observe. */
  private redirects: DurationSeries | undefined;
  constructor(
    private readonly histogram: DurationHistogram,
    readonly kind: OriginKind,
    private readonly procedures: ReadonlySet<string>,
  ) {}
  private seriesOf(route: string): DurationSeries {
    let s = this.series.get(route);
    if (!s) this.series.set(route, (s = this.histogram.series(this.kind, route)));
    return s;
  }
  finished(res: Timed): void {
    const seconds = (performance.now() - res[STARTED]) / 1000;
    let route = res[ROUTE];
    if (route === undefined) {
      const req = res.req as http.IncomingMessage & { originalUrl?: string };
      if (this.kind === "redirect") {
        route = redirectRoute(req.url ?? "/");
        if (route === "redirect") return (this.redirects ??= this.histogram.series("redirect", "redirect")).observe(seconds);
      } else route = fixedRoute(this.kind, (req.originalUrl ?? req.url ?? "/").split("?")[0], this.procedures);
    }
    this.seriesOf(route).observe(seconds);
  }
}

function onFinish(this: Timed) {
  this[TIMER].finished(this);
}

/**
 * Times every answer of the given origins: `start` when the request is picked for an origin, the
 * observation when its answer's last byte is handed to the socket (an answer never finished, the
 * client gone, is not counted).
 */
export function requestTimers(histogram: DurationHistogram) {
  // The tRPC procedures' names are the only /trpc paths that become labels.
  const names = new Set(Object.keys(appRouter._def.procedures));
  const timers = {
    app: new OriginTimer(histogram, "app", names),
    api: new OriginTimer(histogram, "api", names),
    redirect: new OriginTimer(histogram, "redirect", names),
  };
  return {
    start(kind: OriginKind, res: http.ServerResponse): void {
      const timed = res as Timed;
      timed[STARTED] = performance.now();
      timed[ROUTE] = undefined;
      timed[TIMER] = timers[kind];
      res.on("finish", onFinish);
    },
  };
}

type RemixRoute = { id: string; parentId?: string; path?: string; index?: boolean };

/**
 * The id of the Remix route that answers a dashboard path (`unmatched` for none), matched the way
 * Remix matches: each route's full path is its ancestors' joined, `:name` takes one segment, `*`
 * the rest; a static segment beats a parameter, and an index route its layout. Single-fetch data
 * requests (`/links.data`, `/_root.data`) count for the page they load.
 */
export function remixRouteLabels(routes: Record<string, RemixRoute | undefined>): (path: string) => string {
  const fullPath = (r: RemixRoute): string[] => {
    const parent = r.parentId ? routes[r.parentId] : undefined;
    return [...(parent ? fullPath(parent) : []), ...(r.path ?? "").split("/").filter(Boolean)];
  };
  const depth = (r: RemixRoute): number => (r.parentId && routes[r.parentId] ? 1 + depth(routes[r.parentId]!) : 0);
  const patterns = Object.values(routes)
    .filter((r): r is RemixRoute => r !== undefined)
    .map((r) => ({ id: r.id, segments: fullPath(r).map((s) => s.toLowerCase()), depth: depth(r) + (r.index ? 1 : 0) }));
  const cache = new Map<string, string>();
  const match = (path: string): string => {
    const parts = path.split("/").filter(Boolean);
    let best: { id: string; score: number[] } | undefined;
    for (const p of patterns) {
      const splat = p.segments.at(-1) === "*";
      const fixed = splat ? p.segments.slice(0, -1) : p.segments;
      if (splat ? parts.length < fixed.length : parts.length !== fixed.length) continue;
      let statics = 0;
      const ok = fixed.every((seg, i) => (seg.startsWith(":") ? true : seg === decodeSafe(parts[i]).toLowerCase() && ++statics > 0));
      if (!ok) continue;
      const score = [statics, splat ? 0 : 1, p.depth];
      if (!best || beats(score, best.score)) best = { id: p.id, score };
    }
    return best?.id ?? UNMATCHED;
  };
  return (rawPath) => {
    let path = rawPath.split("?")[0];
    if (path === "/_root.data") path = "/";
    else if (path.endsWith(".data")) path = path.slice(0, -".data".length);
    let id = cache.get(path);
    if (id === undefined) {
      id = match(path);
      // Paths are many (one per link id), the answers few: a bounded memo of the work.
      if (cache.size >= 1_000) cache.clear();
      cache.set(path, id);
    }
    return id;
  };
}

/** Lexicographic: the first member that differs decides. */
function beats(a: number[], b: number[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] > b[i];
  return false;
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
