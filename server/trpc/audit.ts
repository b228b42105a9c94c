import { isDeepStrictEqual } from "node:util";
import { eq, sql, type Placeholder } from "drizzle-orm";
import type { PgInsertValue } from "drizzle-orm/pg-core";
import type { OpenApiMeta } from "trpc-openapi";
import type { DbOrTx } from "../../db/client";
import { apiTokens, auditEvents, users } from "../../db/schema";
import type { Actor } from "../domain/types";
import { BASE36, randomString } from "../lib/ids";
import { isObject } from "../lib/input";

/**
 * The audit log's one writer. Every mutation that succeeds is looked up here by its procedure path
 * and meta: a rule of its own (`meta.audit`, or RULES below for procedures without a REST path), or
 * one derived from its REST method and path (POST /links → link.created, PATCH /links/{id} →
 * link.updated, POST /domains/{id}/verify → domain.verified). So a new REST write is logged with no
 * code of its own, and a test walks every mutation to make sure each one has been decided.
 * `changes` holds member names only, never their values, so no password or secret can reach the log;
 * an import holds its counts instead.
 */
export type AuditEvent = {
  workspaceId: string;
  action: string;
  targetType: string;
  targetId: string | null;
  changes: string[] | Record<string, number> | null;
};

/** A call that succeeded: who, with what, what it answered, when it began (ms), and its target as read before it (when its procedure reads one). */
export type AuditCall = { actor: Actor; input: Record<string, unknown>; output: unknown; db: DbOrTx; startedAt: number; before?: unknown };
export type AuditRule = (call: AuditCall) => AuditEvent[] | Promise<AuditEvent[]>;

type MetaLike = { openapi?: OpenApiMeta["openapi"]; audit?: AuditRule | false };

/** Member names of an input, less the path parameters that name the target. */
export const memberNames = (input: Record<string, unknown>, omit: readonly string[] = []) =>
  Object.keys(input)
    .filter((k) => !omit.includes(k))
    .sort();

/**
 * The members of `names` the change moved: those whose value in the answer differs from the target
 * as read before, and those the answer does not show (a password: a write can only be taken as a
 * change). Without a snapshot, every name.
 */
export function changedOnly(names: string[], before: unknown, output: unknown): string[] {
  if (!isObject(before) || !isObject(output)) return names;
  const moved = (k: string) => k in output && k in before && !isDeepStrictEqual(before[k], output[k]);
  const changed = names.filter((k) => !(k in output) || !(k in before) || moved(k));
  // A member another one's write clears with it is a change too, when it did move.
  const implied = changed.flatMap((k) => IMPLIED_MEMBERS[k] ?? []).filter((k) => !changed.includes(k) && moved(k));
  return [...changed, ...implied].sort();
}

/** Members a write of another member changes with it: a link's expiry cleared clears its expiration URL. */
const IMPLIED_MEMBERS: Record<string, readonly string[]> = { expires_at: ["expiration_url"] };

/** An edit of a target read before it that moved no member (the values sent were the ones there): nothing to log. */
export const movedNothing = (before: unknown, changes: readonly string[]) => before !== undefined && changes.length === 0;

/** True for a target read before the change that was already gone: deleting it again is no event. */
const alreadyGone = (before: unknown) => isObject(before) && ((before.deleted_at ?? null) !== null || (before.revoked_at ?? null) !== null);

const idOf = (output: unknown): string | null => {
  if (!isObject(output)) return null;
  if (typeof output.id === "string") return output.id;
  if (isObject(output.record) && typeof output.record.id === "string") return output.record.id;
  return null;
};

const singular = (word: string) => (word.endsWith("ies") ? `${word.slice(0, -3)}y` : word.endsWith("s") ? word.slice(0, -1) : word);
const pastTense = (verb: string) => {
  const [first, ...rest] = verb.split(/[-_]/);
  const done = first.endsWith("e") ? `${first}d` : first.endsWith("y") ? `${first.slice(0, -1)}ied` : `${first}ed`;
  return [done, ...rest].join("_");
};

/**
 * The rule a REST write gets from its method and path: the last plural segment is the target type;
 * a last segment that is not a plural (POST /domains/{id}/verify) is a verb done to the one before it.
 */
