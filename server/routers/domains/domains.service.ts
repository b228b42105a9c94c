import { and, asc, count, eq, gt, inArray, lte, ne, or, type SQL } from "drizzle-orm";
import type { DbOrTx } from "../../../db/client";
import { domains } from "../../../db/schema";
import type { Config } from "../../config";
import { AppError, isUniqueViolation, notFound, validation } from "../../domain/errors";
import { lookupTxt } from "../../lib/dns";
import { hostNameOf, hostNameProblems } from "../../lib/hostnames";
import { BASE62, newLinkId, randomString } from "../../lib/ids";
import { isOnHost } from "../../lib/urls";
import type { AppServices } from "../../core/services";
import type { Actor } from "../../trpc/context";
import type { RuntimeCheck } from "../../trpc/init";
import type { FieldIssue } from "../../lib/input";
import type { CreateDomainInput, DomainDto, UpdateDomainInput } from "./domains.schema";
import { lockWorkspaceOrNotFound } from "../workspaces";

export type DomainRow = typeof domains.$inferSelect;

/** Where the verification record lives: `_links-verify.<name>`. */
export const verificationName = (name: string) => `_links-verify.${name}`;

export function toDomainDto(row: DomainRow): DomainDto {
  return {
    id: row.id,
    name: row.name,
    verified: row.verified,
    verified_at: row.verifiedAt,
    verification: { type: "TXT", name: verificationName(row.name), value: row.verificationValue },
    not_found_url: row.notFoundUrl,
    created_at: row.createdAt,
  };
}

/** The service's own host names (REDIRECT_URL, APP_URL, API_URL): never a branded domain. */
export const ownHosts = (config: Config) => [...new Set([config.redirectUrl, config.appUrl, config.apiUrl].map(hostNameOf))];

/** An unverified domain is a claim on the name; it lapses this long after it was added. */
export const CLAIM_TTL_MS = 7 * 24 * 3600 * 1000;
/** Unverified (and not lapsed) domains a workspace may hold at once: claims cost nothing, so they are counted. */
export const MAX_UNVERIFIED_DOMAINS = 20;

/** Verified, or claimed less than CLAIM_TTL_MS ago. A lapsed claim is as good as removed: listed nowhere, 404 by id. */
const live = (now: number): SQL => or(eq(domains.verified, true), gt(domains.createdAt, now - CLAIM_TTL_MS))!;
const lapsed = (now: number): SQL => and(eq(domains.verified, false), lte(domains.createdAt, now - CLAIM_TTL_MS))!;

export async function listDomains(app: Pick<AppServices, "db">, actor: Actor): Promise<DomainDto[]> {
  const rows = await app.db
    .select()
    .from(domains)
    .where(and(eq(domains.workspaceId, actor.workspaceId), live(Date.now())))
    .orderBy(asc(domains.name));
  return rows.map(toDomainDto);
}

const taken = (name: string) => new AppError("DOMAIN_TAKEN", { message: `${name} is taken` });

/**
 * Adds an unverified domain: a claim on the name, which only a verification turns into ownership.
 * 409 DOMAIN_TAKEN when any workspace has the name, verified or not (an unverified claim lapses after
 * CLAIM_TTL_MS, so a squatter holds a name a week at most); 409 DOMAIN_LIMIT past
 * MAX_UNVERIFIED_DOMAINS claims. Lapsed claims of the name, and of the
 * workspace, are removed on the way (no link can be on an unverified domain).
 */
