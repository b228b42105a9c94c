import { readFileSync } from "node:fs";
import { ClickSpool } from "./spool";

/**
 * A process that crashes with clicks in its spool (spool.test.ts): appends each line of
 * the file given, writes them, then kills itself with SIGKILL, leaving no chance to clean up.
 * Usage: node --import tsx spool.crash-fixture.ts <dataDir> <linesFile>
 */
const [dataDir, linesFile] = process.argv.slice(2);
const spool = new ClickSpool(dataDir, (e) => {
  throw e;
});
for (const line of readFileSync(linesFile, "utf8").split("\n")) if (line) spool.append(line, Date.now());
spool.flush(); // as at the end of a turn, before the visits are answered
process.kill(process.pid, "SIGKILL");