export function derivedRule(method: string, path: string): AuditRule | null {
  if (method === "GET") return null;
  const parts = path.split("/").filter(Boolean);
  const params = parts.filter((p) => p.startsWith("{")).map((p) => p.slice(1, -1));
  const literals = parts.filter((p) => !p.startsWith("{"));
  const lastPart = parts.at(-1) ?? "";
  const lastLiteral = literals.at(-1) ?? "";
  const verb = !lastPart.startsWith("{") && !lastLiteral.endsWith("s") && literals.length > 1 ? lastLiteral : null;
  const type = singular(verb ? literals.at(-2)! : lastLiteral);
  const targetParam = lastPart.startsWith("{") || verb ? params.at(-1) : undefined;
  const action = verb ? pastTense(verb) : method === "POST" ? "created" : method === "DELETE" ? "deleted" : "updated";
  return ({ actor, input, output, before }) => {
    const targetId = targetParam ? String(input[targetParam] ?? "") || null : idOf(output);
    if (method === "DELETE" && alreadyGone(before)) return [];
    const changes = method === "DELETE" ? [] : changedOnly(memberNames(input, params), before, output);
    if (method === "PATCH" && movedNothing(before, changes)) return [];
    return [{ workspaceId: actor.workspaceId, action: `${type}.${action}`, targetType: type, targetId, changes }];
  };
}

/** Mutations without a REST path (the dashboard's own) and those whose path says too little. */
const RULES: Record<string, AuditRule | false> = {
  // A bulk call logs each link it created as POST /links would (only an import is one event with its
  // counts): `created` holds the links of the items without an error, in the input's order.
  "link.bulk": ({ actor, input, output }) => {
    if (!isObject(output) || !Array.isArray(output.created)) return [];
    const items = Array.isArray(input.links) ? (input.links as unknown[]) : [];
    const failed = new Set(Array.isArray(output.errors) ? output.errors.map((e) => (isObject(e) ? e.index : undefined)) : []);
    const made = items.flatMap((item, i) => (failed.has(i) ? [] : [item]));
    return output.created.map((link, k) => ({
      workspaceId: actor.workspaceId,
      action: "link.created",
      targetType: "link",
      targetId: idOf(link),
      changes: isObject(made[k]) ? memberNames(made[k]) : [],
    }));
  },
  // The dashboard's bulk actions, on chosen links or on every link a filter matches: the link store
  // logs each link it changed, as a single edit or delete would be, in the change's transaction.
  "link.bulkTag": false,
  "link.bulkExpiry": false,
  "link.bulkDelete": false,
  "link.bulkArchive": false,
  "link.bulkTagMatching": false,
  "link.bulkExpiryMatching": false,
  "link.bulkDeleteMatching": false,
  "link.bulkArchiveMatching": false,
  // A look-up that verified nothing, or a domain verified before, changes nothing: only the call that
  // verified it (its verified_at is this call's) is an event.
  "domain.verify": ({ actor, input, output, startedAt }) =>
    isObject(output) && output.verified === true && typeof output.verified_at === "number" && output.verified_at >= startedAt
      ? [{ workspaceId: actor.workspaceId, action: "domain.verified", targetType: "domain", targetId: String(input.id ?? "") || null, changes: [] }]
      : [],
  "linktree.reorderItems": ({ actor, input }) => [
    { workspaceId: actor.workspaceId, action: "linktree.updated", targetType: "linktree", targetId: String(input.id ?? "") || null, changes: ["items"] },
  ],
  // Reading a file changes nothing; the import itself is one event with its counts, written when it ends.
  "imports.inspect": false,
  "imports.start": false,
  "imports.create": false,
  // Sign-in, the caller's own account and sessions, and abuse reports are not a workspace's doing.
  "auth.start": false,
  "auth.verify": false,
  "auth.logout": false,
  "auth.oidcStart": false,
  "auth.oidcCallback": false,
  "account.update": false,
  "account.changeEmail": false,
  "account.verifyEmail": false,
  "account.delete": false,
  "account.setAvatar": false,
  "session.revoke": false,
  "report.create": false,
  "report.dismiss": false,
  "report.deleteLink": false,
  "workspace.switch": false,
  // A test delivery and a destination check change nothing of the workspace.
  "webhook.test": false,
  "health.check": false,
};

