import type { FieldIssue } from "../../lib/input";
import type { RuntimeCheck } from "../../trpc/init";
import type { AppServices } from "../../core/services";
import type { Actor } from "../../trpc/context";
import { domainIssue } from "../domains";
import { EXPIRY_REQUIRED_MESSAGE, findOwnLink, loopIssues, PUBLIC_WORKSPACE_ID } from "./links.service";

// The link checks that need the configuration or the stored link, run on the raw body by
// `runtimeChecks` so their failures are listed with the schema's (docs/decisions/014-errors-list-every-failing-field.md).

/** `domain` names a verified domain of the caller's workspace (the schema checks only its shape). */
async function domainIssues(app: Pick<AppServices, "db">, actor: Actor | null, raw: Record<string, unknown>): Promise<FieldIssue[]> {
  const name = raw.domain;
  if (typeof name !== "string" || !name || name.length > 253 || name.includes("\0")) return [];
  const problem = await domainIssue(app.db, actor?.workspaceId ?? PUBLIC_WORKSPACE_ID, name);
  return problem === null ? [] : [{ field: "domain", message: problem }];
}

/** POST /links (and each bulk item): no URL may point back at the redirect domain or the link's own domain; the domain is usable. */
export const createLinkChecks: RuntimeCheck = async (app, actor, raw) => [...loopIssues(app.config, raw, raw.domain), ...(await domainIssues(app, actor, raw))];

/** PATCH /links/{id}: the loop check, and `expiration_url` on a link that has no expiry stored and gets none. */
export const updateLinkChecks: RuntimeCheck = async (app, actor, raw) => {
  const issues: FieldIssue[] = [...loopIssues(app.config, raw, raw.domain), ...(await domainIssues(app, actor, raw))];
  const wantsFallback = typeof raw.expiration_url === "string" && raw.expires_at === undefined;
  if (wantsFallback && actor && typeof raw.id === "string") {
    const link = await findOwnLink(app.db, actor, raw.id).catch(() => null);
    if (link && link.expiresAt === null) issues.push({ field: "expiration_url", message: EXPIRY_REQUIRED_MESSAGE, code: "EXPIRATION_URL_WITHOUT_EXPIRY" });
  }
  return issues;
};

/** Linktrees, their items and the account's avatar: no stored URL may point back at the redirect domain. */
export const noLoopChecks: RuntimeCheck = (app, _actor, raw) => loopIssues(app.config, raw);
