import { configDefaults, defineConfig } from "vitest/config";

/**
 * Files that must load the server's modules fresh: they set the process's environment before the
 * modules read it (production mode, where the Remix build picks React Router's production bundle).
 * Every other file shares its worker's loaded modules with the files before it (each still gets its
 * own database), which takes a third off the suite's time on two cores.
 */
const FRESH_MODULES = ["server/test/security/trivial-requests.test.ts"];
const ALL = ["server/**/*.test.ts", "db/**/*.test.ts"];
/**
 * Files that open no database, or only ever the embedded one whatever DATABASE_URL says: with
 * DATABASE_URL set they would repeat the embedded run's work exactly, so only that run has them.
 */
const SAME_ON_EITHER_DATABASE = [
  "db/pglite-template.test.ts",
  "db/pglite-remote.test.ts",
  "server/admin/cli-errors.test.ts",
  "server/test/image/geo-data.test.ts",
  "server/test/lint/floors.test.ts",
  "server/test/security/secrets.test.ts",
  "server/core/health-probe.test.ts",
  "server/routers/workspaces/logs.test.ts",
];
const notOnPostgres = process.env.DATABASE_URL ? SAME_ON_EITHER_DATABASE : [];

export default defineConfig({
  test: {
    globalSetup: ["./server/test/global-setup.ts"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: more workers only add PGlite start-up contention.
    maxWorkers: 3,
    projects: [
      { extends: true, test: { name: "shared", include: ALL, exclude: [...configDefaults.exclude, ...FRESH_MODULES, ...notOnPostgres], isolate: false } },
      { extends: true, test: { name: "fresh", include: FRESH_MODULES } },
    ],
  },
});
