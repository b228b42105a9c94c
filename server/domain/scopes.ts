/** What an API token may do. A token made without a list has every scope (the classic token). */
export const SCOPES = [
  "links:read",
  "links:write",
  "analytics:read",
  "linktrees:read",
  "linktrees:write",
  "domains:read",
  "domains:write",
  "webhooks:read",
  "webhooks:write",
] as const;

export type Scope = (typeof SCOPES)[number];

export const isScope = (s: unknown): s is Scope => typeof s === "string" && (SCOPES as readonly string[]).includes(s);

/** The scopes a stored list grants: null (a token made before scopes, or with none asked for) grants all. */
export const grantedScopes = (stored: readonly string[] | null | undefined): Scope[] =>
  stored == null ? [...SCOPES] : SCOPES.filter((s) => stored.includes(s));
