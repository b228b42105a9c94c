import type { FieldIssue } from "../../lib/input";
import type { RuntimeCheck } from "../../trpc/init";
import { EXPIRY_REQUIRED_MESSAGE, findOwnLink, loopIssues } from "./links.service";

// The link checks that need the configuration or the stored link, run on the raw body by
// `runtimeChecks` so their failures are listed with the schema's (decisions §3).

/** POST /links (and each bulk item): no URL may point back at the redirect domain or the link's own domain. */
export const createLinkChecks: RuntimeCheck = (ctx, _actor, raw) => loopIssues(ctx.app.config, raw, raw.domain);

/** PATCH /links/{id}: the loop check, and `expiration_url` on a link that has no expiry stored and gets none. */
export const updateLinkChecks: RuntimeCheck = async (ctx, actor, raw) => {
  const issues: FieldIssue[] = loopIssues(ctx.app.config, raw, raw.domain);
  const wantsFallback = typeof raw.expiration_url === "string" && raw.expires_at === undefined;
  if (wantsFallback && actor && typeof raw.id === "string") {
    const link = await findOwnLink(ctx.app.db, actor, raw.id).catch(() => null);
    if (link && link.expiresAt === null) issues.push({ field: "expiration_url", message: EXPIRY_REQUIRED_MESSAGE, code: "EXPIRATION_URL_WITHOUT_EXPIRY" });
  }
  return issues;
};

/** Linktrees, their items and the account's avatar: no stored URL may point back at the redirect domain. */
export const noLoopChecks: RuntimeCheck = (ctx, _actor, raw) => loopIssues(ctx.app.config, raw);
