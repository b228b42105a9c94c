import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { LruCache } from "../lib/lru";

export const OG_WIDTH = 1200;
export const OG_HEIGHT = 630;

type Font = { name: string; data: Buffer; weight: 400 | 700; style: "normal" };
let fonts: Font[] | undefined;

/** Inter from @fontsource/inter (woff: satori reads woff, not woff2), several scripts for fallback. */
function loadFonts(): Font[] {
  if (fonts) return fonts;
  const dir = path.join(path.dirname(createRequire(import.meta.url).resolve("@fontsource/inter/package.json")), "files");
  fonts = [];
  for (const subset of ["latin", "latin-ext", "cyrillic", "cyrillic-ext", "greek", "greek-ext", "vietnamese"]) {
    for (const weight of [400, 700] as const) {
      fonts.push({ name: "Inter", data: readFileSync(path.join(dir, `inter-${subset}-${weight}-normal.woff`)), weight, style: "normal" });
    }
  }
  return fonts;
}

type Node = { type: string; props: { style?: Record<string, unknown>; children?: Node | Node[] | string } };
const el = (type: string, style: Record<string, unknown>, children?: Node | Node[] | string): Node => ({ type, props: { style, children } });

/** A 1200×630 PNG with the title (and the short link's host), for the share card. */
export async function renderOgImage(title: string, host: string): Promise<Buffer> {
  const size = title.length > 80 ? 56 : title.length > 40 ? 68 : 84;
  const tree = el(
    "div",
    {
      width: "100%",
      height: "100%",
      display: "flex",
      flexDirection: "column",
      justifyContent: "space-between",
      padding: "72px 80px",
      background: "linear-gradient(135deg, #1e3a8a 0%, #4f46e5 100%)",
      color: "#ffffff",
      fontFamily: "Inter",
    },
    [
      el("div", { display: "flex", fontSize: size, fontWeight: 700, lineHeight: 1.15, letterSpacing: "-0.02em" }, title),
      el("div", { display: "flex", fontSize: 32, fontWeight: 400, opacity: 0.85 }, host),
    ],
  );
  // Loaded on the first image: most instances never render one, and start and memory stay lean.
  const [{ default: satori }, { Resvg }] = await Promise.all([import("satori"), import("@resvg/resvg-js")]);
  const svg = await satori(tree as unknown as Parameters<typeof satori>[0], { width: OG_WIDTH, height: OG_HEIGHT, fonts: loadFonts() });
  return new Resvg(svg, { fitTo: { mode: "width", value: OG_WIDTH } }).render().asPng();
}

/**
 * Rendered images by link id and title: a new title is a new key, so a changed title renders
 * again; concurrent requests for the same image share one rendering.
 */
export class OgImageCache {
  private done = new LruCache<Buffer>(256);
  private inflight = new Map<string, Promise<Buffer>>();
  renders = 0;
  get(linkId: string, title: string, host: string): Promise<Buffer> {
    const key = `${linkId}\n${title}`;
    const hit = this.done.get(key);
    if (hit) return Promise.resolve(hit);
    let p = this.inflight.get(key);
    if (!p) {
      this.renders++;
      p = renderOgImage(title, host)
        .then((png) => (this.done.set(key, png), png))
        .finally(() => this.inflight.delete(key));
      this.inflight.set(key, p);
    }
    return p;
  }
}
