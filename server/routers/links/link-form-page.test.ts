import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signedInDashboard } from "../../test/dashboard-session";
import { http, type TestServer, type TestUser } from "../../test/harness";

/**
 * The dashboard's link form as a browser without JavaScript sends it: what a person types is
 * normalised on the server too (tags in the tag alphabet, https:// on an address without a scheme),
 * the page shows the result, and a tag still refused is named. The browser side is e2e/link-form.test.ts.
 */
describe.skipIf(!existsSync("build/index.js"))("link form (Remix, no JavaScript)", () => {
  let t: TestServer;
  let u: TestUser;
  let cookie: Record<string, string>;
  beforeAll(async () => void ({ t, u, formHeaders: cookie } = await signedInDashboard()));
  afterAll(() => t?.close());

  const submit = (fields: Record<string, string>) =>
    http(`${t.appUrl}/links/new`, {
      method: "POST",
      headers: { ...cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ intent: "save", ...fields }).toString(),
    });

  it("normalises tags and adds https:// to the destination, and saves the title", async () => {
    const res = await submit({ url: "example.com/x", tags: "Campaign, Q4 Push", title: "Autumn campaign" });
    expect(res.status).toBe(302);
    const { links } = await t.caller(u.auth).link.list({});
    expect(links[0]).toMatchObject({ url: "https://example.com/x", tags: ["campaign", "q4-push"], title: "Autumn campaign" });
    const list = await http(`${t.appUrl}/links?q=autumn`, { headers: { cookie: cookie.cookie } });
    expect(list.text).toContain('data-testid="link-title"');
    expect(list.text).toContain("Autumn campaign");
  });

  it("shows the form again as it would be saved, with a refused tag named, not its index", async () => {
    const long = "Very Long Tag ".repeat(3);
    const res = await submit({ url: "example.org/again", tags: `Spring Sale, ${long}` });
    expect(res.status).toBe(200); // the form again, with its errors
    expect(res.text).toContain('value="https://example.org/again"');
    expect(res.text).toContain('value="spring-sale, very-long-tag-very-long-tag-very-long-tag"');
    expect(res.text).toContain("&quot;very-long-tag-very-long-tag-very-long-tag&quot; is not a tag");
    expect(res.text).not.toMatch(/>0: /);
  });

  it("saves query forwarding, A/B variants and languages from the form, and archives from the edit page", async () => {
    const body = new URLSearchParams({ intent: "save", url: "example.com/a", forward_query: "on", lang_code: "DE", lang_url: "example.de/" });
    body.append("variant_url", "example.com/a");
    body.append("variant_weight", "60");
    body.append("variant_url", "example.com/b");
    body.append("variant_weight", "40");
    const res = await http(`${t.appUrl}/links/new`, {
      method: "POST",
      headers: { ...cookie, "content-type": "application/x-www-form-urlencoded" },
      body: body.toString(),
    });
    expect(res.status).toBe(302);
    const id = /\/links\/([0-9a-z]{8})/.exec(res.headers.get("location") ?? "")![1];
    const link = await t.caller(u.auth).link.get({ id });
    expect(link).toMatchObject({
      forward_query: true,
      targeting: { languages: { de: "https://example.de/" } },
      variants: [
        { url: "https://example.com/a", weight: 60 },
        { url: "https://example.com/b", weight: 40 },
      ],
    });
    const page = await http(`${t.appUrl}/links/${id}`, { headers: { cookie: cookie.cookie } });
    expect(page.text).toContain('name="archived"');
    expect(page.text).toMatch(/<label[^>]*for="f-archived"[^>]*>Archived<\/label>/);
    // The edit form sends every control: the variants and languages as shown, the archive box ticked.
    const edit = new URLSearchParams({ intent: "save", url: "https://example.com/a", slug: link.slug, archived: "on", forward_query: "on" });
    const saved = await http(`${t.appUrl}/links/${id}`, {
      method: "POST",
      headers: { ...cookie, "content-type": "application/x-www-form-urlencoded" },
      body: edit.toString(),
    });
    expect(saved.status).toBe(200);
    const after = await t.caller(u.auth).link.get({ id });
    expect(after).toMatchObject({ archived: true, forward_query: true, targeting: null });
    expect(after).not.toHaveProperty("variants");
  });
});
