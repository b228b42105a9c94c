import { randomBytes } from "node:crypto";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestServer, http, type TestServer } from "../test/harness";
import { signIn } from "../test/security/servers";
import { multipartBody, type FormField } from "./multipart.test-helper";

// The linktree editor's avatar form: the file is checked, squared to 400×400 WebP and set as the
// page's avatar; over 2 MB is refused in plain words. Needs the Remix build (`npm run build`).
let t: TestServer;
beforeAll(async () => void (t = await createTestServer({}, { remix: true })));
afterAll(async () => t?.close());

const multipart = (fields: Record<string, FormField>) => multipartBody(fields, "----treeb0undary");

let seq = 0;
async function editor(email: string) {
  const a = await signIn(t, email);
  const r = await http(`${t.api}/linktrees`, { method: "POST", headers: a.cookie, json: { slug: `avatar-${Date.now().toString(36)}-${seq++}`, title: "Ana" } });
  expect(r.status).toBe(201);
  const upload = (data: Buffer) => {
    const form = multipart({ intent: "avatar", avatar: { name: "me.png", type: "image/png", data } });
    return http(`${t.appUrl}/linktrees/${r.json.id}`, { method: "POST", headers: { ...a.cookie, "content-type": form.type }, body: form.body });
  };
  const avatarUrl = async () => (await http(`${t.api}/linktrees/${r.json.id}`, { headers: a.cookie })).json.avatar_url as string | null;
  return { a, id: r.json.id as string, upload, avatarUrl };
}

describe("linktree avatar upload", () => {
  it("the editor offers an avatar upload form for PNG, JPEG or WebP up to 2 MB", async () => {
    const e = await editor("tree-avatar-form@example.com");
    const page = await http(`${t.appUrl}/linktrees/${e.id}`, { headers: e.a.cookie });
    expect(page.status).toBe(200);
    const form = /<form[^>]*enctype="multipart\/form-data"[^>]*>[\s\S]*?<\/form>/i.exec(page.text)?.[0] ?? "";
    expect(form).toMatch(/<input[^>]*name="avatar"[^>]*type="file"[^>]*accept="image\/png,image\/jpeg,image\/webp"/);
    expect(page.text).toContain("up to 2 MB");
  });

  it("an uploaded image becomes the page's avatar, squared to 400×400 WebP and served", async () => {
    const e = await editor("tree-avatar-ok@example.com");
    const png = await sharp({ create: { width: 1200, height: 800, channels: 3, background: "#08f" } })
      .png()
      .toBuffer();
    const page = await e.upload(png);
    expect(page.status).toBe(200);
    expect(page.text).toContain("Avatar uploaded.");
    const url = await e.avatarUrl();
    expect(url).toMatch(new RegExp(`^${t.appUrl}/uploads/avatars/[0-9a-z]{24}\\.webp$`));
    const img = await fetch(url!);
    expect(img.status).toBe(200);
    expect(img.headers.get("content-type")).toBe("image/webp");
    const meta = await sharp(Buffer.from(await img.arrayBuffer())).metadata();
    expect([meta.width, meta.height]).toEqual([400, 400]);
  });

  it("an image over 2 MB is refused with a message saying so, and the avatar stays as it was", async () => {
    const e = await editor("tree-avatar-big@example.com");
    // Random pixels do not compress: a PNG just over 2 MB.
    const noisy = await sharp(randomBytes(840 * 840 * 3), { raw: { width: 840, height: 840, channels: 3 } })
      .png({ compressionLevel: 0 })
      .toBuffer();
    expect(noisy.byteLength).toBeGreaterThan(2 * 1024 * 1024);
    const page = await e.upload(noisy);
    expect(page.status).toBe(200);
    expect(page.text).toContain("must be at most 2 MB");
    expect(await e.avatarUrl()).toBeNull();
  });

  it("a file far over 2 MB (more than the form's whole allowance) is refused on the page in the same words, not with a bare 413", async () => {
    const e = await editor("tree-avatar-huge@example.com");
    const page = await e.upload(randomBytes(3 * 1024 * 1024));
    expect(page.status).toBe(200);
    expect(page.text).toContain("must be at most 2 MB");
    expect(await e.avatarUrl()).toBeNull();
  });

  it("an uploaded avatar may be shown by a page of another origin (the linktree page on the redirect domain)", async () => {
    const e = await editor("tree-avatar-cors@example.com");
    const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: "#0a0" } })
      .png()
      .toBuffer();
    expect((await e.upload(png)).status).toBe(200);
    const img = await fetch((await e.avatarUrl())!);
    expect(img.headers.get("cross-origin-resource-policy")).toBe("cross-origin");
  });

  it("a file that is not an image is refused in the form's words, and nothing is set", async () => {
    const e = await editor("tree-avatar-bad@example.com");
    const page = await e.upload(Buffer.from("not an image"));
    expect(page.text).toContain("must be a PNG, JPEG or WebP image");
    expect(await e.avatarUrl()).toBeNull();
  });
});
