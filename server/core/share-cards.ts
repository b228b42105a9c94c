import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { links } from "../../db/schema";

/** The card title of a live link by its id, for its share-card image: null when deleted, unknown or without one. */
export async function shareCardTitle(db: Db, linkId: string): Promise<string | null> {
  const [link] = await db.select({ ogTitle: links.ogTitle, deletedAt: links.deletedAt }).from(links).where(eq(links.id, linkId)).limit(1);
  return link && link.deletedAt === null && link.ogTitle ? link.ogTitle : null;
}