export async function createDomain(app: Pick<AppServices, "config" | "db">, actor: Actor, input: CreateDomainInput): Promise<DomainDto> {
  const problems = hostNameProblems(input.name, ownHosts(app.config));
  if (problems.length) throw validation({ name: problems });
  const now = Date.now();
  try {
    const row = await app.db.transaction(async (tx) => {
      // One claim at a time per workspace, so the count below cannot be raced past the limit.
      await lockWorkspaceOrNotFound(tx, actor.workspaceId, "serial");
      await tx.delete(domains).where(and(lapsed(now), or(eq(domains.name, input.name), eq(domains.workspaceId, actor.workspaceId))));
      const [holder] = await tx.select({ id: domains.id }).from(domains).where(eq(domains.name, input.name)).limit(1);
      if (holder) throw taken(input.name);
      const [claims] = await tx
        .select({ n: count() })
        .from(domains)
        .where(and(eq(domains.workspaceId, actor.workspaceId), eq(domains.verified, false)));
      if (claims.n >= MAX_UNVERIFIED_DOMAINS) {
        throw new AppError("DOMAIN_LIMIT", { message: `at most ${MAX_UNVERIFIED_DOMAINS} unverified domains per workspace` });
      }
      const [inserted] = await tx
        .insert(domains)
        .values({
          id: newLinkId(),
          workspaceId: actor.workspaceId,
          name: input.name,
          verificationValue: `links-verify=${randomString(24, BASE62)}`,
          createdAt: now,
        })
        .returning();
      return inserted;
    });
    return toDomainDto(row);
  } catch (e) {
    // Verified elsewhere between the look and the insert cannot happen (a claim is never verified on
    // insert), but this workspace's own claim can race in from a second request.
    if (isUniqueViolation(e, "domains_workspace_name_idx")) throw taken(input.name);
    throw e;
  }
}

/** A live domain of the actor's workspace, or 404 (another workspace's, and a lapsed claim, too). */
export async function findOwnDomain(db: DbOrTx, actor: Actor, id: string, lock?: "update" | "share"): Promise<DomainRow> {
  const q = db
    .select()
    .from(domains)
    .where(and(eq(domains.id, id), eq(domains.workspaceId, actor.workspaceId), live(Date.now())))
    .limit(1);
  const [row] = lock ? await q.for(lock) : await q;
  if (!row) throw notFound();
  return row;
}

/**
 * Looks for the TXT record `verification.name` = `verification.value` (DNS_SERVERS, or the system
 * resolver). Found: verified from now on. Not found (or DNS did not answer): still unverified, 200.
 * A verified domain stays verified: it is answered as it is, without a look-up.
 */
export async function verifyDomain(app: Pick<AppServices, "config" | "db" | "invalidateDomains" | "log">, actor: Actor, id: string): Promise<DomainDto> {
  const row = await findOwnDomain(app.db, actor, id);
  if (row.verified) return toDomainDto(row);
  // Verified by another workspace already: no look-up can change that.
  if (await verifiedElsewhere(app.db, row)) throw taken(row.name);
  const { records, error } = await lookupTxt(verificationName(row.name), { servers: app.config.dnsServers });
  if (!records.includes(row.verificationValue)) {
    if (error && error !== "ENODATA" && error !== "ENOTFOUND") app.log.info({ domain: row.name, dns: error }, "domain verification: DNS did not answer");
    return toDomainDto(row);
  }
  let done: DomainRow | undefined;
  try {
    // The claim must still be live: one that lapsed during the look-up is gone (404 below).
    [done] = await app.db
      .update(domains)
      .set({ verified: true, verifiedAt: Date.now() })
      .where(and(eq(domains.id, row.id), eq(domains.verified, false), live(Date.now())))
      .returning();
  } catch (e) {
    // Another workspace's claim of the same name was verified meanwhile: one owner per name.
    if (isUniqueViolation(e, "domains_verified_name_idx")) throw taken(row.name);
    throw e;
  }
  // A miss for this host may be cached here and on other instances.
  await app.invalidateDomains();
  // Verified meanwhile by a parallel call: that one's time stands.
  return toDomainDto(done ?? (await findOwnDomain(app.db, actor, id)));
}

const verifiedElsewhere = async (db: DbOrTx, row: DomainRow) =>
  (
    await db
      .select({ id: domains.id })
      .from(domains)
      .where(and(eq(domains.name, row.name), eq(domains.verified, true), ne(domains.id, row.id)))
      .limit(1)
  ).length > 0;

