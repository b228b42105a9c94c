// Types of slim-node-modules.mjs, for the tests that import it.
export function compactRanges<R extends unknown[]>(rows: R[]): R[];
export function compactGeoData(dataDir: string, outDir?: string, names?: string[]): { before: number; after: number };
export function compressGeoData(dataDir: string, outDir?: string, names?: string[]): { after: number };
export function slimNodeModules(root: string): { removed: number; geoBefore: number; geoAfter: number };
export function compressLocations(dataDir: string, perBlock: number, recordSize: number, outDir?: string): { before: number; after: number };
export function locationBlockFormat(pkgDir: string): { perBlock: number; recordSize: number };
