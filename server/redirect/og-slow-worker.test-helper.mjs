// @ts-check
// A stand-in for og-worker.mjs in tests: a render that blocks its thread until the test lets it
// go. The card's title names a directory: the render writes `started` there, then blocks (no
// event loop turns) until `go` appears there. Run on the request thread, it would stop every answer.
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";

/** A valid 1×1 PNG. */
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");

/** @param {{ title: string }} card */
export default function render(card) {
  writeFileSync(path.join(card.title, "started"), "");
  const pause = new Int32Array(new SharedArrayBuffer(4));
  while (!existsSync(path.join(card.title, "go"))) Atomics.wait(pause, 0, 0, 5);
  return PNG;
}
