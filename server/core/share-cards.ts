import { readFile } from "node:fs/promises";
import { and, eq } from "drizzle-orm";
import sharp from "sharp";
import type { Db } from "../../db/client";
import { links, linktrees } from "../../db/schema";
import { AVATAR_NAME_RE, avatarPath } from "../lib/avatars";
import { LruCache } from "../lib/lru";
import { hostOf, isPublicAddress, resolveAll } from "./outgoing-address-guard";

/** The card title of a live link by its id, for its share-card image: null when deleted, unknown or without one. */
export async function shareCardTitle(db: Db, linkId: string): Promise<string | null> {
  const [link] = await db.select({ ogTitle: links.ogTitle, deletedAt: links.deletedAt }).from(links).where(eq(links.id, linkId)).limit(1);
  return link && link.deletedAt === null && link.ogTitle ? link.ogTitle : null;
}

/** A published linktree's card by its page's link id: its title and avatar URL; null when there is none. */
export async function linktreeCard(db: Db, linkId: string): Promise<{ title: string; avatarUrl: string | null } | null> {
  const [tree] = await db
    .select({ title: linktrees.title, avatarUrl: linktrees.avatarUrl })
    .from(linktrees)
    .where(and(eq(linktrees.linkId, linkId), eq(linktrees.published, true)))
    .limit(1);
  return tree ?? null;
}

const AVATAR_MAX_BYTES = 2 * 1024 * 1024;
const AVATAR_TIMEOUT_MS = 3_000;
const AVATAR_TTL_MS = 10 * 60_000;
const avatars = new LruCache<{ dataUrl: string | null; at: number }>(500);

/** Loopback, private, link-local, shared and unspecified addresses: never fetched for a visitor's request (the outgoing-request guard's rule). */
export const isPrivateAddress = (ip: string): boolean => !isPublicAddress(ip);

/** An image as the card draws it: 160×160 PNG, as a data: URL. */
async function cardAvatar(bytes: Buffer): Promise<string> {
  const png = await sharp(bytes, { limitInputPixels: 50_000_000 }).resize(160, 160, { fit: "cover" }).png().toBuffer();
  return `data:image/png;base64,${png.toString("base64")}`;
}

/** Where the dashboard's avatar uploads are served from (APP_URL) and kept (DATA_DIR). */
export type OwnUploads = { appUrl: URL; dataDir: string };

/** Public addresses only: an avatar is fetched for a visitor's request. */
const allPublic = (found: string[]) => found.length > 0 && !found.some(isPrivateAddress);

/**
 * The file of an avatar uploaded through the dashboard, read where it is kept rather than fetched
 * from APP_URL (which may be a private address the card would never fetch); null for any other URL.
 */
function ownAvatarFile(own: OwnUploads, u: URL): string | null {
  const base = own.appUrl.href.replace(/\/+$/, "");
  const prefix = `${base}/uploads/avatars/`;
  if (!u.href.startsWith(prefix)) return null;
  const name = u.href.slice(prefix.length);
  return AVATAR_NAME_RE.test(name) ? avatarPath(own.dataDir, name) : null;
}

/**
 * A linktree's avatar as a 160×160 PNG data: URL for its share card (the renderer never fetches),
 * or null when it cannot be had: not an image, too large, too slow, or on a private address
 * (unless `allowPrivate`). Kept for ten minutes per URL, failures too, so a card request costs
 * at most one fetch of a given avatar in that time.
 */
export async function avatarDataUrl(url: string, allowPrivate = false, own?: OwnUploads): Promise<string | null> {
  const now = Date.now();
  const hit = avatars.get(url);
  if (hit && now - hit.at < AVATAR_TTL_MS) return hit.dataUrl;
  let dataUrl: string | null = null;
  try {
    const u = new URL(url);
    const stored = own ? ownAvatarFile(own, u) : null;
    if (stored) dataUrl = await cardAvatar(await readFile(stored));
    else if (allowPrivate || allPublic(await resolveAll(hostOf(u)))) {
      const r = await fetch(u, { redirect: "error", signal: AbortSignal.timeout(AVATAR_TIMEOUT_MS) });
      const length = Number(r.headers.get("content-length") ?? 0);
      if (r.ok && length <= AVATAR_MAX_BYTES) {
        const bytes = Buffer.from(await r.arrayBuffer());
        if (bytes.length <= AVATAR_MAX_BYTES) dataUrl = await cardAvatar(bytes);
      }
    }
  } catch {
    // Unreachable or not an image: the card is drawn without it.
  }
  avatars.set(url, { dataUrl, at: now });
  return dataUrl;
}
