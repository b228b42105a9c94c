import { createServer, type Server } from "node:http";
import path from "node:path";
import sharp from "sharp";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestServer, http, type TestServer, type TestUser } from "../server/test/harness";
import { launch, SCREENSHOTS } from "./harness";

// Every theme and button style of the public linktree page through axe-core, at phone and desktop
// width, with everything a page can show: avatar, bio, socials, headings, text and buttons.
const AXE = path.resolve("node_modules/axe-core/axe.min.js");
const VIEWPORTS = [
  { width: 390, height: 844 },
  { width: 1280, height: 900 },
] as const;
const PICKED = { background: "#222222", text: "#ffffff", button: "#ffffff", button_text: "#111111" };
const LOOKS = [
  { theme: null, button_style: null },
  // Colours picked over no theme: the light theme's, in either mode of the visitor.
  { theme: null, button_style: "square", colors: PICKED },
  { theme: "light", button_style: "square" },
  { theme: "dark", button_style: "rounded" },
  { theme: "bold", button_style: "pill" },
  { theme: "soft", button_style: "outline" },
  { theme: "minimal", button_style: "rounded" },
] as const;
const USER_AGENT = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";

let t: TestServer;
let owner: TestUser;
let browser: Browser;
/** Serves the avatar image, as a person's own site would. */
let images: Server;
let avatarUrl = "";

beforeAll(async () => {
  t = await createTestServer({}, { remix: true });
  owner = await t.user({ plan: "pro" });
  const png = await sharp({ create: { width: 96, height: 96, channels: 3, background: "#3b82f6" } })
    .png()
    .toBuffer();
  images = createServer((_req, res) => res.writeHead(200, { "content-type": "image/png" }).end(png));
  await new Promise<void>((r) => images.listen(0, "127.0.0.1", r));
  avatarUrl = `http://127.0.0.1:${(images.address() as { port: number }).port}/avatar.png`;
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  images?.close();
});

const api = async (method: string, p: string, json?: unknown) => {
  const r = await http(`${t.api}${p}`, { method, json, headers: owner.auth });
  expect(r.status, `${method} ${p}: ${r.text}`).toBeLessThan(300);
  return r.json;
};

/** A published page in this look with one of everything. */
async function fullPage(look: (typeof LOOKS)[number], i: number): Promise<string> {
  const tree = await api("POST", "/linktrees", {
    slug: `e2e-look-${Date.now().toString(36)}-${i}`,
    title: "Maria Silva",
    bio: "Designer & photographer in Lisbon.",
    avatar_url: avatarUrl,
    ...(look.theme ? { theme: look.theme } : {}),
    ...(look.button_style ? { button_style: look.button_style } : {}),
    ...("colors" in look ? { colors: look.colors } : {}),
    socials: [
      { platform: "instagram", url: "https://instagram.com/maria" },
      { platform: "github", url: "https://github.com/maria" },
      { platform: "email", url: "mailto:maria@example.com" },
    ],
  });
  await api("POST", `/linktrees/${tree.id}/items`, { kind: "heading", title: "Work" });
  await api("POST", `/linktrees/${tree.id}/items`, { title: "Portfolio", url: "https://example.com/portfolio" });
  await api("POST", `/linktrees/${tree.id}/items`, { kind: "text", title: "Prints ship within three days." });
  await api("POST", `/linktrees/${tree.id}/items`, { title: "Shop", url: "https://example.com/shop" });
  await api("PATCH", `/linktrees/${tree.id}`, { published: true });
  return tree.slug;
}

type Found = { id: string; impact: string | null; nodes: string[] };

describe("the public linktree page is axe-clean in every theme", () => {
  it.each(LOOKS.map((look, i) => ["colors" in look ? "picked colours over no" : (look.theme ?? "default"), look.button_style ?? "rounded", look, i] as const))(
    "%s theme with %s buttons, at 390 and 1280 px",
    async (name, style, look, i) => {
      const slug = await fullPage(look, i);
      for (const viewport of VIEWPORTS) {
        // bypassCSP: the page allows no script, and axe is one.
        const ctx = await browser.newContext({ viewport, userAgent: USER_AGENT, bypassCSP: true });
        const page = await ctx.newPage();
        const res = await page.goto(`${t.redirect}/${slug}`);
        expect(res?.status()).toBe(200);
        await expect(page.getByRole("heading", { level: 1, name: "Maria Silva" }).isVisible()).resolves.toBe(true);
        await expect(page.getByRole("link", { name: "GitHub" }).isVisible()).resolves.toBe(true);
        await page.screenshot({ path: path.join(SCREENSHOTS, `linktree-${name}-${style}-${viewport.width}px.png`), fullPage: true });
        await page.addScriptTag({ path: AXE });
        const found = (await page.evaluate(async () => {
          const axe = (window as unknown as { axe: { run(ctx: Document, o: object): Promise<{ violations: unknown[] }> } }).axe;
          const r = await axe.run(document, { resultTypes: ["violations"] });
          return (r.violations as { id: string; impact: string | null; nodes: { target: string[] }[] }[]).map((v) => ({
            id: v.id,
            impact: v.impact,
            nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" ")),
          }));
        })) as Found[];
        expect(found, `${name}/${style} at ${viewport.width}px: ${JSON.stringify(found)}`).toEqual([]);
        // Nothing wider than the screen.
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
        await ctx.close();
      }
    },
  );

  it.each([
    ["the default look", 0],
    ["picked colours over no theme", 1],
  ] as const)("%s in the visitor's dark mode is axe-clean too", async (_name, look) => {
    const slug = await fullPage(LOOKS[look], 99 + look);
    const ctx = await browser.newContext({ viewport: VIEWPORTS[0], userAgent: USER_AGENT, bypassCSP: true, colorScheme: "dark" });
    const page = await ctx.newPage();
    await page.goto(`${t.redirect}/${slug}`);
    await page.addScriptTag({ path: AXE });
    const found = await page.evaluate(async () => {
      const axe = (window as unknown as { axe: { run(ctx: Document, o: object): Promise<{ violations: { id: string }[] }> } }).axe;
      return (await axe.run(document, { resultTypes: ["violations"] })).violations.map((v) => v.id);
    });
    expect(found).toEqual([]);
    await ctx.close();
  });
});
