import type { FieldIssue } from "../../lib/input";
import type { RuntimeCheck } from "../../trpc/init";
import { domainIssue } from "../domains";
import { noLoopChecks } from "../links";

/**
 * A linktree's body: no URL may point back at the redirect domain, and `domain` names a verified
 * domain of the caller's workspace; listed with the schema's failures.
 */
export const linktreeChecks: RuntimeCheck = async (app, actor, raw) => {
  const issues: FieldIssue[] = [...(await noLoopChecks(app, actor, raw))];
  const name = raw.domain;
  if (actor && typeof name === "string" && name && name.length <= 253 && !name.includes("\0")) {
    const problem = await domainIssue(app.db, actor.workspaceId, name);
    if (problem !== null) issues.push({ field: "domain", message: problem });
  }
  return issues;
};
