import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestServer, http, type TestServer } from "../test/harness";
import { signIn } from "../test/security/servers";
import { multipartBody, type FormField } from "./multipart.test-helper";

/**
 * The dashboard's downloads and file forms are answered by the server itself (not by Remix pages):
 * they need the browser's session (401 without one, 403 SESSION_REQUIRED for an API token) and name
 * only the caller's workspace's objects (404 for another workspace's).
 */
let t: TestServer;
beforeAll(async () => void (t = await createTestServer({}, { remix: true })));
afterAll(async () => t?.close());

const multipart = (fields: Record<string, FormField>) => multipartBody(fields, "----dashb0undary");

const csvForm = (csv: string) => multipart({ file: { name: "links.csv", type: "text/csv", data: Buffer.from(csv) }, format: "auto" });

describe("dashboard downloads and file forms", () => {
  it("downloads need a session: 401 without one, 403 SESSION_REQUIRED with an API token", async () => {
    const u = await t.user();
    for (const p of ["/links.csv", "/analytics.csv", "/links/import/abcdefgh/rejects.csv"]) {
      const none = await http(`${t.appUrl}${p}`);
      expect([p, none.status, none.json]).toEqual([p, 401, { error: "UNAUTHORIZED" }]);
      const token = await http(`${t.appUrl}${p}`, { headers: u.auth });
      expect([p, token.status, token.json]).toEqual([p, 403, { error: "SESSION_REQUIRED" }]);
    }
  });

  it("the links export lists the caller's workspace's links only", async () => {
    const a = await signIn(t, "export-a@example.com");
    const b = await signIn(t, "export-b@example.com");
    const mine = await http(`${t.api}/links`, { method: "POST", headers: a.cookie, json: { url: "https://example.com/mine", slug: "export-mine" } });
    expect(mine.status).toBe(201);
    const theirs = await http(`${t.api}/links`, { method: "POST", headers: b.cookie, json: { url: "https://example.com/theirs", slug: "export-theirs" } });
    expect(theirs.status).toBe(201);
    const csv = await http(`${t.appUrl}/links.csv`, { headers: a.cookie });
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toMatch(/^text\/csv/);
    expect(csv.headers.get("content-disposition")).toMatch(/^attachment; filename="links-\d{4}-\d{2}-\d{2}\.csv"$/);
    expect(csv.text.split("\r\n")[0]).toMatch(/^id,slug,domain,short_url,url/);
    expect(csv.text).toContain("export-mine");
    expect(csv.text).not.toContain("export-theirs");
    const clicks = await http(`${t.appUrl}/analytics.csv?link=${mine.json.id}&range=all`, { headers: a.cookie });
    expect(clicks.status).toBe(200);
    expect(clicks.text.split("\r\n")[0]).toBe(
      "timestamp_iso,timestamp,ts,link_id,country,region,region_name,timezone,lat,lng,device,platform,browser,referer,rule,visitor",
    );
    // Another workspace's link: its clicks are not found.
    const other = await http(`${t.appUrl}/analytics.csv?link=${theirs.json.id}&range=all`, { headers: a.cookie });
    expect(other.status).toBe(404);
  });

  it("an import's report is its workspace's: 404 for another workspace's import", async () => {
    const a = await signIn(t, "report-a@example.com");
    const b = await signIn(t, "report-b@example.com");
    const f = csvForm("url,slug\nhttps://example.com/ok,report-ok\nftp://bad,report-bad\n");
    // The file form: stored by the server, then the page shows the mapping step for it.
    const page = await http(`${t.appUrl}/links/import`, { method: "POST", headers: { ...a.cookie, "content-type": f.type }, body: f.body });
    expect(page.status).toBe(200);
    const upload = /name="upload" value="([^"]+)"/.exec(page.text)?.[1];
    expect(upload).toBeTruthy();
    const start = await http(`${t.appUrl}/links/import`, {
      method: "POST",
      headers: { ...a.cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ upload: upload!, format: "generic", map_url: "url", map_slug: "slug", on_conflict: "reject", title_to: "title" }).toString(),
    });
    expect(start.status).toBe(302);
    const job = /job=([^&]+)/.exec(start.headers.get("location") ?? "")?.[1];
    expect(job).toBeTruthy();
    const mine = await http(`${t.appUrl}/links/import/${job}/rejects.csv`, { headers: a.cookie });
    expect(mine.status).toBe(200);
    expect(mine.text.split("\r\n")[0]).toBe("row,slug,url,error,reason,new_short_url");
    const theirs = await http(`${t.appUrl}/links/import/${job}/rejects.csv`, { headers: b.cookie });
    expect([theirs.status, theirs.json]).toEqual([404, { error: "NOT_FOUND" }]);
  });

  it("the file forms need a session: 401 without one, 403 SESSION_REQUIRED with an API token (the avatar is account administration)", async () => {
    const u = await t.user();
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: "#08f" } })
      .png()
      .toBuffer();
    const avatar = multipart({ avatar: { name: "a.png", type: "image/png", data: png } });
    const f = csvForm("url\nhttps://example.com/x\n");
    for (const [p, form] of [
      ["/settings?index", avatar],
      ["/links/import", f],
    ] as const) {
      const none = await http(`${t.appUrl}${p}`, { method: "POST", headers: { "content-type": form.type }, body: form.body });
      expect([p, none.status, none.json]).toEqual([p, 401, { error: "UNAUTHORIZED" }]);
      const token = await http(`${t.appUrl}${p}`, { method: "POST", headers: { ...u.auth, "content-type": form.type }, body: form.body });
      expect([p, token.status, token.json]).toEqual([p, 403, { error: "SESSION_REQUIRED" }]);
    }
  });

  it("an uploaded avatar is stored, set on the account and served; unknown names are 404", async () => {
    const a = await signIn(t, "avatar-a@example.com");
    const png = await sharp({ create: { width: 300, height: 200, channels: 3, background: "#f80" } })
      .png()
      .toBuffer();
    const form = multipart({ avatar: { name: "a.png", type: "image/png", data: png } });
    const page = await http(`${t.appUrl}/settings?index`, { method: "POST", headers: { ...a.cookie, "content-type": form.type }, body: form.body });
    expect(page.status).toBe(200);
    expect(page.text).toContain("Avatar updated.");
    const account = await http(`${t.api}/account`, { headers: a.cookie });
    const url: string = account.json.user.avatar_url;
    expect(url).toMatch(new RegExp(`^${t.appUrl}/uploads/avatars/[0-9a-z]{24}\\.webp$`));
    const img = await fetch(url);
    expect(img.status).toBe(200);
    expect(img.headers.get("content-type")).toBe("image/webp");
    expect((await sharp(Buffer.from(await img.arrayBuffer())).metadata()).width).toBe(256);
    expect((await http(`${t.appUrl}/uploads/avatars/${"a".repeat(24)}.webp`)).status).toBe(404);
    expect((await http(`${t.appUrl}/uploads/avatars/..%2F..%2Fsecret.webp`)).status).toBe(404);
    // Not an image: refused in the form's words, nothing set.
    const bad = multipart({ avatar: { name: "a.png", type: "image/png", data: Buffer.from("not an image") } });
    const refused = await http(`${t.appUrl}/settings?index`, { method: "POST", headers: { ...a.cookie, "content-type": bad.type }, body: bad.body });
    expect(refused.text).toContain("must be a PNG, JPEG or WebP image");
    expect((await http(`${t.api}/account`, { headers: a.cookie })).json.user.avatar_url).toBe(url);
  });

  it("the import page shows the server's refusal of a file with its status (507 when the disk has no room); a forged refusal is no 500", async () => {
    const a = await signIn(t, "refusal-a@example.com");
    const post = (fields: Record<string, string>) =>
      http(`${t.appUrl}/links/import`, {
        method: "POST",
        headers: { ...a.cookie, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(fields).toString(),
      });
    const full = await post({
      step: "uploaded",
      upload_error: JSON.stringify({ error: "INSUFFICIENT_STORAGE", fields: { file: ["cannot be stored now: the server is short of disk space"] } }),
      upload_status: "507",
    });
    expect(full.status).toBe(507);
    expect(full.text).toContain("cannot be stored now");
    for (const upload_error of ["{not json", JSON.stringify({ error: 5, fields: { file: "not a list" } })]) {
      const forged = await post({ step: "uploaded", upload_error, upload_status: "999" });
      expect(forged.status).toBe(200);
      expect(forged.text).not.toContain("INTERNAL_ERROR");
    }
  });
});
