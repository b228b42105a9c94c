import { mkdtempSync } from "node:fs";
import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { toPublicError } from "../domain/errors";
import { AVATAR_NAME_RE, avatarPath, storeAvatar } from "./avatars";

const dir = () => mkdtempSync(path.join(os.tmpdir(), "avatars-"));
const image = (format: "png" | "jpeg" | "webp" | "gif", w = 600, h = 400) =>
  sharp({ create: { width: w, height: h, channels: 3, background: { r: 200, g: 40, b: 90 } } })
    .toFormat(format)
    .toBuffer();
const failure = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e) => toPublicError(e).body,
  );

describe("avatar upload store", () => {
  it.each(["png", "jpeg", "webp"] as const)("accepts %s and stores a 256x256 WebP under DATA_DIR/uploads", async (format) => {
    const d = dir();
    const name = await storeAvatar(d, await image(format));
    expect(name).toMatch(AVATAR_NAME_RE);
    const meta = await sharp(await readFile(avatarPath(d, name))).metadata();
    expect(meta).toMatchObject({ format: "webp", width: 256, height: 256 });
    expect(avatarPath(d, name)).toBe(path.join(d, "uploads", "avatars", name));
  });

  it("refuses other formats by content, whatever the file is called", async () => {
    expect(await failure(storeAvatar(dir(), await image("gif")))).toEqual({
      error: "VALIDATION_FAILED",
      fields: { avatar: ["must be a PNG, JPEG or WebP image"] },
    });
    expect(await failure(storeAvatar(dir(), new TextEncoder().encode("<svg></svg>")))).toMatchObject({
      fields: { avatar: ["must be a PNG, JPEG or WebP image"] },
    });
  });

  it("refuses files over 2 MB and empty files", async () => {
    expect(await failure(storeAvatar(dir(), new Uint8Array(2 * 1024 * 1024 + 1)))).toMatchObject({ fields: { avatar: ["must be at most 2 MB"] } });
    expect(await failure(storeAvatar(dir(), new Uint8Array(0)))).toMatchObject({ fields: { avatar: ["choose an image file"] } });
  });
});
