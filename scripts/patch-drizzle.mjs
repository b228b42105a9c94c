// Runs after `npm install` / `npm ci` (postinstall): makes drizzle-orm 0.45.4's `is()` remember its answers.
//
// Drizzle asks `is(value, Class)` for every fragment of every query it builds, often against several
// classes in turn. When `instanceof` fails (most of the time: a parameter is not a column, a column is
// not SQL), `is()` walks the value's constructor chain comparing entity kinds. Building one link insert
// (a statement of 43 parameters) took 230 µs, 35 % of it in `is()`, about a fifth of a created link's
// server time. The answer depends only on the value's prototype and the class's entity kind, and class
// chains do not change once defined, so it is kept per prototype (a WeakMap) and kind: 230 → 150 µs.
// Every answer stays what the walk gives (db/drizzle-is.test.ts); a value without a prototype, on which
// the walk threw, is no entity.
//
// Exact text, so another version of drizzle-orm stops the install here instead of running unmended
// (docs/decisions/024-dependencies-mended-in-place.md).
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const MARK = "/* mended by scripts/patch-drizzle.mjs */";
const before = `  let cls = Object.getPrototypeOf(value).constructor;
  if (cls) {
    while (cls) {
      if (entityKind in cls && cls[entityKind] === type[entityKind]) {
        return true;
      }
      cls = Object.getPrototypeOf(cls);
    }
  }
  return false;
}
`;
const after = `  ${MARK}
  const proto = Object.getPrototypeOf(value);
  if (proto === null) return false;
  const kind = type[entityKind];
  let answers = isAnswers.get(proto);
  if (answers === undefined) isAnswers.set(proto, (answers = new Map()));
  let answer = answers.get(kind);
  if (answer === undefined) answers.set(kind, (answer = isOfKind(proto, kind)));
  return answer;
}
const isAnswers = new WeakMap();
function isOfKind(proto, kind) {
  for (let cls = proto.constructor; cls; cls = Object.getPrototypeOf(cls)) if (entityKind in cls && cls[entityKind] === kind) return true;
  return false;
}
`;

// npm runs install scripts in the project's root.
const root = path.resolve("node_modules/drizzle-orm");
const { version } = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
if (version !== "0.45.4") {
  console.error(
    `scripts/patch-drizzle.mjs: written for drizzle-orm 0.45.4, found ${version}: check whether is() is still slow, then update or drop this script`,
  );
  process.exit(1);
}
for (const file of ["entity.js", "entity.cjs"]) {
  const p = path.join(root, file);
  const text = readFileSync(p, "utf8");
  if (text.includes(MARK)) continue;
  if (text.split(before).length !== 2) {
    console.error(`scripts/patch-drizzle.mjs: the text to mend is not in ${p} exactly once:\n${before}`);
    process.exit(1);
  }
  writeFileSync(p, text.replace(before, after));
}
