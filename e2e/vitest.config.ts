import { defineConfig } from "vitest/config";

// Browser tests against the real server (`npm run test:e2e` builds first). Each file's tests run in
// order (its steps share one signed-in browser, like a person using the dashboard), against a server
// and browser of its own, so two files run at once: most of a browser test is waiting.
export default defineConfig({
  test: {
    include: ["e2e/**/*.test.ts"],
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
