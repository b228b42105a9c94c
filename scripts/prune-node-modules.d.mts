// Types of prune-node-modules.mjs, for the tests that import it.
export function reachablePackages(root: string, names: string[]): Set<string>;
export function pruneNodeModules(root: string, names: string[]): { kept: number; packages: number; removed: number };