/** The rule of a procedure; undefined: none decided (the walk over every mutation fails on it). */
export function auditRuleOf(path: string, meta: MetaLike | undefined): AuditRule | false | undefined {
  if (meta?.audit !== undefined) return meta.audit;
  if (Object.hasOwn(RULES, path)) return RULES[path];
  if (meta?.openapi) return derivedRule(meta.openapi.method, meta.openapi.path) ?? undefined;
  return undefined;
}

/**
 * An event about an API token, logged in the workspace the token acts in (which may not be the
 * session's current one); none for a token that is gone.
 */
export async function tokenEvents(db: DbOrTx, tokenId: string, action: string, changes: string[]): Promise<AuditEvent[]> {
  const [row] = await db.select({ workspaceId: apiTokens.workspaceId }).from(apiTokens).where(eq(apiTokens.id, tokenId)).limit(1);
  return row?.workspaceId ? [{ workspaceId: row.workspaceId, action, targetType: "token", targetId: tokenId, changes }] : [];
}

/** The writer the audit middleware calls; a test swaps it for one that fails, to see the change go too. */
export const auditWriter = { write: (db: DbOrTx, actor: Pick<Actor, "userId" | "tokenId">, events: AuditEvent[]) => writeAuditEvents(db, actor, events) };

/** Writes events as done by `actor` (its e-mail as it is now, the token when a token did it). */
export async function writeAuditEvents(db: DbOrTx, actor: Pick<Actor, "userId" | "tokenId">, events: AuditEvent[], at = Date.now()): Promise<void> {
  // A statement's bind parameters stay far below PostgreSQL's limit (a bulk action may change thousands of links).
  for (let i = 0; i < events.length; i += 1000) await auditEventsInsert(db, actor, events.slice(i, i + 1000), at);
}

/** The values of an audit row, by column: the row of `event` done by `actor` at `at`. */
const auditValues = (actor: Pick<Actor, "userId" | "tokenId">, e: AuditEvent, at: number) => ({
  id: randomString(8, BASE36),
  workspaceId: e.workspaceId,
  at,
  actorUserId: actor.userId,
  actorTokenId: actor.tokenId ?? null,
  action: e.action,
  targetType: e.targetType,
  targetId: e.targetId,
  changes: e.changes,
});
type AuditValues = ReturnType<typeof auditValues>;
const AUDIT_COLUMNS = [
  "id",
  "workspaceId",
  "at",
  "actorUserId",
  "actorTokenId",
  "action",
  "targetType",
  "targetId",
  "changes",
] as const satisfies readonly (keyof AuditValues)[];

/** A row of the insert, its values given by `v`; the e-mail is read by the insert itself (one round trip per audited change). */
const auditRow = (v: { [K in keyof AuditValues]: AuditValues[K] | Placeholder }) => ({
  ...v,
  actorEmail: sql`(select ${users.email} from ${users} where ${users.id} = ${v.actorUserId})`,
});

/**
 * The insert of `writeAuditEvents`, not yet run: a caller may run it inside its own statement (a
 * data-modifying CTE), so the events land with the change they record. `events` must not be empty.
 */
export function auditEventsInsert(db: DbOrTx, actor: Pick<Actor, "userId" | "tokenId">, events: AuditEvent[], at = Date.now()) {
  return db.insert(auditEvents).values(events.map((e) => auditRow(auditValues(actor, e, at)) as PgInsertValue<typeof auditEvents>));
}

/**
 * `auditEventsInsert` of `n` events with every value a placeholder, for a statement prepared once and
 * run many times with `auditEventParams` of the same number of events.
 */
export function auditEventsInsertShape(db: DbOrTx, n: number) {
  const row = (i: number) => Object.fromEntries(AUDIT_COLUMNS.map((k) => [k, sql.placeholder(`audit_${i}_${k}`)]));
  return db
    .insert(auditEvents)
    .values(Array.from({ length: n }, (_, i) => auditRow(row(i) as Parameters<typeof auditRow>[0]) as PgInsertValue<typeof auditEvents>));
}

/** The placeholders' values of `auditEventsInsertShape` for `events`. */
export function auditEventParams(actor: Pick<Actor, "userId" | "tokenId">, events: AuditEvent[], at: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  events.forEach((e, i) => {
    for (const [k, v] of Object.entries(auditValues(actor, e, at))) out[`audit_${i}_${k}`] = v;
  });
  return out;
}
