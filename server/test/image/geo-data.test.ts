// The container image ships fast-geoip's range files compacted and brotli-compressed
// (scripts/slim-node-modules.mjs, read through scripts/patch-fast-geoip.mjs): every address must get
// the same place from them as from the files the package ships.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { brotliDecompressSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { compactGeoData, compactRanges, compressGeoData, compressLocations, locationBlockFormat } from "../../../scripts/slim-node-modules.mjs";

type Row = [number, number | null, number | null, number | null, number?];
type Place = { country: string; region: string; city: string; timezone: string; ll: [number, number] } | null;
type GeoIp = { lookup(ip: string): Promise<Place> };

const require = createRequire(import.meta.url);
const pkgDir = path.dirname(require.resolve("fast-geoip/package.json"));
const dataDir = path.join(pkgDir, "data");
const { binarySearch } = require(path.join(pkgDir, "build/utils.js")) as { binarySearch: (list: unknown[], item: number, key: (x: never) => number) => number };
const first = (r: Row) => r[0];
const rangeFiles = readdirSync(dataDir).filter((n) => /^\d+\.json$/.test(n));
// Every file and many addresses take about a minute: with IMAGE_TEST=1 (the image's check), else a sample.
const full = process.env.IMAGE_TEST === "1";
const checkedFiles = full ? rangeFiles : rangeFiles.filter((_, i) => i % 60 === 0);

