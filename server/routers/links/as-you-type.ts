import { z } from "zod";
import { and, desc, eq, ilike, isNull, or, sql } from "drizzle-orm";
import { domains, links } from "../../../db/schema";
import { text } from "../../lib/input";
import type { AppServices } from "../../core/services";
import type { Actor } from "../../trpc/context";
import { slugSchema } from "./links.schema";
import { linkDtos } from "./links.service";
import { workspaceLinks } from "./link-status";

// What the dashboard asks while a person types: the analytics page's link picker and the link
// form's slug check. Dashboard-only (no openapi meta): the procedures are in router.ts.

/** `%` and `_` typed by the user are literal characters, not wildcards. */
const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => "\\" + c);

export const suggestInput = z
  .object({
    q: text().max(200).default(""),
    limit: z.number().int().min(1).max(20).default(10),
  })
  .strict();

export const suggestOutput = z.object({
  links: z.array(z.object({ id: z.string(), slug: z.string(), short_url: z.string(), url: z.string() })),
});

/**
 * A few links for a picker, whatever the workspace's size: an exact slug first, then the newest
 * whose slug, destination, title or share-card title holds the text. Only a page of rows is read (no
 * tags, no counts), so each keystroke costs the same at ten links as at a hundred thousand.
 */
export async function suggestLinks(app: Pick<AppServices, "config" | "db">, actor: Actor, input: z.output<typeof suggestInput>) {
  const q = input.q.trim().toLowerCase();
  const own = workspaceLinks(actor.workspaceId);
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
export async function isSlugAvailable(app: Pick<AppServices, "db">, slug: string, domain?: { workspaceId: string; name: string }): Promise<boolean> {
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

export const slugAvailableInput = z.object({ slug: slugSchema, domain: text().max(253).optional() }).strict();
export const slugAvailableOutput = z.object({ slug: z.string(), available: z.boolean() });
