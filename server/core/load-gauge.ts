import type { Metrics } from "../lib/metrics";

/** Redirect answers a second above which the process counts as busy serving visits. */
export const BUSY_REDIRECTS_PER_S = 200;

/**
 * Whether the process is busy serving visits, by its redirect answers over the last quarter second.
 * Background work (webhook deliveries, destination checks) goes slowly while it is and catches up
 * once the burst is over, so the redirects keep the CPU. (The event loop's utilization would also
 * count the background work itself, and a machine short of CPU makes any loop look busy.)
 */
export function loadGauge(metrics: Metrics | undefined): { busy(): boolean; stop(): void } {
  let last = -1;
  let busy = false;
  const timer = setInterval(() => {
    void metrics?.redirects.get().then((m) => {
      const n = m.values.reduce((sum, v) => sum + v.value, 0);
      if (last >= 0) busy = (n - last) * 4 > BUSY_REDIRECTS_PER_S;
      last = n;
    });
  }, 250);
  timer.unref();
  return { busy: () => busy, stop: () => clearInterval(timer) };
}
