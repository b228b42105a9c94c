import { mkdtempSync } from "node:fs";
import { createServer, type Server } from "node:http";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storeAvatar } from "../lib/avatars";
import { avatarDataUrl, isPrivateAddress } from "./share-cards";

// A linktree's share card shows its avatar: fetched once, shrunk to a PNG data: URL for the renderer,
// and never fetched from a private address for a visitor's request.
let server: Server;
let base = "";
let hits = 0;

beforeAll(async () => {
  const png = await sharp({ create: { width: 400, height: 300, channels: 3, background: "#ff0000" } })
    .png()
    .toBuffer();
  server = createServer((req, res) => {
    hits++;
    if (req.url === "/avatar.png") return void res.writeHead(200, { "content-type": "image/png" }).end(png);
    if (req.url === "/huge.png") return void res.writeHead(200, { "content-type": "image/png", "content-length": String(3 * 1024 * 1024) }).end();
    res.writeHead(200, { "content-type": "text/html" }).end("<p>not an image</p>");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => server?.close());

describe("a linktree card's avatar", () => {
  it("is a 160×160 PNG data: URL of the image", async () => {
    const url = await avatarDataUrl(`${base}/avatar.png`, true);
    expect(url).toMatch(/^data:image\/png;base64,/);
    const meta = await sharp(Buffer.from(url!.split(",")[1], "base64")).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(["png", 160, 160]);
  });

  it("is fetched once for many cards in a while", async () => {
    const before = hits;
    await avatarDataUrl(`${base}/avatar.png?once`, true);
    await avatarDataUrl(`${base}/avatar.png?once`, true);
    expect(hits - before).toBe(1);
  });

  it("is left out when the URL is not an image or is too large", async () => {
    expect(await avatarDataUrl(`${base}/page.html`, true)).toBeNull();
    expect(await avatarDataUrl(`${base}/huge.png`, true)).toBeNull();
  });

  it("uploaded through the dashboard, is read from DATA_DIR even where APP_URL is a private address, never fetched", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "card-avatar-"));
    const name = await storeAvatar(
      dataDir,
      await sharp({ create: { width: 300, height: 300, channels: 3, background: "#00ff00" } })
        .png()
        .toBuffer(),
    );
    const own = { appUrl: new URL(base), dataDir };
    const before = hits;
    const url = await avatarDataUrl(`${base}/uploads/avatars/${name}`, false, own);
    expect(url).toMatch(/^data:image\/png;base64,/);
    expect(hits).toBe(before);
    // Any other name under that path is no upload of ours, and a private address is still not fetched.
    expect(await avatarDataUrl(`${base}/uploads/avatars/../secret.webp`, false, own)).toBeNull();
    expect(hits).toBe(before);
  });

  it("is never fetched from a private or loopback address unless allowed", async () => {
    const before = hits;
    expect(await avatarDataUrl(`${base}/avatar.png?private`)).toBeNull();
    expect(hits).toBe(before);
  });

  it.each([
    ["127.0.0.1", true],
    ["10.1.2.3", true],
    ["192.168.0.1", true],
    ["172.20.0.1", true],
    ["169.254.169.254", true],
    ["::1", true],
    ["fd00::1", true],
    ["::ffff:127.0.0.1", true],
    ["93.184.216.34", false],
    ["2606:2800:220:1::", false],
  ])("%s is private: %s", (ip, expected) => {
    expect(isPrivateAddress(ip)).toBe(expected);
  });
});
