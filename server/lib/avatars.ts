import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import sharp from "sharp";
import { AppError } from "../domain/errors";
import { randomString } from "./ids";

export const AVATAR_MAX_BYTES = 2 * 1024 * 1024;
export const AVATAR_SIZE = 256;
/** A linktree's avatar is drawn larger (96 px, twice that on dense screens, and on its share card): 400×400. */
export const LINKTREE_AVATAR_SIZE = 400;
const ACCEPTED = new Set(["png", "jpeg", "webp"]);
/** Stored names are ours alone: random, lower-case, one extension. */
export const AVATAR_NAME_RE = /^[0-9a-z]{24}\.webp$/;

export const uploadsDir = (dataDir: string) => path.join(dataDir, "uploads");
export const avatarPath = (dataDir: string, name: string) => path.join(uploadsDir(dataDir), "avatars", name);

const invalid = (message: string) => new AppError("VALIDATION_FAILED", { fields: { avatar: [message] } });

/**
 * Checks an uploaded image by its content (not its name or declared type), squares it to
 * size×size WebP (256 for a person, 400 for a linktree; dropping metadata such as GPS), and stores
 * it under DATA_DIR/uploads/avatars. Returns the stored file name.
 */
export async function storeAvatar(dataDir: string, bytes: Uint8Array, size = AVATAR_SIZE): Promise<string> {
  if (bytes.byteLength === 0) throw invalid("choose an image file");
  if (bytes.byteLength > AVATAR_MAX_BYTES) throw invalid("must be at most 2 MB");
  let meta: Awaited<ReturnType<ReturnType<typeof sharp>["metadata"]>>;
  try {
    meta = await sharp(bytes).metadata();
  } catch {
    throw invalid("must be a PNG, JPEG or WebP image");
  }
  if (!meta.format || !ACCEPTED.has(meta.format)) throw invalid("must be a PNG, JPEG or WebP image");
  // Decompression bombs: refuse absurd dimensions before decoding.
  if ((meta.width ?? 0) * (meta.height ?? 0) > 50_000_000) throw invalid("image dimensions are too large");
  const out = await sharp(bytes, { limitInputPixels: 50_000_000 }).rotate().resize(size, size, { fit: "cover" }).webp({ quality: 85 }).toBuffer();
  const name = `${randomString(24, "0123456789abcdefghijklmnopqrstuvwxyz")}.webp`;
  await mkdir(path.dirname(avatarPath(dataDir, name)), { recursive: true });
  await writeFile(avatarPath(dataDir, name), out);
  return name;
}
