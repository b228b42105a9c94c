import { randomInt } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { abuseReports, users } from "../../../db/schema";
import { newId } from "../../lib/ids";
import { createTestServer, http, type TestServer, type TestUser } from "../../test/harness";
import { signIn, uniqueEmail } from "../auth/sign-in.test-helper";
import { slugFromReportedUrl } from "./short-link-url";

let t: TestServer;
let owner: TestUser;
let host: string;
const addr = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

beforeAll(async () => {
  t = await createTestServer({ TRUST_PROXY: "true" });
  owner = await t.user();
  host = new URL(t.redirect).host;
});
afterAll(() => t?.close());

const report = (json: unknown, headers: Record<string, string> = {}) =>
  http(`${t.api}/reports`, { method: "POST", json, headers: { "x-forwarded-for": addr(), ...headers } });
const newLink = async () => {
  const slug = `r-${newId()}`;
  const r = await http(`${t.api}/links`, { method: "POST", json: { url: "https://example.com/dest", slug }, headers: owner.auth });
  expect(r.status).toBe(201);
  return r.json as { id: string; slug: string; updated_at: number };
};
const reportsOf = (linkId: string) => t.app.db.select().from(abuseReports).where(eq(abuseReports.linkId, linkId));
const adminSession = async () => {
  const s = await signIn(t, uniqueEmail("admin"), { "x-forwarded-for": addr() });
  await t.app.db.update(users).set({ isAdmin: true }).where(eq(users.id, s.account.user.id));
  return s;
};

