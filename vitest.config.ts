import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["server/**/*.test.ts", "db/**/*.test.ts"],
    globalSetup: ["./server/test/global-setup.ts"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: more workers only add PGlite start-up contention.
    maxWorkers: 3,
  },
});
