// Runs after `npm install` / `npm ci` (postinstall): lets fast-geoip 1.1.88 read its range files and
// its location file brotli-compressed.
//
// The package reads each lookup's range file (`<n>.json`) from its data folder and parses it. Its
// 3,077 range files are 151 MB, most of the container image; compacted and compressed by
// scripts/slim-node-modules.mjs they are 21 MB. When the folder holds `0.json.br` (only the image's
// does), every range file is read as `<n>.json.br` and decompressed before parsing; otherwise the
// package reads what it ships, as before. The index files stay plain either way.
//
// The location file (13 MB, records of 112 bytes padded with spaces, read by offset) is cut by the
// same script into blocks of LOCATION_BLOCK_RECORDS records, each compressed (1 MB in all). When the
// folder holds `locations-0.json.br`, a record is read from its block, decompressed, at the same place
// in it as in the file; otherwise from the file, as before. server/test/image/geo-data.test.ts
// compares the answers.
//
// Exact text, so another version of fast-geoip stops the install here instead of running unmended
// (docs/decisions/024-dependencies-mended-in-place.md). Each mend has its own mark, so an install
// mended before the second one existed gets it too.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const MARK = "/* mended by scripts/patch-fast-geoip.mjs */";
const LOCATIONS_MARK = "/* mended by scripts/patch-fast-geoip.mjs: location blocks */";
/** Records per compressed block of the location file; scripts/slim-node-modules.mjs reads it here. */
const LOCATION_BLOCK_RECORDS = 1024;

const dataDirLine = `var DATA_DIR = path.join(path.dirname(__dirname), "data");
`;
const rangeMend = [
  [
    "the read of a data file",
    `        fs.readFile(path.join(DATA_DIR, filename), function (err, data) {
`,
    `        ${MARK}
        readDataFile(filename, function (err, data) {
`,
  ],
  [
    "the data folder's line",
    dataDirLine,
    `${dataDirLine}${MARK}
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
`,
  ],
];
const locationMend = [
  [
    "the read of a location record",
    `        return readFileChunk("locations.json", index * params.LOCATION_RECORD_SIZE + 1, params.LOCATION_RECORD_SIZE - 1);
`,
    `        ${LOCATIONS_MARK}
        if (LOCATION_BLOCKS)
            return readLocationBlockRecord(index);
        return readFileChunk("locations.json", index * params.LOCATION_RECORD_SIZE + 1, params.LOCATION_RECORD_SIZE - 1);
`,
  ],
  [
    "the chunk reader",
    `function readFileChunk(filename, offset, length) {
`,
    `${LOCATIONS_MARK}
var LOCATION_BLOCK_RECORDS = ${LOCATION_BLOCK_RECORDS};
var LOCATION_BLOCKS = fs.existsSync(path.join(DATA_DIR, "locations-0.json.br"));
function readLocationBlockRecord(index) {
    var block = Math.floor(index / LOCATION_BLOCK_RECORDS);
    var start = (index % LOCATION_BLOCK_RECORDS) * params.LOCATION_RECORD_SIZE;
    return new Promise(function (resolve, reject) {
        fs.readFile(path.join(DATA_DIR, "locations-" + block + ".json.br"), function (err, packed) {
            if (err)
                return reject(err);
            require("zlib").brotliDecompress(packed, function (err, records) {
                if (err)
                    return reject(err);
                try {
                    resolve(JSON.parse(records.subarray(start, start + params.LOCATION_RECORD_SIZE - 1).toString()));
                }
                catch (e) {
                    reject(e);
                }
            });
        });
    });
}
function readFileChunk(filename, offset, length) {
`,
  ],
];

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
let text = readFileSync(file, "utf8");
for (const [mark, parts] of [
  [MARK, rangeMend],
  [LOCATIONS_MARK, locationMend],
]) {
  if (text.includes(mark)) continue;
  for (const [what, before] of parts) {
    if (text.split(before).length !== 2) {
      console.error(`scripts/patch-fast-geoip.mjs: ${what} is not in ${file} exactly once:\n${before}`);
      process.exit(1);
    }
  }
  for (const [, before, after] of parts) text = text.replace(before, after);
}
writeFileSync(file, text);
