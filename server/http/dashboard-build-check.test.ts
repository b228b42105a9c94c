import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain JavaScript build script without type declarations
import { checkDashboardBuild, forbiddenInputs } from "../../scripts/check-dashboard-build.mjs";

const metafile = (...inputs: string[]) => ({ inputs: Object.fromEntries(inputs.map((p) => [p, { bytes: 1, imports: [] }])), outputs: {} });

describe("the dashboard build holds no server module", () => {
  it("passes a build of app/ and packages only", () => {
    expect(forbiddenInputs(metafile("app/root.tsx", "app/lib/tags.ts", "node_modules/react/index.js", "server/domain/limits.ts"))).toEqual([]);
  });

  it("names each planted server or database input", () => {
    const found = forbiddenInputs(
      metafile("app/root.tsx", "server/core/services.ts", "db/schema/links.ts", "server/routers/imports/export.ts", "server/lib/csv.ts", "server/http/rest.ts"),
    );
    expect(found).toEqual(["db/schema/links.ts", "server/core/services.ts", "server/http/rest.ts", "server/lib/csv.ts", "server/routers/imports/export.ts"]);
  });

  it("fails the build with a message naming the file and the modules", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "metafile-"));
    const file = path.join(dir, "metafile.server.json");
    writeFileSync(file, JSON.stringify(metafile("app/routes/links.tsx", "server/core/clicks.ts")));
    expect(() => checkDashboardBuild(file)).toThrow(/bundles server modules:\n {2}server\/core\/clicks\.ts/);
    writeFileSync(file, JSON.stringify(metafile("app/routes/links.tsx")));
    expect(() => checkDashboardBuild(file)).not.toThrow();
  });
});
