import { createHash } from "node:crypto";
import { mdiEmailOutline, mdiLinkedin, mdiWeb } from "@mdi/js";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { siBluesky, siFacebook, siGithub, siInstagram, siMastodon, siThreads, siTiktok, siTwitch, siX, siYoutube } from "simple-icons";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Preview, type Looks } from "../../app/components/linktree-editor";
import { SOCIAL_ICON_PATHS } from "../../app/components/linktree-icons";
import { createTestServer, http, type TestServer, type TestUser } from "../test/harness";

// Needs the Remix build (`npm run build`): the public page is rendered by a Remix route.
let t: TestServer;
let alice: TestUser;

beforeAll(async () => {
  t = await createTestServer({}, { remix: true });
  alice = await t.user({ plan: "pro" });
});
afterAll(() => t?.close());

const api = (method: string, path: string, json?: unknown) => http(`${t.api}${path}`, { method, json, headers: alice.auth });
const BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";

const SOCIALS = [
  { platform: "github", url: "https://github.com/ana" },
  { platform: "linkedin", url: "https://www.linkedin.com/in/ana" },
  { platform: "email", url: "mailto:ana@example.com" },
];

async function publishedPage() {
  const slug = `render-${Date.now().toString(36)}`;
  const tree = (
    await api("POST", "/linktrees", {
      slug,
      title: "Ana",
      bio: "Prints and posters",
      theme: "bold",
      button_style: "pill",
      socials: SOCIALS,
    })
  ).json as { id: string };
  await api("POST", `/linktrees/${tree.id}/items`, { kind: "heading", title: "Shop" });
  await api("POST", `/linktrees/${tree.id}/items`, { title: "Posters", url: "https://example.com/posters" });
  await api("POST", `/linktrees/${tree.id}/items`, { kind: "text", title: "Ships in three days" });
  expect((await api("PATCH", `/linktrees/${tree.id}`, { published: true })).status).toBe(200);
  const r = await http(`${t.redirect}/${slug}`, { headers: { "user-agent": BROWSER } });
  expect(r.status).toBe(200);
  return r;
}

/** The markup between the public page's body tags, or inside the preview's frame after its stylesheet. */
const publicBody = (html: string) => /<body[^>]*>([\s\S]*)<\/body>/.exec(html)![1];
const previewBody = (html: string) => /<div class="lt-preview[^"]*"[^>]*><style>[\s\S]*?<\/style>([\s\S]*)<\/div>$/.exec(html)![1];
/** What only the public page has: the links' addresses and its landmark and heading elements. */
const asPreview = (html: string) =>
  html
    .replace(/ href="[^"]*"/g, "")
    .replace(/<main>([\s\S]*)<\/main>/, '<div class="page">$1</div>')
    .replace(/<h1>([\s\S]*?)<\/h1>/, '<p class="title">$1</p>')
    .replace(/<h2 class="section">([\s\S]*?)<\/h2>/g, '<p class="section">$1</p>');
/** The declarations of a stylesheet, rule by rule, without their selectors. */
const declarations = (css: string) => [...css.matchAll(/\{([^{}]*)\}/g)].map((m) => m[1]);

describe("linktree page renderer", () => {
  it("draws each platform's icon from the icon packages: simple-icons brands, Material Design Icons for LinkedIn, mail and website", () => {
    expect(SOCIAL_ICON_PATHS).toEqual({
      instagram: siInstagram.path,
      tiktok: siTiktok.path,
      x: siX.path,
      youtube: siYoutube.path,
      linkedin: mdiLinkedin,
      github: siGithub.path,
      facebook: siFacebook.path,
      threads: siThreads.path,
      mastodon: siMastodon.path,
      bluesky: siBluesky.path,
      twitch: siTwitch.path,
      email: mdiEmailOutline,
      website: mdiWeb,
    });
  });

  it("the public page shows each profile as a link named by its platform around the package's icon, with no script", async () => {
    const r = await publishedPage();
    const links = [
      ...r.text.matchAll(
        /<a href="([^"]+)" title="([^"]+)" rel="me noopener"><svg[^>]*aria-hidden="true"[^>]*><path d="([^"]+)"><\/path><\/svg><span class="sr">([^<]+)<\/span><\/a>/g,
      ),
    ].map((m) => ({ href: m[1], title: m[2], d: m[3], name: m[4] }));
    expect(links).toEqual([
      { href: "https://github.com/ana", title: "GitHub", d: siGithub.path, name: "GitHub" },
      { href: "https://www.linkedin.com/in/ana", title: "LinkedIn", d: mdiLinkedin, name: "LinkedIn" },
      { href: "mailto:ana@example.com", title: "Email", d: mdiEmailOutline, name: "Email" },
    ]);
    expect(r.text).not.toMatch(/<script/i);
    // The one inline style is still the one the policy's hash allows.
    const style = /<style>([\s\S]*?)<\/style>/
      .exec(r.text)![1]
      .replace(/&quot;/g, '"')
      .replace(/&gt;/g, ">")
      .replace(/&lt;/g, "<")
      .replace(/&amp;/g, "&");
    expect(r.headers.get("content-security-policy")).toContain(`style-src 'sha256-${createHash("sha256").update(style).digest("base64")}'`);
  });

  it("the editor's preview draws the public page's markup and rules from the same data (only addresses, landmarks and heading levels differ)", async () => {
    const r = await publishedPage();
    const looks = (await t.caller(alice.auth).linktree.looks({})) as Looks;
    const preview = renderToStaticMarkup(
      createElement(Preview, {
        profile: { title: "Ana", bio: "Prints and posters", avatar_url: "" },
        look: { theme: "bold", button_style: "pill", colors: {} },
        looks,
        socials: SOCIALS,
        items: [
          { id: "", title: "Shop", kind: "heading" },
          { id: "", title: "Posters" },
          { id: "", title: "Ships in three days", kind: "text" },
        ],
      }),
    );
    expect(previewBody(preview).replace(/ href="[^"]*"/g, "")).toBe(asPreview(publicBody(r.text)));
    // The same rules, each declaration as the public page has it.
    const publicCss = /<style>([\s\S]*?)<\/style>/.exec(r.text)![1];
    const previewCss = /<style>([\s\S]*?)<\/style>/.exec(preview)![1];
    expect(declarations(previewCss)).toEqual(declarations(publicCss));
    expect(preview).toContain('class="lt-preview theme-bold buttons-pill');
    expect(r.text).toContain('<body class="theme-bold buttons-pill">');
  });
});
