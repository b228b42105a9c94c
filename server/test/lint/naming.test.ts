import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

// One naming rule for router keys, procedures' schemas, types and files (README, Naming). Names that
// broke it before the rule was written are listed here, so new code follows it and the lists only shrink.

const ROUTERS = "server/routers";
const folders = readdirSync(ROUTERS, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);
const read = (f: string) => readFileSync(f, "utf8");
const capitalise = (s: string) => s[0].toUpperCase() + s.slice(1);

/** Keys of `appRouter` that are not the singular `<resource>` of their `<resource>Router`. */
const KEY_EXCEPTIONS = new Set(["imports"]);
/** Types named otherwise than their schema. */
const TYPE_EXCEPTIONS = new Set(["ListOutput", "LinktreeAnalyticsDto", "ImportJobDto"]);

const schemaFiles = folders.flatMap((folder) =>
  readdirSync(path.join(ROUTERS, folder))
    .filter((f) => f.endsWith(".schema.ts"))
    .map((f) => path.join(ROUTERS, folder, f)),
);

describe("one naming rule", () => {
  it("appRouter mounts each `<resource>Router` under its singular key `<resource>`", () => {
    const index = read(path.join(ROUTERS, "index.ts"));
    const mounts = [...index.matchAll(/^\s+(\w+): (\w+)Router,$/gm)].map(([, key, name]) => ({ key, name }));
    expect(mounts.length).toBeGreaterThan(5);
    const wrong = mounts.filter(({ key, name }) => key !== name && !KEY_EXCEPTIONS.has(key));
    expect(wrong).toEqual([]);
  });

  it("each router folder holds router.ts, <folder>.schema.ts and <folder>.service.ts", () => {
    const missing = folders.flatMap((folder) =>
      ["router.ts", `${folder}.schema.ts`, `${folder}.service.ts`].map((f) => path.join(ROUTERS, folder, f)).filter((f) => !existsSync(f)),
    );
    expect(missing).toEqual([]);
  });

  it("a further part's schemas sit beside it: <part>.schema.ts next to <part>.ts", () => {
    const lonely = schemaFiles.filter((f) => {
      const base = path.basename(f, ".schema.ts");
      return base !== path.basename(path.dirname(f)) && !existsSync(path.join(path.dirname(f), `${base}.ts`));
    });
    expect(lonely).toEqual([]);
  });

  it("procedures take a `…Input` schema and answer a `…Output` contract", () => {
    const wrong = folders.flatMap((folder) => {
      const text = read(path.join(ROUTERS, folder, "router.ts"));
      const inputs = [...text.matchAll(/\.input\((\w+)\)/g)].map((m) => m[1]).filter((n) => !n.endsWith("Input"));
      const outputs = [...text.matchAll(/contract\((\w+)\)/g)].map((m) => m[1]).filter((n) => !n.endsWith("Output"));
      return [...inputs, ...outputs].map((n) => `${folder}/router.ts: ${n}`);
    });
    expect(wrong).toEqual([]);
  });

  it("schemas are camelCase values; their types are the capitalised name, `<Resource>Dto` for an answer", () => {
    const wrong = schemaFiles.flatMap((file) => {
      const text = read(file);
      const values = [...text.matchAll(/^export const (\w+) =/gm)]
        .map((m) => m[1])
        .filter((n) => !/^[a-z][A-Za-z0-9]*$/.test(n) && !/^[A-Z][A-Z0-9_]*$/.test(n));
      const exported = new Set([...text.matchAll(/^export const (\w+) =/gm)].map((m) => m[1]));
      const types = [...text.matchAll(/^export type (\w+) = z\.(?:infer|input|output)<typeof (\w+)>/gm)]
        .filter(([, type, schema]) => exported.has(schema) && !TYPE_EXCEPTIONS.has(type))
        .filter(([, type, schema]) =>
          schema.endsWith("Output") ? type !== `${capitalise(schema.slice(0, -"Output".length))}Dto` : type !== capitalise(schema),
        )
        .map(([, type, schema]) => `${type} for ${schema}`);
      return [...values, ...types].map((n) => `${file}: ${n}`);
    });
    expect(wrong).toEqual([]);
  });
});
