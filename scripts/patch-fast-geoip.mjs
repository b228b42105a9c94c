// Runs after `npm install` / `npm ci` (postinstall): lets fast-geoip 1.1.88 read its range files
// brotli-compressed.
//
// The package reads each lookup's range file (`<n>.json`) from its data folder and parses it. Its
// 3,077 range files are 151 MB, most of the container image; compacted and compressed by
// scripts/slim-node-modules.mjs they are 21 MB. When the folder holds `0.json.br` (only the image's
// does), every range file is read as `<n>.json.br` and decompressed before parsing; otherwise the
// package reads what it ships, as before. The index and location files stay plain either way (the
// location file is read by offset). server/test/image/geo-data.test.ts compares the answers.
//
// Exact text, so another version of fast-geoip stops the install here instead of running unmended
// (docs/decisions/024-dependencies-mended-in-place.md).
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const MARK = "/* mended by scripts/patch-fast-geoip.mjs */";
const before = `        fs.readFile(path.join(DATA_DIR, filename), function (err, data) {
`;
const after = `        ${MARK}
        readDataFile(filename, function (err, data) {
`;
const helper = `var DATA_DIR = path.join(path.dirname(__dirname), "data");
${MARK}
var COMPRESSED = fs.existsSync(path.join(DATA_DIR, "0.json.br"));
function readDataFile(filename, done) {
    if (!COMPRESSED || !/^\\d+\\.json$/.test(filename))
        return fs.readFile(path.join(DATA_DIR, filename), done);
    fs.readFile(path.join(DATA_DIR, filename + ".br"), function (err, packed) {
        if (err)
            return done(err);
        require("zlib").brotliDecompress(packed, done);
    });
}
`;
const dataDirLine = `var DATA_DIR = path.join(path.dirname(__dirname), "data");
`;

// npm runs install scripts in the project's root.
const root = path.resolve("node_modules/fast-geoip");
const { version } = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
if (version !== "1.1.88") {
  console.error(
    `scripts/patch-fast-geoip.mjs: written for fast-geoip 1.1.88, found ${version}: check how it reads its data files, then update or drop this script`,
  );
  process.exit(1);
}
const file = path.join(root, "build/index.js");
const text = readFileSync(file, "utf8");
if (!text.includes(MARK)) {
  for (const [what, part] of [
    ["the read of a data file", before],
    ["the data folder's line", dataDirLine],
  ]) {
    if (text.split(part).length !== 2) {
      console.error(`scripts/patch-fast-geoip.mjs: ${what} is not in ${file} exactly once:\n${part}`);
      process.exit(1);
    }
  }
  writeFileSync(file, text.replace(before, after).replace(dataDirLine, helper));
}
