// @ts-check
// Renders share-card images in a worker thread of the pool in og-image.ts. satori and resvg compute
// synchronously for 30–250 ms per image: on the redirect host's own thread every redirect waited
// behind them. Plain JavaScript: a worker thread starts without the TypeScript loader (tsx, Vitest),
// and `npm start` ships this file beside the server bundle (scripts/ensure-build.mjs).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import satori from "satori";
import { Resvg } from "@resvg/resvg-js";

const WIDTH = 1200;
const HEIGHT = 630;

/** @typedef {{ title: string, subtitle: string, avatar?: string }} Card */
/** @typedef {{ type: string, props: Record<string, unknown> }} Node */

/** @type {{ name: string, data: Buffer, weight: 400 | 700, style: "normal" }[] | undefined} */
let fonts;

/** Inter from @fontsource/inter (woff: satori reads woff, not woff2), several scripts for fallback. */
function loadFonts() {
  if (fonts) return fonts;
  const dir = path.join(path.dirname(createRequire(import.meta.url).resolve("@fontsource/inter/package.json")), "files");
  fonts = [];
  for (const subset of ["latin", "latin-ext", "cyrillic", "cyrillic-ext", "greek", "greek-ext", "vietnamese"]) {
    for (const weight of /** @type {const} */ ([400, 700])) {
      fonts.push({ name: "Inter", data: readFileSync(path.join(dir, `inter-${subset}-${weight}-normal.woff`)), weight, style: "normal" });
    }
  }
  return fonts;
}

/**
 * @param {string} type
 * @param {Record<string, unknown>} style
 * @param {Node | Node[] | string} [children]
 * @returns {Node}
 */
const el = (type, style, children) => ({ type, props: { style, children } });

/**
 * The card's layout: the title large, the subtitle (the short link's host) below, and the avatar
 * (a data: URL, never fetched from here) on the left when there is one.
 * @param {Card} card
 */
function tree(card) {
  const size = card.title.length > 80 ? 56 : card.title.length > 40 ? 68 : 84;
  /** @type {Node[]} */
  const top = [el("div", { display: "flex", flex: 1, fontSize: size, fontWeight: 700, lineHeight: 1.15, letterSpacing: "-0.02em" }, card.title)];
  if (card.avatar) {
    top.unshift({
      type: "img",
      props: { src: card.avatar, width: 160, height: 160, style: { width: 160, height: 160, borderRadius: 80, marginRight: 48, objectFit: "cover" } },
    });
  }
  return el(
    "div",
    {
      // Sized with its padding inside: at 100% the padding pushed the subtitle out of the image.
      width: WIDTH,
      height: HEIGHT,
      boxSizing: "border-box",
      display: "flex",
      flexDirection: "column",
      justifyContent: "space-between",
      padding: "72px 80px",
      background: "linear-gradient(135deg, #1e3a8a 0%, #4f46e5 100%)",
      color: "#ffffff",
      fontFamily: "Inter",
    },
    [el("div", { display: "flex", alignItems: "center" }, top), el("div", { display: "flex", fontSize: 32, fontWeight: 400, opacity: 0.85 }, card.subtitle)],
  );
}

/**
 * One task of the pool: the card as a 1200×630 PNG.
 * @param {Card} card
 * @returns {Promise<Uint8Array>}
 */
export default async function render(card) {
  const svg = await satori(/** @type {any} */ (tree(card)), { width: WIDTH, height: HEIGHT, fonts: loadFonts() });
  return new Resvg(svg, { fitTo: { mode: "width", value: WIDTH } }).render().asPng();
}
