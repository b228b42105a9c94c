import { and, eq, inArray, sql } from "drizzle-orm";
import type { DbOrTx } from "../../../db/client";
import { links, type WebhookEvent } from "../../../db/schema";
import { base, type Config } from "../../config";
import { AppError, notFound, validation, type Fields } from "../../domain/errors";
import { hashPassword } from "../../lib/crypto";
import { consume } from "../../lib/rate-limit";
import { isOnHost } from "../../lib/urls";
import { isObject, type FieldIssue } from "../../lib/input";
import type { AppServices } from "../../core/services";
import { anyWebhookFor, enqueueWebhookEvent, enqueueWebhookEvents, webhookEventInsert } from "../../core/webhook-outbox";
import { auditEventParams, auditEventsInsertShape, writeAuditEvents } from "../../trpc/audit";
import type { AuditHandoff } from "../../trpc/init";
import { newLinkId } from "../../lib/ids";
import { domainNames, usableDomain } from "../domains";
import { lockWorkspaceOrNotFound } from "../workspaces";
import type { Actor, RequestInfo } from "../../trpc/context";
import { inLinkTransaction, linkTx, type LinkRow, type NewLink } from "./link-store";
import * as store from "./link-store";
import { sameUrl, VARIANT_URL_MESSAGE, type CreateLinkInput, type LinkDto, type UpdateLinkInput } from "./links.schema";

export const PUBLIC_WORKSPACE_ID = "public";

/** The short URL on the default redirect domain, or on the branded domain `domainName`. */
export const shortUrl = (config: Config, slug: string, domainName?: string | null) =>
  domainName ? `${config.customDomainScheme ?? "https"}://${domainName}/${slug}` : `${base(config.redirectUrl)}/${slug}`;

/**
 * The public shape of a link. The password hash never leaves this module. A link on a branded
 * domain needs that domain's name (`linkDtos` looks names up); a deleted link whose domain was
 * removed since has none left and shows the default domain.
 */
export function toLinkDto(row: LinkRow, config: Config, domainName?: string | null): LinkDto {
  return {
    id: row.id,
    slug: row.slug,
    url: row.url,
    short_url: shortUrl(config, row.slug, domainName),
    redirect_domain: domainName || config.redirectDomain,
    tags: row.tags ?? [],
    expires_at: row.expiresAt,
    expiration_url: row.expirationUrl,
    targeting: row.targeting ?? null,
    has_password: row.passwordHash !== null,
    og_title: row.ogTitle,
    og_description: row.ogDescription,
    og_image: row.ogImage,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    deleted_at: row.deletedAt,
    // Absent rather than null (or false) when unset, so links without them read as they always did.
    ...(row.title !== null ? { title: row.title } : {}),
    ...(row.forwardQuery ? { forward_query: true as const } : {}),
    ...(row.variants ? { variants: row.variants.map((v) => ({ url: v.url, weight: v.weight })) } : {}),
    ...(row.archivedAt !== null ? { archived: true as const } : {}),
  };
}

/** `toLinkDto` for rows of any domain: one query for the names of their branded domains, none when there are none. */
export async function linkDtos(db: DbOrTx, config: Config, rows: LinkRow[]): Promise<LinkDto[]> {
  const ids = rows.flatMap((r) => (r.domainId === null ? [] : [r.domainId]));
  const names = await domainNames(db, ids);
  return rows.map((r) => toLinkDto(r, config, r.domainId === null ? null : names.get(r.domainId)));
}