/** Hosts a domain's not-found page must not be on: the domain itself and the redirect domain (it could send visitors round in circles). */
const notFoundUrlIssues = (config: Config, domainName: string, url: unknown): FieldIssue[] =>
  [domainName, config.redirectDomain].flatMap((host) =>
    typeof url === "string" && isOnHost(url, host) ? [{ field: "not_found_url", message: `must not point at ${host} itself` }] : [],
  );

/** POST /domains, before the schema (runtimeChecks): "not one of our own hosts" needs the configuration. */
export const createDomainChecks: RuntimeCheck = (app, _actor, raw) => {
  if (typeof raw.name !== "string" || hostNameProblems(raw.name, []).length) return [];
  return hostNameProblems(raw.name, ownHosts(app.config)).map((message) => ({ field: "name", message }));
};

/** PATCH /domains/{id}, before the schema: the not-found page's host needs the stored domain. */
export const updateDomainChecks: RuntimeCheck = async (app, actor, raw) => {
  if (!actor || typeof raw.id !== "string" || typeof raw.not_found_url !== "string") return [];
  const row = await findOwnDomain(app.db, actor, raw.id).catch(() => null);
  return row ? notFoundUrlIssues(app.config, row.name, raw.not_found_url) : [];
};

export async function updateDomain(app: Pick<AppServices, "config" | "db" | "invalidateDomains">, actor: Actor, input: UpdateDomainInput): Promise<DomainDto> {
  const row = await app.db.transaction(async (tx) => {
    const current = await findOwnDomain(tx, actor, input.id, "update");
    if (input.not_found_url === undefined) return current;
    const loops = notFoundUrlIssues(app.config, current.name, input.not_found_url);
    if (loops.length) throw validation({ not_found_url: loops.map((i) => i.message) });
    const [updated] = await tx.update(domains).set({ notFoundUrl: input.not_found_url }).where(eq(domains.id, current.id)).returning();
    return updated;
  });
  await app.invalidateDomains();
  return toDomainDto(row);
}

/**
 * The domain a link may be put on: a verified domain of the actor's workspace with this name, with
 * a share lock (so it cannot be deleted before the link is written). Anything else, including
 * another workspace's domain and any domain for an anonymous caller: 400 VALIDATION_FAILED naming `domain`.
 */
export async function usableDomain(tx: DbOrTx, workspaceId: string, name: string): Promise<DomainRow> {
  const [row] = await tx
    .select()
    .from(domains)
    .where(and(eq(domains.name, name), eq(domains.workspaceId, workspaceId), live(Date.now())))
    .limit(1)
    .for("share");
  const problem = domainProblem(name, row);
  if (problem !== null) throw validation({ domain: [problem] });
  return row;
}

/** Why a link cannot go on domain `name` of this workspace, or null when it can. */
const domainProblem = (name: string, row: DomainRow | undefined): string | null => {
  // Plain words: the dashboard's link form shows these as they are.
  if (!row) return `${name} is not a domain of this workspace: add it on the Domains page and verify it`;
  if (!row.verified) return `${name} is not verified yet: publish its TXT record, then verify the domain on the Domains page`;
  return null;
};

/** `usableDomain`'s answer without the lock, for checks made before the body is parsed. */
export async function domainIssue(db: DbOrTx, workspaceId: string, name: string): Promise<string | null> {
  const [row] = await db
    .select()
    .from(domains)
    .where(and(eq(domains.name, name), eq(domains.workspaceId, workspaceId), live(Date.now())))
    .limit(1);
  return domainProblem(name, row);
}

/** Names of these domains by id (a link's `redirect_domain`). */
export async function domainNames(db: DbOrTx, ids: string[]): Promise<Map<string, string>> {
  if (!ids.length) return new Map();
  const rows = await db
    .select({ id: domains.id, name: domains.name })
    .from(domains)
    .where(inArray(domains.id, [...new Set(ids)]));
  return new Map(rows.map((r) => [r.id, r.name]));
}
