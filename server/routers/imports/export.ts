import { Readable } from "node:stream";
import { and, desc, eq, inArray, lt, or, sql } from "drizzle-orm";
import type { DbOrTx } from "../../../db/client";
import { clickRollups, links } from "../../../db/schema";
import type { Config } from "../../config";
import { csvStream, type CsvRecord } from "../../lib/csv";
import { linkDtos, workspaceLinks, type LinkRow } from "../links";

/**
 * The export's columns, which the `generic` import format reads back (formats.ts), so a file imports
 * back unchanged: same domains, same slugs, so the same short URLs, and a second import of it creates
 * nothing. `domain` is the branded domain's name, empty on the default redirect domain (so a file
 * moves between instances whose default domains differ). `targeting` is the Link's object as JSON.
 * `id`, `short_url`, `clicks` and `has_password` are there for people and are read past, except that
 * a visit password cannot be exported (only its hash is stored): `has_password` says which links had
 * one, and an import does not make such a link public without it. `forward_query` and `archived`
 * are `true` or `false`, `variants` the Link's array as JSON (empty: none); archived links are
 * exported too, and stay archived when imported back.
 */
export const EXPORT_COLUMNS = [
  "id",
  "slug",
  "domain",
  "short_url",
  "url",
  "title",
  "tags",
  "created_at",
  "expires_at",
  "expiration_url",
  "targeting",
  "og_title",
  "og_description",
  "og_image",
  "clicks",
  "has_password",
  "forward_query",
  "variants",
  "archived",
] as const;
const PAGE = 1000;

const iso = (ms: number | null) => (ms === null ? "" : new Date(ms).toISOString());

/** Every live link of the workspace, newest first, a page at a time (memory: one page). */
async function* exportRows(db: DbOrTx, config: Config, workspaceId: string): AsyncGenerator<CsvRecord> {
  let after: { createdAt: number; id: string } | null = null;
  for (;;) {
    const own = workspaceLinks(workspaceId);
    const page: LinkRow[] = await db
      .select()
      .from(links)
      .where(after ? and(own, or(lt(links.createdAt, after.createdAt), and(eq(links.createdAt, after.createdAt), lt(links.id, after.id)))) : own)
      .orderBy(desc(links.createdAt), desc(links.id))
      .limit(PAGE);
    if (!page.length) return;
    const counts = new Map(
      (
        await db
          .select({ linkId: clickRollups.linkId, n: sql<number>`sum(${clickRollups.count})`.mapWith(Number) })
          .from(clickRollups)
          .where(
            inArray(
              clickRollups.linkId,
              page.map((l) => l.id),
            ),
          )
          .groupBy(clickRollups.linkId)
      ).map((r) => [r.linkId, r.n]),
    );
    // One look-up of the page's branded domain names.
    const dtos = await linkDtos(db, config, page);
    for (const [i, dto] of dtos.entries()) {
      yield {
        id: dto.id,
        slug: dto.slug,
        domain: page[i].domainId === null ? "" : dto.redirect_domain,
        short_url: dto.short_url,
        url: dto.url,
        title: dto.title ?? "",
        tags: dto.tags.join("|"),
        created_at: iso(dto.created_at),
        expires_at: iso(dto.expires_at),
        expiration_url: dto.expiration_url ?? "",
        targeting: dto.targeting ? JSON.stringify(dto.targeting) : "",
        og_title: dto.og_title ?? "",
        og_description: dto.og_description ?? "",
        og_image: dto.og_image ?? "",
        clicks: counts.get(dto.id) ?? 0,
        has_password: dto.has_password ? "true" : "false",
        forward_query: dto.forward_query ? "true" : "false",
        variants: dto.variants ? JSON.stringify(dto.variants) : "",
        archived: dto.archived ? "true" : "false",
      };
    }
    if (page.length < PAGE) return;
    const last: LinkRow = page[page.length - 1];
    after = { createdAt: last.createdAt, id: last.id };
  }
}

/** The workspace's links as CSV (UTF-8, CRLF, a header row; lib/csv's quoting and formula guard), streamed a page at a time. */
export function exportLinksCsv(db: DbOrTx, config: Config, workspaceId: string): Readable {
  const csv = csvStream(EXPORT_COLUMNS);
  const source = Readable.from(exportRows(db, config, workspaceId));
  source.on("error", (e) => csv.destroy(e));
  return source.pipe(csv);
}
