import { Readable } from "node:stream";
import { and, desc, eq, inArray, isNull, lt, or, sql } from "drizzle-orm";
import { stringify } from "csv-stringify";
import type { DbOrTx } from "../../../db/client";
import { clickRollups, links } from "../../../db/schema";
import type { Config } from "../../config";
import { toLinkDto, type LinkRow } from "../links/links.service";
import { FORMULA_RE } from "./formats";

/**
 * The export's columns (extensions §3): `id, slug, short_url, url, tags, created_at, expires_at,
 * clicks`, then `og_title, og_description`, so every generic column is there and an export imports
 * back unchanged (`id`, `short_url` and `clicks` are read past).
 */
export const EXPORT_COLUMNS = ["id", "slug", "short_url", "url", "tags", "created_at", "expires_at", "clicks", "og_title", "og_description"] as const;
const PAGE = 1000;

const iso = (ms: number | null) => (ms === null ? "" : new Date(ms).toISOString());
/** A title a spreadsheet would run as a formula gets a leading quote; the import drops it again. */
const safeText = (v: string | null) => (v === null ? "" : FORMULA_RE.test(v) ? `'${v}` : v);

/** Every live link of the workspace, newest first, a page at a time (memory: one page). */
async function* exportRows(db: DbOrTx, config: Config, workspaceId: string): AsyncGenerator<Record<string, string | number>> {
  let after: { createdAt: number; id: string } | null = null;
  for (;;) {
    const own = and(eq(links.workspaceId, workspaceId), eq(links.kind, "link"), isNull(links.deletedAt));
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
    for (const row of page) {
      const dto = toLinkDto(row, config);
      yield {
        id: dto.id,
        slug: dto.slug,
        short_url: dto.short_url,
        url: dto.url,
        tags: dto.tags.join("|"),
        created_at: iso(dto.created_at),
        expires_at: iso(dto.expires_at),
        clicks: counts.get(row.id) ?? 0,
        og_title: safeText(dto.og_title),
        og_description: safeText(dto.og_description),
      };
    }
    if (page.length < PAGE) return;
    const last: LinkRow = page[page.length - 1];
    after = { createdAt: last.createdAt, id: last.id };
  }
}

/** The workspace's links as CSV (UTF-8, CRLF, a header row), streamed: a page of links in memory at a time. */
export function exportLinksCsv(db: DbOrTx, config: Config, workspaceId: string): Readable {
  const csv = stringify({ header: true, columns: [...EXPORT_COLUMNS], record_delimiter: "windows" });
  const source = Readable.from(exportRows(db, config, workspaceId));
  source.on("error", (e) => csv.destroy(e));
  return source.pipe(csv);
}