/** Stored URLs must not point back at the redirect domain (no loops), nor at the branded domain the link is on. */
export function loopIssues(config: Config, input: Record<string, unknown>, domainName?: unknown): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const hosts = typeof domainName === "string" && domainName ? [config.redirectDomain, domainName] : [config.redirectDomain];
  const check = (field: string, value: unknown, label = field) => {
    for (const host of hosts) {
      if (typeof value === "string" && isOnHost(value, host)) issues.push({ field, message: `${label} must not point at the redirect domain ${host}` });
    }
  };
  for (const name of ["url", "expiration_url", "og_image", "avatar_url"]) check(name, input[name]);
  // Raw input too (runtimeChecks): members are not yet known to have their types.
  const t = isObject(input.targeting) ? input.targeting : null;
  if (t) {
    check("targeting", t.ios, "targeting.ios");
    check("targeting", t.android, "targeting.android");
    if (isObject(t.geo)) for (const [k, v] of Object.entries(t.geo)) check("targeting", v, `targeting.geo.${k}`);
    if (isObject(t.languages)) for (const [k, v] of Object.entries(t.languages)) check("targeting", v, `targeting.languages.${k}`);
  }
  if (Array.isArray(input.variants)) input.variants.forEach((v, i) => isObject(v) && check("variants", v.url, `variants.${i}.url`));
  return issues;
}

export function checkNoLoops(config: Config, input: Record<string, unknown>, domainName?: string | null): void {
  const issues = loopIssues(config, input, domainName);
  if (!issues.length) return;
  const fields: Fields = {};
  for (const i of issues) (fields[i.field] ??= []).push(i.message);
  throw validation(fields);
}

/** The columns a new expiry sets: clearing it clears its fallback too, for one link or many. */
export const expirySet = (expiresAt: number | null): Partial<LinkRow> => (expiresAt === null ? { expiresAt, expirationUrl: null } : { expiresAt });

export const EXPIRY_REQUIRED_MESSAGE = "requires expires_at, sent in the same request or already stored";

const expiryRequired = () => new AppError("EXPIRATION_URL_WITHOUT_EXPIRY", { fields: { expiration_url: [EXPIRY_REQUIRED_MESSAGE] } });

/** One link row in a transaction of its own, outside any cache: fixtures of tests and the bench. */
export const insertLink = (db: DbOrTx, values: NewLink): Promise<LinkRow> => db.transaction((tx) => store.insertLink(linkTx(tx), values));

