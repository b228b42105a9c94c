import type { Card } from "./og-image";

/** One task of the render pool: the card as a 1200×630 PNG (og-worker.mjs). */
export default function render(card: Card): Promise<Uint8Array>;
