import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

// Every pointer resolves in the repository: a comment either states its rule or names a file that is
// here (docs/, a decision record, a README section), and every link of the README and docs/ reaches
// an existing file and heading. Documents that only some of us have are never cited.

const CODE_ROOTS = ["server", "app", "db", "scripts", "bench", "e2e"];
const CODE_FILE = /\.(ts|tsx|mjs|cjs)$/;

// Files another change is rewriting right now; each still cites an outside document. Remove a file
// from this list once it is clean (the test says so), so that the list only ever shrinks.
const NOT_YET_REWRITTEN = new Set<string>([]);

// Outside documents: the interface and decision notes, numbered sections of them, tracker issues.
// Built from parts so this file does not match itself.
const OUTSIDE = [
  new RegExp(["service", "md"].join("\\.")),
  new RegExp(["decisions", "extensions"].map((d) => `${d}(\\.md)? ?\\u00a7`).join("|")),
  /\u00a7 ?\d/,
  /\b[Ii]ssue \d+\b/,
  new RegExp(["stack", "notes"].join("[ -]")),
  new RegExp(["design", "md"].join("\\.")),
];

function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((f) => path.join(dir, f).split(path.sep).join("/"))
    .filter((f) => !f.includes("node_modules/") && !f.includes("/build/"));
}

const codeFiles = CODE_ROOTS.flatMap(walk).filter((f) => CODE_FILE.test(f));
const markdownFiles = ["README.md", ...walk("docs").filter((f) => f.endsWith(".md"))];

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens. */
const anchor = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- _]/gu, "")
    .replace(/ /g, "-");

function headings(file: string): string[] {
  const text = readFileSync(file, "utf8").replace(/^```[\s\S]*?^```/gm, "");
  return [...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => m[1]);
}

describe("every pointer resolves in the repository", () => {
  it("no comment cites a document outside the repository", () => {
    const offenders: string[] = [];
    for (const file of codeFiles) {
      if (NOT_YET_REWRITTEN.has(file)) continue;
      readFileSync(file, "utf8")
        .split("\n")
        .forEach((line, i) => {
          if (OUTSIDE.some((re) => re.test(line))) offenders.push(`${file}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(offenders).toEqual([]);
  });

  it("the list of files not yet rewritten only holds files that still need it", () => {
    const clean = [...NOT_YET_REWRITTEN].filter((f) => {
      if (!existsSync(f)) return true;
      const text = readFileSync(f, "utf8");
      return !OUTSIDE.some((re) => re.test(text)) && !/README,? Performance/.test(text);
    });
    expect(clean, "clean now: remove them from NOT_YET_REWRITTEN").toEqual([]);
  });

  it("every docs/ file named in the code exists", () => {
    const missing = codeFiles.flatMap((file) =>
      [...readFileSync(file, "utf8").matchAll(/\bdocs\/[\w./-]+\.md\b/g)]
        .map((m) => m[0])
        .filter((p) => !existsSync(p))
        .map((p) => `${file}: ${p}`),
    );
    expect(missing).toEqual([]);
  });

  it("every README section named in the code is a heading of the README", () => {
    const readme = headings("README.md");
    const missing = codeFiles
      .filter((file) => !NOT_YET_REWRITTEN.has(file))
      .flatMap((file) =>
        // `README "Architecture"`, `README, Naming`: the name must begin a heading.
        [...readFileSync(file, "utf8").matchAll(/README,? "?([A-Z][\w ]*[\w])"?/g)]
          .map((m) => m[1])
          .filter((name) => !readme.some((h) => h.startsWith(name)))
          .map((name) => `${file}: README ${name}`),
      );
    expect(missing).toEqual([]);
  });

  it("every link of the README and docs/ reaches a file and a heading", () => {
    const broken: string[] = [];
    for (const file of markdownFiles) {
      const text = readFileSync(file, "utf8").replace(/^```[\s\S]*?^```/gm, "");
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        const [rel, hash] = target.split("#");
        const to = rel ? path.join(path.dirname(file), rel) : file;
        if (!existsSync(to)) broken.push(`${file}: ${target}`);
        else if (hash && to.endsWith(".md") && !headings(to).map(anchor).includes(hash)) broken.push(`${file}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
