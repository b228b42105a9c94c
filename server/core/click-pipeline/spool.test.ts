import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDataDir } from "../../../db/test-db";
import { createTestApp, type TestApp } from "../../test/harness";
import { clickTs } from "../../lib/ids";
import { enrichVisit, startClickRecorder } from ".";
import { ClickSpool } from "./spool";
import { clickCounts, visit } from "./visits.test-helper";
import type { AppServices } from "../services";

let t: TestApp;
beforeAll(async () => void (t = await createTestApp()));
afterAll(() => t.close());

const here = path.dirname(fileURLToPath(import.meta.url));
const appWith = (dataDir: string) => ({ ...t.app, config: { ...t.app.config, dataDir } }) as AppServices;
const { stored, rolled } = clickCounts(() => t.app);
/** Spool directories and their files. */
const spoolTree = (dataDir: string) => {
  const root = path.join(dataDir, "click-wal");
  if (!existsSync(root)) return {};
  return Object.fromEntries(readdirSync(root).map((d) => [d, readdirSync(path.join(root, d)).sort()]));
};

/** Runs a process that appends these spool lines and dies by SIGKILL. */
function crashWith(dataDir: string, lines: string[]) {
  const file = path.join(dataDir, "lines.txt");
  writeFileSync(file, lines.join("\n"));
  const r = spawnSync(process.execPath, ["--import", "tsx", path.join(here, "spool.crash-fixture.ts"), dataDir, file], { encoding: "utf8" });
  expect(r.signal, r.stderr).toBe("SIGKILL");
}

describe("click write-ahead spool", () => {
  it("a run killed with clicks in its spool: the next start stores every one, once, with rollups counting each once", async () => {
    const dataDir = tempDataDir();
    const visits = Array.from({ length: 30 }, (_, i) => visit("wal00001", i));
    const pending = visits.map((v) => ({ kind: "visit", visit: v, ts: clickTs(v.timestamp) }));
    // A third was stored before the crash (its segment not yet deleted): not stored or counted twice.
    const before = startClickRecorder(appWith(tempDataDir()), { spool: false });
    for (const p of pending.slice(0, 10)) before.record(await enrichVisit(p.visit, "none", p.ts));
    await before.close();
    crashWith(
      dataDir,
      pending.map((p) => JSON.stringify(p)),
    );
    expect(Object.values(spoolTree(dataDir)).flat()).toContain("00000000.wal");

    const rec = startClickRecorder(appWith(dataDir), { intervalMs: 60_000 });
    expect(rec.buffered).toBe(30);
    await rec.flush();
    expect(await stored("wal00001")).toBe(30);
    expect(await rolled("wal00001")).toBe(30);
    await rec.close();
    expect(spoolTree(dataDir)).toEqual({});
  });

  it("a torn last line (power loss mid-write) is skipped; the whole lines before it are stored", async () => {
    const dataDir = tempDataDir();
    const lines = [0, 1, 2].map((i) => JSON.stringify({ kind: "visit", visit: visit("wal00002", i), ts: clickTs(Date.now() + i) }));
    crashWith(dataDir, [...lines, lines[0].slice(0, 40)]);
    const rec = startClickRecorder(appWith(dataDir), { intervalMs: 60_000 });
    await rec.flush();
    expect(await stored("wal00002")).toBe(3);
    await rec.close();
  });

  it("a segment is deleted once its clicks are stored, and a clean stop leaves no spool", async () => {
    const dataDir = tempDataDir();
    const rec = startClickRecorder(appWith(dataDir), { intervalMs: 60_000, spool: { segmentMs: 0 } });
    for (let i = 0; i < 5; i++) rec.recordVisit(visit("wal00003", i));
    const [dir] = Object.keys(spoolTree(dataDir));
    expect(spoolTree(dataDir)[dir].filter((f) => f.endsWith(".wal")).length).toBeGreaterThan(0);
    await rec.flush();
    // The unlink is asynchronous (off the writer's path): wait for it.
    for (let i = 0; i < 100 && spoolTree(dataDir)[dir].length > 1; i++) await new Promise((r) => setTimeout(r, 20));
    expect(spoolTree(dataDir)[dir]).toEqual(["owner.json"]);
    await rec.close();
    expect(spoolTree(dataDir)).toEqual({});
  });

  it("clicks dropped from a full memory buffer (their spill unwritable) stay in the spool and are stored at the next start", async () => {
    const dataDir = tempDataDir();
    writeFileSync(path.join(dataDir, "click-spool"), ""); // a file where the spill directory goes: spilling fails
    const rec = startClickRecorder(appWith(dataDir), { intervalMs: 60_000, maxBuffered: 5 });
    for (let i = 0; i < 30; i++) rec.recordVisit(visit("wal00005", i));
    await rec.close();
    expect(await stored("wal00005")).toBe(5);
    const again = startClickRecorder(appWith(dataDir), { intervalMs: 60_000 });
    await again.flush();
    expect(await stored("wal00005")).toBe(30);
    expect(await rolled("wal00005")).toBe(30);
    await again.close();
  });

  it("instances sharing DATA_DIR never replay each other's live spool; a dead or silent owner's is taken over", async () => {
    const dataDir = tempDataDir();
    const a = startClickRecorder(appWith(dataDir), { intervalMs: 60_000 });
    a.recordVisit(visit("wal00004"));
    const b = startClickRecorder(appWith(dataDir), { intervalMs: 60_000 });
    expect(b.buffered, "a live spool of this process").toBe(0);

    // Another live process on this host, and another host's instance with a fresh heartbeat.
    const root = path.join(dataDir, "click-wal");
    const line = JSON.stringify({ kind: "visit", visit: visit("wal00004", 1), ts: clickTs(Date.now() + 1) });
    const owned = (name: string, owner: object) => {
      mkdirSync(path.join(root, name));
      writeFileSync(path.join(root, name, "owner.json"), JSON.stringify(owner));
      writeFileSync(path.join(root, name, "00000000.wal"), line + "\n");
    };
    owned("live-parent", { host: os.hostname(), pid: process.ppid });
    owned("other-host", { host: "elsewhere.invalid", pid: 1 });
    const spool = new ClickSpool(dataDir, () => {});
    expect(spool.takeOrphans()).toEqual([]);
    // The other host's heartbeat goes stale: its instance is gone.
    const old = new Date(Date.now() - 120_000);
    utimesSync(path.join(root, "other-host", "owner.json"), old, old);
    expect(spool.takeOrphans().map((o) => o.records.length)).toEqual([1]);
    expect(existsSync(path.join(root, "other-host"))).toBe(false);
    expect(existsSync(path.join(root, "live-parent", "00000000.wal"))).toBe(true);
    spool.close(true);

    await a.close();
    await b.close();
    expect(await stored("wal00004")).toBe(1);
  });
});