/** A new link in the caller's workspace; without an actor, in the public one, limited per address (`from`). */
export async function createLink(
  app: Pick<AppServices, "config" | "db" | "database" | "invalidateSlugs" | "announceSlugs" | "limits">,
  actor: Actor | null,
  input: CreateLinkInput,
  from: Pick<RequestInfo, "ip">,
  /** Given when no transaction is open around the call: the audit events are this function's to write. */
  audit?: AuditHandoff,
): Promise<LinkDto> {
  if (!actor) await consume(app.limits, "anonymousCreate", from.ip);
  checkNoLoops(app.config, input, input.domain);
  const workspaceId = actor?.workspaceId ?? PUBLIC_WORKSPACE_ID;
  const values = {
    workspaceId,
    url: input.url,
    slug: input.slug,
    tags: input.tags ?? [],
    expiresAt: input.expires_at ?? null,
    expirationUrl: input.expiration_url ?? null,
    targeting: input.targeting ?? null,
    passwordHash: input.password !== undefined ? await hashPassword(input.password) : null,
    ogTitle: input.og_title || null,
    ogDescription: input.og_description || null,
    ogImage: input.og_image ?? null,
    title: input.title || null,
    forwardQuery: input.forward_query ?? false,
    variants: input.variants ?? null,
    archivedAt: input.archived ? Date.now() : null,
  };
  const domainName = input.domain ?? null;
  // Outside a transaction (the usual call), a link on the default domain is made in one statement
  // with its webhook and audit events; a pick that did not hold falls back to the transaction below.
  if (audit && domainName === null) {
    const now = Date.now();
    const id = newLinkId();
    const draft = toLinkDto({ ...values, id, slug: "", domainId: null, kind: "link", createdAt: now, updatedAt: now, deletedAt: null }, app.config);
    const events = await audit.events(draft);
    const audited = audit.actor && events.length ? audit.actor : null;
    const p = sql.placeholder;
    const made = await store.insertLinkAtOnce(
      app,
      { ...values, id, createdAt: now },
      {
        shape: `link.created, audit events ${audited ? events.length : 0}`,
        parts: (slug) => [
          webhookEventInsert(
            p("workspace"),
            "link.created",
            sql`${p("draft")}::jsonb || jsonb_build_object('slug', ${slug}, 'short_url', ${p("short_url")}::text || ${slug})`,
            { ms: p("now"), iso: p("now_iso") },
          ),
          ...(audited ? [auditEventsInsertShape(app.db, events.length)] : []),
        ],
        params: {
          workspace: workspaceId,
          draft: JSON.stringify(draft),
          short_url: shortUrl(app.config, ""),
          now,
          now_iso: new Date(now).toISOString(),
          ...(audited ? auditEventParams(audited, events, now) : {}),
        },
      },
    );
    if (made) return toLinkDto(made, app.config);
  }
  // On a branded domain: checked and share-locked in the same transaction as the insert, so the
  // domain cannot be removed under the new link (DELETE /domains takes the row's update lock).
  const row = await inLinkTransaction(app, async (lt) => {
    let created: LinkRow;
    if (domainName === null) created = await store.insertLink(lt, values);
    else {
      await lockWorkspaceOrNotFound(lt.db, workspaceId); // before the domain's lock, in the order a workspace deletion takes them
      created = await store.insertLink(lt, { ...values, domainId: (await usableDomain(lt.db, workspaceId, domainName)).id });
    }
    const dto = toLinkDto(created, app.config, domainName);
    // Webhook and audit events are written in the change's transaction: one exists exactly when its change does.
    await enqueueWebhookEvent(lt.db, workspaceId, "link.created", dto);
    if (audit?.actor) await writeAuditEvents(lt.db, audit.actor, await audit.events(dto));
    return created;
  });
  return toLinkDto(row, app.config, domainName);
}

/** A link of the actor's workspace (deleted ones included), or 404. */
export async function findOwnLink(db: DbOrTx, actor: Actor, id: string, forUpdate = false): Promise<LinkRow> {
  const q = db
    .select()
    .from(links)
    .where(and(eq(links.id, id), eq(links.workspaceId, actor.workspaceId)))
    .limit(1);
  const [row] = forUpdate ? await q.for("update") : await q;
  if (!row) throw notFound();
  return row;
}

export async function getLink(app: Pick<AppServices, "config" | "db">, actor: Actor, id: string): Promise<LinkDto> {
  return (await linkDtos(app.db, app.config, [await findOwnLink(app.db, actor, id)]))[0];
}

