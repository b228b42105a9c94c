import { defineConfig } from "vitest/config";

/**
 * `npm run test:faults`: process-level fault tests (SIGTERM under load, a PostgreSQL outage,
 * two instances). They spawn servers and stop databases, so they run one at a time, outside
 * `npm test`. Files are `*.fault.ts`; the `*.test.ts` here are fast unit tests run by `npm test`.
 */
export default defineConfig({
  test: {
    include: ["server/test/faults/**/*.fault.ts"],
    globalSetup: ["./server/test/global-setup.ts"],
    pool: "forks",
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 240_000,
    hookTimeout: 120_000,
  },
});
