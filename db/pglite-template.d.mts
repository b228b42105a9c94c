// Types of db/pglite-template.mjs (plain JavaScript: scripts/ensure-build.mjs runs it without a loader).
export declare const migrationsFolder: string;
export declare const templateRoot: string;
export declare function templateKey(folder?: string): string;
export declare function findTemplate(root?: string): string | undefined;
export declare function ensureTemplate(root?: string): Promise<string>;
export declare function makeMigrated(target: string, opts?: { folder?: string; shared?: boolean; empty?: boolean }): Promise<void>;
export declare function prepareDataDir(dir: string, template: string | undefined, opts?: { empty?: boolean }): Promise<void>;
