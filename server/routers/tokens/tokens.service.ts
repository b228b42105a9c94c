import { and, desc, eq, isNull } from "drizzle-orm";
import type { DbOrTx } from "../../../db/client";
import type { AppServices } from "../../core/services";
import { apiTokens, workspaces } from "../../../db/schema";
import { notFound } from "../../domain/errors";
import { issueToken, type TokenRow } from "../../lib/users";
import type { ApiTokenDto } from "./tokens.schema";
import { grantedScopes, type Scope } from "../../domain/scopes";

const columns = {
  id: apiTokens.id,
  name: apiTokens.name,
  prefix: apiTokens.prefix,
  createdAt: apiTokens.createdAt,
  lastUsedAt: apiTokens.lastUsedAt,
  revokedAt: apiTokens.revokedAt,
  scopes: apiTokens.scopes,
};

/** The record; the hash never leaves this module. */
export const toApiTokenDto = (r: Pick<TokenRow, "id" | "name" | "prefix" | "createdAt" | "lastUsedAt" | "revokedAt" | "scopes">): ApiTokenDto => ({
  id: r.id,
  name: r.name,
  prefix: r.prefix,
  created_at: r.createdAt,
  last_used_at: r.lastUsedAt,
  revoked_at: r.revokedAt,
  scopes: grantedScopes(r.scopes),
});

/** Every token of the user, in every workspace (the free plan's one live token counts them all). */
export async function listTokens(db: DbOrTx, userId: string): Promise<ApiTokenDto[]> {
  const rows = await db.select(columns).from(apiTokens).where(eq(apiTokens.userId, userId)).orderBy(desc(apiTokens.createdAt), desc(apiTokens.id));
  return rows.map(toApiTokenDto);
}

/** The dashboard's list: each record with the workspace it acts in (null: a workspace since deleted). */
export async function listTokensWithWorkspace(
  db: DbOrTx,
  userId: string,
): Promise<(ApiTokenDto & { workspace: { id: string; name: string | null; personal: boolean } | null })[]> {
  const rows = await db
    .select({ ...columns, workspaceId: apiTokens.workspaceId, workspaceName: workspaces.name, personal: workspaces.personal })
    .from(apiTokens)
    .leftJoin(workspaces, eq(workspaces.id, apiTokens.workspaceId))
    .where(eq(apiTokens.userId, userId))
    .orderBy(desc(apiTokens.createdAt), desc(apiTokens.id));
  return rows.map((r) => ({
    ...toApiTokenDto(r),
    workspace: r.personal === null ? null : { id: r.workspaceId, name: r.workspaceName, personal: r.personal },
  }));
}

/**
 * The token is bound to `workspaceId`, the workspace the request acts in (docs/teams-and-domains.md; the
 * command line: the personal one). The plan's live-token limit counts every workspace and is
 * enforced under a lock in issueToken (409 TOKEN_LIMIT_REACHED).
 */
export async function createToken(
  db: DbOrTx,
  userId: string,
  name: string,
  workspaceId?: string,
  scopes?: Scope[],
): Promise<{ token: string; record: ApiTokenDto }> {
  // Every scope asked for is stored as null, the classic token: it also gets scopes added later.
  const stored = scopes === undefined || grantedScopes(scopes).length === grantedScopes(null).length ? null : scopes;
  const { token, record } = await issueToken(db, userId, name, workspaceId, stored);
  return { token, record: toApiTokenDto(record) };
}

/**
 * Sets revoked_at once (204 again when already revoked); another user's token is not found. Answers
 * once every instance dropped its cached token look-ups (auth.ts): 401 from the next request on.
 */
export async function revokeToken(app: Pick<AppServices, "db" | "invalidateCredentials">, userId: string, id: string): Promise<void> {
  const db = app.db;
  const [row] = await db
    .select({ id: apiTokens.id })
    .from(apiTokens)
    .where(and(eq(apiTokens.id, id), eq(apiTokens.userId, userId)));
  if (!row) throw notFound();
  await db
    .update(apiTokens)
    .set({ revokedAt: Date.now() })
    .where(and(eq(apiTokens.id, id), isNull(apiTokens.revokedAt)));
  await app.invalidateCredentials();
}
