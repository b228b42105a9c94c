import { z } from "zod";
import { and, arrayContains, desc, eq, ilike, isNull, lt, or, sql } from "drizzle-orm";
import { domains, links } from "../../../db/schema";
import { text } from "../../lib/input";
import { authedProcedure, contract } from "../../trpc/init";
import type { AppServices } from "../../core/services";
import type { Actor } from "../../trpc/context";
import { linkOutput, slugSchema, TAG_RE } from "./links.schema";
import { linkDtos } from "./links.service";

// Dashboard-only procedures (no openapi meta): the typed client and Remix loaders use them.

export const searchInput = z
  .object({
    q: text().max(200).optional(),
    tag: text().regex(TAG_RE, "must be 1-24 characters of 0-9, a-z and -").optional(),
    /** Opaque: `<created_at>_<id>` of the last link of the previous page. */
    cursor: text()
      .regex(/^\d{1,16}_[0-9a-z]{8}$/, "invalid cursor")
      .optional(),
    limit: z.number().int().min(1).max(100).default(25),
  })
  .strict();

const searchOutput = z.object({ links: z.array(linkOutput), next_cursor: z.string().nullable(), tags: z.array(z.string()) });

/** `%` and `_` typed by the user are literal characters, not wildcards. */
const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => "\\" + c);

export async function searchLinks(app: AppServices, actor: Actor, input: z.output<typeof searchInput>) {
  const own = and(eq(links.workspaceId, actor.workspaceId), eq(links.kind, "link"), isNull(links.deletedAt));
  const where = [own];
  const q = input.q?.trim().toLowerCase();
  if (q) {
    const like = `%${likeEscape(q)}%`;
    where.push(or(ilike(links.slug, like), ilike(links.url, like), arrayContains(links.tags, [q])));
  }
  if (input.tag) where.push(arrayContains(links.tags, [input.tag]));
  if (input.cursor) {
    const [at, id] = input.cursor.split("_");
    const createdAt = Number(at);
    where.push(or(lt(links.createdAt, createdAt), and(eq(links.createdAt, createdAt), lt(links.id, id))));
  }
  const rows = await app.db
    .select()
    .from(links)
    .where(and(...where))
    .orderBy(desc(links.createdAt), desc(links.id))
    .limit(input.limit + 1);
  const page = rows.slice(0, input.limit);
  const last = page[page.length - 1];
  const tagRows = await app.db
    .selectDistinct({ tag: sql<string>`unnest(${links.tags})` })
    .from(links)
    .where(own);
  return {
    links: await linkDtos(app.db, app.config, page),
    next_cursor: rows.length > input.limit && last ? `${last.createdAt}_${last.id}` : null,
    tags: tagRows.map((r) => r.tag).sort(),
  };
}

export const suggestInput = z
  .object({
    q: text().max(200).default(""),
    limit: z.number().int().min(1).max(20).default(10),
  })
  .strict();

const suggestOutput = z.object({
  links: z.array(z.object({ id: z.string(), slug: z.string(), short_url: z.string(), url: z.string() })),
});

/**
 * A few links for a picker, whatever the workspace's size: an exact slug first, then the newest
 * whose slug, destination, title or share-card title holds the text. Only a page of rows is read (no
 * tags, no counts), so each keystroke costs the same at ten links as at a hundred thousand.
 */
export async function suggestLinks(app: AppServices, actor: Actor, input: z.output<typeof suggestInput>) {
  const q = input.q.trim().toLowerCase();
  const own = and(eq(links.workspaceId, actor.workspaceId), eq(links.kind, "link"), isNull(links.deletedAt));
  const like = `%${likeEscape(q)}%`;
  const rows = await app.db
    .select()
    .from(links)
    .where(q ? and(own, or(ilike(links.slug, like), ilike(links.url, like), ilike(links.title, like), ilike(links.ogTitle, like))) : own)
    .orderBy(...(q ? [desc(sql`${links.slug} = ${q}`)] : []), desc(links.createdAt), desc(links.id))
    .limit(input.limit);
  const dtos = await linkDtos(app.db, app.config, rows);
  return { links: dtos.map((l) => ({ id: l.id, slug: l.slug, short_url: l.short_url, url: l.url })) };
}

/** Free in the default domain's namespace, or in that of the workspace's branded domain `domain` (an unknown one: not free). */
export async function isSlugAvailable(app: AppServices, slug: string, domain?: { workspaceId: string; name: string }): Promise<boolean> {
  let domainId: string | null = null;
  if (domain) {
    const [d] = await app.db
      .select({ id: domains.id })
      .from(domains)
      .where(and(eq(domains.name, domain.name), eq(domains.workspaceId, domain.workspaceId)))
      .limit(1);
    if (!d) return false;
    domainId = d.id;
  }
  const [row] = await app.db
    .select({ id: links.id })
    .from(links)
    .where(and(eq(links.slug, slug), isNull(links.deletedAt), domainId === null ? isNull(links.domainId) : eq(links.domainId, domainId)))
    .limit(1);
  return !row;
}

export const dashboardLinkProcedures = {
  search: authedProcedure
    .meta({ scope: "links:read" })
    .input(searchInput)
    .output(contract(searchOutput))
    .query(({ ctx, input }) => searchLinks(ctx.app, ctx.actor, input)),

  /** The analytics page's link picker asks this as the person types. */
  suggest: authedProcedure
    .meta({ scope: "links:read" })
    .input(suggestInput)
    .output(contract(suggestOutput))
    .query(({ ctx, input }) => suggestLinks(ctx.app, ctx.actor, input)),

  /** Feedback while typing a custom slug; the unique index still decides on write. */
  slugAvailable: authedProcedure
    .meta({ scope: "links:read" })
    .input(z.object({ slug: slugSchema, domain: text().max(253).optional() }).strict())
    .output(contract(z.object({ slug: z.string(), available: z.boolean() })))
    .query(async ({ ctx, input }) => ({
      slug: input.slug,
      available: await isSlugAvailable(ctx.app, input.slug, input.domain ? { workspaceId: ctx.actor.workspaceId, name: input.domain } : undefined),
    })),
};