export async function updateLink(app: Pick<AppServices, "config" | "db" | "invalidateSlugs">, actor: Actor, input: UpdateLinkInput): Promise<LinkDto> {
  const { id, domain, ...patch } = input;
  checkNoLoops(app.config, patch, domain);
  const passwordHash = typeof patch.password === "string" ? await hashPassword(patch.password) : patch.password;
  const after = await inLinkTransaction(app, async (lt) => {
    const tx = lt.db;
    const current = await findOwnLink(tx, actor, id, true);
    if (current.deletedAt !== null) throw notFound();
    if (current.kind !== "link") throw new AppError("LINKTREE_LINK_NOT_EDITABLE");
    const set: Partial<LinkRow> = {};
    if (patch.url !== undefined) set.url = patch.url;
    if (patch.slug !== undefined) set.slug = patch.slug;
    if (patch.tags !== undefined) set.tags = patch.tags;
    if (patch.expires_at !== undefined) Object.assign(set, expirySet(patch.expires_at));
    if (patch.expiration_url !== undefined) {
      const expiry = patch.expires_at !== undefined ? patch.expires_at : current.expiresAt;
      if (patch.expiration_url !== null && expiry === null) throw expiryRequired();
      set.expirationUrl = patch.expiration_url;
    }
    if (patch.targeting !== undefined) set.targeting = patch.targeting;
    if (passwordHash !== undefined) set.passwordHash = passwordHash;
    if (patch.og_title !== undefined) set.ogTitle = patch.og_title || null;
    if (patch.og_description !== undefined) set.ogDescription = patch.og_description || null;
    if (patch.og_image !== undefined) set.ogImage = patch.og_image;
    if (patch.title !== undefined) set.title = patch.title || null;
    if (patch.forward_query !== undefined) set.forwardQuery = patch.forward_query;
    if (patch.variants !== undefined) set.variants = patch.variants;
    // Archiving again keeps the first archive time.
    if (patch.archived !== undefined) set.archivedAt = patch.archived ? (current.archivedAt ?? Date.now()) : null;
    // The destination stays one of the variants, whichever of the two this PATCH changes.
    const variants = set.variants !== undefined ? set.variants : current.variants;
    if (variants && !variants.some((v) => sameUrl(v.url, set.url ?? current.url))) {
      throw validation({ [patch.variants !== undefined ? "variants" : "url"]: [VARIANT_URL_MESSAGE] });
    }
    // Another domain (null: the default one) moves the link, slug and all, into that namespace.
    if (domain !== undefined) set.domainId = domain === null ? null : (await usableDomain(tx, current.workspaceId, domain)).id;
    const updated = await store.updateLink(lt, current, set);
    await enqueueWebhookEvent(tx, current.workspaceId, "link.updated", (await linkDtos(tx, app.config, [updated]))[0]);
    return updated;
  });
  return (await linkDtos(app.db, app.config, [after]))[0];
}

/**
 * The webhook events of links just written, in the writing transaction, each with the Link as it
 * now is (`typeOf` names its event). Nothing is built when the workspace has no endpoint for `types`.
 */
async function linkEvents(
  db: DbOrTx,
  config: Config,
  workspaceId: string,
  ids: string[],
  types: readonly WebhookEvent[],
  typeOf: (link: LinkDto) => WebhookEvent,
): Promise<void> {
  if (!ids.length || !(await anyWebhookFor(db, workspaceId, types))) return;
  const rows = await db
    .select()
    .from(links)
    .where(inArray(links.id, [...new Set(ids)]));
  const dtos = await linkDtos(db, config, rows);
  await enqueueWebhookEvents(
    db,
    workspaceId,
    dtos.map((data) => ({ type: typeOf(data), data })),
  );
}

/** A bulk change's events: `link.deleted` for the links it deleted, `link.updated` for the others. */
export async function bulkLinkEvents(db: DbOrTx, config: Config, changed: Pick<LinkRow, "id" | "workspaceId">[]): Promise<void> {
  if (!changed.length) return;
  const ids = changed.map((r) => r.id);
  await linkEvents(db, config, changed[0].workspaceId, ids, ["link.updated", "link.deleted"], (l) => (l.deleted_at === null ? "link.updated" : "link.deleted"));
}

/** `link.created` for each of the links just made (an import's batch). */
export const createdLinkEvents = (db: DbOrTx, config: Config, workspaceId: string, ids: string[]): Promise<void> =>
  linkEvents(db, config, workspaceId, ids, ["link.created"], () => "link.created");

export async function deleteLink(app: Pick<AppServices, "config" | "db" | "invalidateSlugs">, actor: Actor, id: string): Promise<void> {
  // Already deleted: nothing changes, and the answer is 204 again.
  await inLinkTransaction(app, async (lt) => {
    if (!(await store.softDeleteLink(lt, await findOwnLink(lt.db, actor, id, true)))) return;
    const deleted = await findOwnLink(lt.db, actor, id);
    await enqueueWebhookEvent(lt.db, deleted.workspaceId, "link.deleted", (await linkDtos(lt.db, app.config, [deleted]))[0]);
  });
}