describe("fast-geoip range files compacted for the image", () => {
  const work = mkdtempSync(path.join(tmpdir(), "geo-compact-"));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it("every range of every file keeps its location and coordinates", () => {
    let probes = 0;
    const differing: string[] = [];
    for (const name of checkedFiles) {
      const rows = JSON.parse(readFileSync(path.join(dataDir, name), "utf8")) as Row[];
      const compact = compactRanges(rows) as Row[];
      rows.forEach((r, i) => {
        // The first and the last address of each original range.
        const last = i + 1 < rows.length ? rows[i + 1][0] - 1 : r[0];
        for (const ip of [r[0], last]) {
          probes++;
          const c = compact[binarySearch(compact, ip, first)];
          if (c[1] !== r[1] || c[2] !== r[2] || c[3] !== r[3]) differing.push(`${name} ${ip}`);
        }
      });
    }
    expect(probes).toBeGreaterThan(full ? 1_000_000 : 50_000);
    expect(differing.slice(0, 5)).toEqual([]);
  }, 180_000);

  it("the library answers random public addresses the same from the compacted files, plain and compressed", async () => {
    // A copy of the package whose range files are the compacted ones; the index and location files
    // are the package's own.
    const copy = path.join(work, "fast-geoip");
    cpSync(path.join(pkgDir, "build"), path.join(copy, "build"), { recursive: true });
    cpSync(path.join(pkgDir, "package.json"), path.join(copy, "package.json"));
    // Without IMAGE_TEST only the sampled range files are compacted (the others stay the shipped
    // ones), and the addresses are drawn from their ranges.
    const sampled = new Set(checkedFiles);
    mkdirSync(path.join(copy, "data"));
    for (const name of readdirSync(dataDir)) {
      const compactedHere = /^\d+\.json$/.test(name) && (full || sampled.has(name));
      if (!compactedHere) symlinkSync(path.join(dataDir, name), path.join(copy, "data", name));
    }
    compactGeoData(dataDir, path.join(copy, "data"), full ? undefined : checkedFiles);
    // A second copy with every range file of the first compressed and the location file in
    // compressed blocks, as the image has them: the mended package reads only those there.
    const packedCopy = path.join(work, "fast-geoip-compressed");
    cpSync(path.join(pkgDir, "build"), path.join(packedCopy, "build"), { recursive: true });
    cpSync(path.join(pkgDir, "package.json"), path.join(packedCopy, "package.json"));
    mkdirSync(path.join(packedCopy, "data"));
    for (const name of readdirSync(dataDir)) {
      if (!/^\d+\.json$/.test(name) && name !== "locations.json") symlinkSync(path.join(dataDir, name), path.join(packedCopy, "data", name));
    }
    compressGeoData(path.join(copy, "data"), path.join(packedCopy, "data"));
    const { perBlock, recordSize } = locationBlockFormat(pkgDir);
    compressLocations(dataDir, perBlock, recordSize, path.join(packedCopy, "data"));
    expect(readdirSync(path.join(packedCopy, "data")).filter((n) => /^(\d+|locations)\.json$/.test(n))).toEqual([]);
    const shipped = require(pkgDir) as GeoIp;
    const compacted = require(copy) as GeoIp;
    const compressed = require(packedCopy) as GeoIp;

    let seed = 20261127;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const dotted = (n: number) => [24, 16, 8, 0].map((s) => (n >>> s) & 255).join(".");
    const starts = checkedFiles.flatMap((name) => (JSON.parse(readFileSync(path.join(dataDir, name), "utf8")) as Row[]).map((r) => r[0]));
    const ips = Array.from({ length: full ? 1500 : 150 }, () =>
      full
        ? [1 + Math.floor(random() * 223), 0, 0, 0].map((o, i) => (i ? Math.floor(random() * 256) : o)).join(".")
        : dotted(starts[Math.floor(random() * starts.length)] + Math.floor(random() * 64)),
    );
    let found = 0;
    for (const ip of ips) {
      const [a, b, c] = await Promise.all([shipped.lookup(ip), compacted.lookup(ip), compressed.lookup(ip)]);
      if (a) found++;
      const place = (p: Place) => p && { country: p.country, region: p.region, city: p.city, timezone: p.timezone, ll: p.ll };
      expect(place(b), ip).toEqual(place(a));
      expect(place(c), ip).toEqual(place(a));
    }
    expect(found).toBeGreaterThan(ips.length / 3);
  }, 180_000);

  it("the location blocks hold the location file's records byte for byte, at the offsets the mended package reads", () => {
    const out = path.join(work, "locations");
    mkdirSync(out);
    const { perBlock, recordSize } = locationBlockFormat(pkgDir);
    const { before, after } = compressLocations(dataDir, perBlock, recordSize, out);
    expect(after).toBeLessThan(before / 10);
    const file = readFileSync(path.join(dataDir, "locations.json"));
    const blocks = readdirSync(out).map((n) => Number(/^locations-(\d+)\.json\.br$/.exec(n)![1]));
    expect(blocks.sort((a, b) => a - b)).toEqual(blocks.map((_, i) => i));
    const joined = Buffer.concat(blocks.map((k) => brotliDecompressSync(readFileSync(path.join(out, `locations-${k}.json.br`)))));
    // The file is `[`, then records of recordSize bytes (the last one's final byte the closing `]`).
    expect(joined.equals(file.subarray(1))).toBe(true);
    const records = (file.length - 1) / recordSize;
    for (const index of [0, perBlock - 1, perBlock, records - 1]) {
      const k = Math.floor(index / perBlock);
      const start = (index % perBlock) * recordSize;
      const fromBlock = brotliDecompressSync(readFileSync(path.join(out, `locations-${k}.json.br`))).subarray(start, start + recordSize - 1);
      expect(JSON.parse(fromBlock.toString())).toEqual(JSON.parse(file.subarray(index * recordSize + 1, (index + 1) * recordSize).toString()));
    }
  });

  it("the compacted files are smaller, and compressed smaller still", () => {
    const out = path.join(work, "sizes");
    cpSync(path.join(dataDir, rangeFiles[0]), path.join(out, rangeFiles[0]));
    const { before, after } = compactGeoData(out);
    expect(after).toBeLessThan(before);
    const packed = compressGeoData(out);
    expect(packed.after).toBeLessThan(after / 2);
    expect(readdirSync(out)).toEqual([`${rangeFiles[0]}.br`]);
  });
});
