import type { Db } from "../../../db/client";

type Step = { method: PropertyKey; args: unknown[] };

/**
 * `db` whose `select` queries fail while `fail()` answers a (rejecting) promise, and run for real
 * when it answers undefined. Decided when a query runs, not when it is built, so it holds for
 * queries prepared once and executed many times (the redirect host's link reads) as for plain ones.
 */
export function withFailingReads(db: Db, fail: () => Promise<never> | undefined): Db {
  // The query as built so far, replayed on the real database when it is allowed to run.
  const replay = (steps: Step[]) => steps.reduce<any>((built, s) => built[s.method](...s.args), db);
  const chain = (steps: Step[]): unknown =>
    new Proxy(
      {},
      {
        get(_, prop) {
          if (prop === "then") return (ok: (v: unknown) => unknown, ko: (e: unknown) => unknown) => (fail() ?? replay(steps)).then(ok, ko);
          if (prop === "prepare")
            return (name: string) => {
              let real: { execute(p?: unknown): Promise<unknown> } | undefined;
              return { execute: (params?: unknown) => fail() ?? (real ??= replay(steps).prepare(name)).execute(params) };
            };
          return (...args: unknown[]) => chain([...steps, { method: prop, args }]);
        },
      },
    );
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === "select") return (...args: unknown[]) => chain([{ method: "select", args }]);
      return Reflect.get(target, prop, receiver);
    },
  });
}
