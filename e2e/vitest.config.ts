import { defineConfig } from "vitest/config";

// Browser tests against the real server (`npm run test:e2e` builds first). One file, in order:
// the steps share one signed-in browser, like a person using the dashboard.
export default defineConfig({
  test: {
    include: ["e2e/**/*.test.ts"],
    pool: "forks",
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