describe("POST /reports", () => {
  it("stores a report about an existing link with link, slug, url, reason, detail, e-mail, address, user agent and time", async () => {
    const link = await newLink();
    const before = Date.now();
    const r = await report(
      { url: `${t.redirect}/${link.slug}`, reason: "phishing", detail: "fake bank", email: "rep@example.com" },
      { "x-forwarded-for": "203.0.113.7", "user-agent": "ReporterAgent/1.0" },
    );
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ ok: true });
    const rows = await reportsOf(link.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      linkId: link.id,
      slug: link.slug,
      url: `${t.redirect}/${link.slug}`,
      reason: "phishing",
      detail: "fake bank",
      email: "rep@example.com",
      ip: "203.0.113.7",
      userAgent: "ReporterAgent/1.0",
      status: "open",
    });
    expect(rows[0].createdAt).toBeGreaterThanOrEqual(before);
  });

  it("treats the redirect domain written with a trailing dot as the redirect domain", () => {
    expect(slugFromReportedUrl("https://go.test./Abcd", "go.test")).toBe("abcd");
    expect(slugFromReportedUrl("https://go.test.evil/abcd", "go.test")).toBeNull();
  });

  it("reads a slug's percent-encoded letters and digits as themselves, as the redirect host does", () => {
    expect(slugFromReportedUrl("https://go.test/%61bc%31", "go.test")).toBe("abc1");
    expect(slugFromReportedUrl("https://go.test/ab%2Fc", "go.test")).toBeNull();
  });

  it("accepts every url form of a short link (full, no scheme, trailing parts, bare slug) and lower-cases the slug", async () => {
    const link = await newLink();
    const forms = [
      `http://${host}/${link.slug}`,
      `https://${host}/${link.slug}`,
      `${host}/${link.slug}`,
      `${t.redirect}/${link.slug}/`,
      `${t.redirect}/${link.slug}?utm=1`,
      `${t.redirect}/${link.slug}#top`,
      `${t.redirect}/${link.slug.toUpperCase()}`,
      `HTTP://${host.toUpperCase()}/${link.slug}`,
      `  ${t.redirect}/${link.slug}  `,
      link.slug,
      link.slug.toUpperCase(),
    ];
    for (const url of forms) {
      const r = await report({ url, reason: "spam" });
      expect([url, r.status]).toEqual([url, 200]);
    }
    expect(await reportsOf(link.id)).toHaveLength(forms.length);
  });

  it.each([
    "https://example.com/abc",
    "https://evil.example/abc",
    "http://127.0.0.2/abc",
    "ftp://HOST/abc",
    "javascript:alert(1)",
    "https://HOST/",
    "https://HOST",
    "https://HOST/a/b",
    "https://HOST/_/health",
    "https://user:pw@HOST/abc",
    "not a url",
    "",
    "slug_with_underscore",
  ])("answers 400 NOT_A_SHORT_LINK with fields.url to %j and stores nothing", async (raw) => {
    const url = raw.replace("HOST", host);
    const count = (await t.app.db.select().from(abuseReports)).length;
    const r = await report({ url, reason: "spam" });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ error: "NOT_A_SHORT_LINK", fields: { url: [expect.any(String)] } });
    expect(await t.app.db.select().from(abuseReports)).toHaveLength(count);
  });

  it("answers 400 NOT_A_SHORT_LINK for another port of the redirect host", async () => {
    const other = Number(new URL(t.redirect).port) + 1;
    const r = await report({ url: `http://127.0.0.1:${other}/abc`, reason: "spam" });
    expect(r.json.error).toBe("NOT_A_SHORT_LINK");
  });

  it("answers 200 {ok:true} to an unknown or deleted slug and stores nothing (no slug oracle)", async () => {
    const count = (await t.app.db.select().from(abuseReports)).length;
    const r = await report({ url: `${t.redirect}/no-such-${newId()}`, reason: "malware" });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ ok: true });
    const link = await newLink();
    await http(`${t.api}/links/${link.id}`, { method: "DELETE", headers: owner.auth });
    expect((await report({ url: link.slug, reason: "malware" })).json).toEqual({ ok: true });
    expect(await t.app.db.select().from(abuseReports)).toHaveLength(count);
  });

  it.each([
    [{ reason: "phishing" }, "url", "VALIDATION_FAILED"],
    [{ url: "abc" }, "reason", "VALIDATION_FAILED"],
    [{ url: "abc", reason: "other" }, "reason", "VALIDATION_FAILED"],
    [{ url: "abc", reason: "spam", detail: "x".repeat(1001) }, "detail", "VALIDATION_FAILED"],
    [{ url: "abc", reason: "spam", email: "not-mail" }, "email", "VALIDATION_FAILED"],
    [{ url: "abc", reason: "spam", email: `${"x".repeat(195)}@ex.com` }, "email", "VALIDATION_FAILED"],
    [{ url: `https://HOST/${"a".repeat(1990)}`, reason: "spam" }, "url", "VALIDATION_FAILED"],
    [{ url: "abc", reason: "spam", extra: 1 }, "extra", "VALIDATION_FAILED"],
    [{ url: 5, reason: "spam" }, "url", "VALIDATION_FAILED"],
  ])("answers 400 to a body naming %$: %s", async (body, field, code) => {
    const json = JSON.parse(JSON.stringify(body).replace("HOST", host));
    const r = await report(json);
    expect(r.status).toBe(400);
    expect(r.json.error).toBe(code);
    expect(r.json.fields[field]).toBeDefined();
  });

  it("accepts each reason of the enum and the longest allowed detail and e-mail", async () => {
    const link = await newLink();
    for (const reason of ["phishing", "malware", "spam", "fraude", "outro"]) expect((await report({ url: link.slug, reason })).status).toBe(200);
    const email = `${"x".repeat(193)}@ex.com`;
    expect(email).toHaveLength(200);
    expect((await report({ url: link.slug, reason: "outro", detail: "d".repeat(1000), email })).status).toBe(200);
  });

  it("ignores a token header, valid or not (never 401), and stores nothing about it", async () => {
    const link = await newLink();
    const bad = await report({ url: link.slug, reason: "spam" }, { authorization: "Bearer garbage" });
    expect(bad.status).toBe(200);
    const good = await report({ url: link.slug, reason: "spam" }, owner.auth);
    expect(good.status).toBe(200);
    expect(good.headers.get("ratelimit-limit")).toBeNull(); // no token request was counted
  });

  it("never changes the reported link", async () => {
    const link = await newLink();
    for (let i = 0; i < 3; i++) await report({ url: link.slug, reason: "phishing" });
    const after = await http(`${t.api}/links/${link.id}`, { headers: owner.auth });
    expect(after.json).toEqual({ ...link, ...after.json, updated_at: link.updated_at, deleted_at: null });
    expect((await http(`${t.redirect}/${link.slug}`)).headers.get("location")).toBe("https://example.com/dest");
  });

  it("counts stored reports in the internal metrics", async () => {
    const link = await newLink();
    const value = async () => (await t.app.metrics.reports.get()).values[0]?.value ?? 0;
    const before = await value();
    await report({ url: link.slug, reason: "spam" });
    await report({ url: `no-such-${newId()}`, reason: "spam" });
    expect(await value()).toBe(before + 1);
  });

  it("allows 10 reports an hour per address, then 429 RATE_LIMITED with Retry-After", async () => {
    const ip = addr();
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 11; i++) {
      last = await report({ url: `slug-${newId()}`, reason: "spam" }, { "x-forwarded-for": ip });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([...Array(10).fill(200), 429]);
    expect(last!.json).toEqual({ error: "RATE_LIMITED" });
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it.each([
    ["an existing", true],
    ["an unknown", false],
  ])("allows 20 reports an hour per slug for %s slug, then 429", async (_what, exists) => {
    const slug = exists ? (await newLink()).slug : `none-${newId()}`;
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 21; i++) {
      last = await report({ url: slug, reason: "spam" });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([...Array(20).fill(200), 429]);
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});

describe("reviewing reports (admins)", () => {
  it("lists reports newest first, filtered by status", async () => {
    const admin = await adminSession();
    const link = await newLink();
    await report({ url: link.slug, reason: "phishing", detail: "first" });
    await report({ url: link.slug, reason: "malware", detail: "second" });
    const r = await http(`${t.api}/admin/reports?status=open`, { headers: admin.headers });
    expect(r.status).toBe(200);
    const mine = r.json.reports.filter((x: { link_id: string }) => x.link_id === link.id);
    expect(mine.map((x: { detail: string }) => x.detail)).toEqual(["second", "first"]);
    expect(mine[0]).toMatchObject({
      slug: link.slug,
      reason: "malware",
      status: "open",
      address: expect.any(String),
      link: { url: "https://example.com/dest", workspace_id: owner.workspaceId, kind: "link", deleted_at: null },
    });
    expect(
      (await http(`${t.api}/admin/reports?status=dismissed`, { headers: admin.headers })).json.reports.some((x: { link_id: string }) => x.link_id === link.id),
    ).toBe(false);
    expect((await http(`${t.api}/admin/reports?status=bogus`, { headers: admin.headers })).json).toEqual({
      error: "VALIDATION_FAILED",
      fields: { status: expect.any(Array) },
    });
  });

  it("dismisses a report without touching the link", async () => {
    const admin = await adminSession();
    const link = await newLink();
    await report({ url: link.slug, reason: "spam" });
    const [row] = await reportsOf(link.id);
    const r = await http(`${t.api}/admin/reports/${row.id}/dismiss`, { method: "POST", headers: admin.headers });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ id: row.id, status: "dismissed", reviewed_by: admin.account.user.id, reviewed_at: expect.any(Number) });
    expect((await http(`${t.redirect}/${link.slug}`)).status).toBe(301);
  });

  it("deletes the reported link like DELETE /links: slug freed, redirect stops at once, open reports marked link_deleted", async () => {
    const admin = await adminSession();
    const link = await newLink();
    expect((await http(`${t.redirect}/${link.slug}`)).status).toBe(301); // cached now
    await report({ url: link.slug, reason: "phishing" });
    await report({ url: link.slug, reason: "fraude" });
    const [first, second] = await reportsOf(link.id);
    const r = await http(`${t.api}/admin/reports/${first.id}/delete-link`, { method: "POST", headers: admin.headers });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ id: first.id, status: "link_deleted", link: { deleted_at: expect.any(Number) } });
    expect((await http(`${t.redirect}/${link.slug}`)).status).toBe(404);
    const stored = await http(`${t.api}/links/${link.id}`, { headers: owner.auth });
    expect(stored.json.deleted_at).toEqual(expect.any(Number));
    expect((await reportsOf(link.id)).find((x) => x.id === second.id)!.status).toBe("link_deleted");
    expect((await http(`${t.api}/links`, { method: "POST", json: { url: "https://example.org/", slug: link.slug }, headers: owner.auth })).status).toBe(201);
  });

  it("refuses to delete a linktree-owned link (409 LINKTREE_LINK_NOT_EDITABLE), leaving page and item intact", async () => {
    const admin = await adminSession();
    const tree = await http(`${t.api}/linktrees`, { method: "POST", json: { slug: `lt-${newId()}`, title: "T" }, headers: owner.auth });
    const item = await http(`${t.api}/linktrees/${tree.json.id}/items`, {
      method: "POST",
      json: { title: "I", url: "https://example.com/i" },
      headers: owner.auth,
    });
    const itemSlug = new URL(item.json.short_url).pathname.slice(1);
    await report({ url: itemSlug, reason: "spam" });
    const [row] = await t.app.db.select().from(abuseReports).where(eq(abuseReports.slug, itemSlug));
    const r = await http(`${t.api}/admin/reports/${row.id}/delete-link`, { method: "POST", headers: admin.headers });
    expect(r.status).toBe(409);
    expect(r.json).toEqual({ error: "LINKTREE_LINK_NOT_EDITABLE" });
    expect((await http(`${t.redirect}/${itemSlug}`)).status).toBe(301);
    expect((await reportsOf(row.linkId))[0].status).toBe("open");
  });

  it("answers 404 for an unknown report", async () => {
    const admin = await adminSession();
    for (const p of ["dismiss", "delete-link"]) {
      const r = await http(`${t.api}/admin/reports/nope/${p}`, { method: "POST", headers: admin.headers });
      expect(r.status).toBe(404);
      expect(r.json).toEqual({ error: "NOT_FOUND" });
    }
  });

  it("refuses a non-admin session (403), a token (403 SESSION_REQUIRED), no credential (401) and another site (401) through the callers too", async () => {
    const user = await signIn(t, uniqueEmail(), { "x-forwarded-for": addr() });
    await expect(t.caller(user.headers).report.list()).rejects.toMatchObject({ publicCode: "FORBIDDEN" });
    const admin = await adminSession();
    await expect(t.caller({ ...admin.headers, origin: "https://evil.example" }).report.dismiss({ id: "x" })).rejects.toMatchObject({
      publicCode: "UNAUTHORIZED",
    });
    await expect(t.caller(owner.auth).report.list()).rejects.toMatchObject({ publicCode: "SESSION_REQUIRED" });
    await expect(t.caller().report.list()).rejects.toMatchObject({ publicCode: "UNAUTHORIZED" });
    expect(Array.isArray((await t.caller(admin.headers).report.list()).reports)).toBe(true);
  });
});

describe("slugFromReportedUrl", () => {
  it.each([
    ["https://go.example/abc", "abc"],
    ["http://go.example/ABC", "abc"],
    ["go.example/abc", "abc"],
    ["//go.example/abc", "abc"],
    ["https://go.example:443/abc", "abc"],
    ["https://go.example/abc/?x=1#y", "abc"],
    ["abc-def", "abc-def"],
    ["https://go.example.evil.com/abc", null],
    ["https://evil.com/go.example/abc", null],
    ["https://go.example/abc/def", null],
    ["https://go.example:8080/abc", null],
    ["mailto:abc@go.example", null],
    ["a".repeat(51), null],
  ])("%s → %s", (input, slug) => {
    expect(slugFromReportedUrl(input, "go.example")).toBe(slug);
  });
});
