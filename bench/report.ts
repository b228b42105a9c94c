// What the benches print: figures, the machine's load beside them (so a reader can judge a figure),
// and measurements held against their targets.
import os from "node:os";

/** `x` with thousands separators and exactly `d` decimals. */
export const f = (x: number, d = 0) => x.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });

/** The 1-, 5- and 15-minute load averages. */
export const loadAverage = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(" ");

/** The 1-minute load average over the machine's cores. */
export const loadPerCores = () => `${os.loadavg()[0].toFixed(1)} / ${os.cpus().length} cores`;

/** The line a bench run starts with. */
export const machine = () => `machine: ${os.cpus().length} cores, load average ${loadAverage()}`;

export type TargetRow = { what: string; measured: string; target: string; met: boolean | null };

/** "what: measured", then the target and whether it was met, if there is one. */
export const describeRow = (what: string, measured: string, target = "", met: boolean | null = null) =>
  `${what}: ${measured}${target ? `  (target ${target}${met === null ? "" : met ? ", met" : ", NOT MET"})` : ""}`;

/** Rows printed as they are measured and kept for whoever runs the bench (bench/run.ts prints them again in its table). */
export function targetRows() {
  const rows: TargetRow[] = [];
  const row = (what: string, measured: string, target = "", met: boolean | null = null) => {
    rows.push({ what, measured, target, met });
    console.log(`  ${describeRow(what, measured, target, met)}`);
  };
  return { rows, row };
}
