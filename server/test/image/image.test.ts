// The container image, built from the Containerfile and run (scripts/check-image.sh). It takes minutes
// and needs root, podman and mmdebstrap: only with IMAGE_TEST=1, never in the default run.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../../..");

describe.skipIf(process.env.IMAGE_TEST !== "1")("container image", () => {
  it(
    "builds, serves the dashboard, API and redirect origins, redirects a link made inside it, and stops with status 0 on SIGTERM",
    () => {
      const r = spawnSync("bash", [path.join(root, "scripts/check-image.sh")], { cwd: root, encoding: "utf8", timeout: 60 * 60_000 });
      const out = `${r.stdout}\n${r.stderr}`;
      if (r.status !== 0) console.error(out.slice(-6000));
      else
        console.log(
          out
            .split("\n")
            .filter((l) => /^(== |build: |base image|\/app: |ready after|exit status|POST |HEALTHCHECK|dashboard |click from|share card)/.test(l))
            .join("\n"),
        );
      expect(r.status).toBe(0);
      expect(out).toContain("image: OK");
    },
    65 * 60_000,
  );
});
