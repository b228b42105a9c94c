import { randomBytes } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { domains, links } from "../../../db/schema";
import { createTestServer, http, type TestServer, type TestUser } from "../../test/harness";
import { contrastRatio } from "../../domain/contrast";
import { contrastProblems, MIN_CONTRAST, THEME_PALETTES, THEMES } from "./look";

// A linktree's look (theme, colours, button style, socials) and its branded domain, through the REST API.
let t: TestServer;
let alice: TestUser;
let bob: TestUser;
let seq = 0;

beforeAll(async () => {
  t = await createTestServer();
  alice = await t.user({ plan: "pro" });
  bob = await t.user({ plan: "pro" });
});
afterAll(() => t?.close());

const uniqueSlug = (p = "look") => `${p}-${Date.now().toString(36)}-${seq++}`;
const req = (method: string, path: string, json?: unknown, auth: Record<string, string> = alice.auth) =>
  http(`${t.api}${path}`, { method, json, headers: auth });
const create = (json: Record<string, unknown>, auth = alice.auth) => req("POST", "/linktrees", { slug: uniqueSlug(), title: "Look", ...json }, auth);
const newTree = async (json: Record<string, unknown> = {}) => {
  const r = await create(json);
  expect(r.status, r.text).toBe(201);
  return r.json;
};
const patch = (id: string, json: Record<string, unknown>) => req("PATCH", `/linktrees/${id}`, json);

/** A domain of the user's workspace, verified (or not) directly in the database. */
async function domainOf(user: TestUser, verified = true): Promise<string> {
  const name = `lt-${randomBytes(4).toString("hex")}.brand.example`;
  const r = await req("POST", "/domains", { name }, user.auth);
  expect(r.status, r.text).toBe(201);
  if (verified) await t.app.db.update(domains).set({ verified: true, verifiedAt: Date.now() }).where(eq(domains.id, r.json.id));
  return name;
}

describe("theme colours", () => {
  it("every theme's own pairs clear the contrast minimum", () => {
    for (const theme of THEMES) expect(contrastProblems(THEME_PALETTES[theme]), theme).toEqual([]);
  });

  it("the contrast ratio is WCAG's: black on white is 21, a colour on itself 1", () => {
    expect(contrastRatio("#000000", "#ffffff")).toBeCloseTo(21, 5);
    expect(contrastRatio("#777777", "#777777")).toBe(1);
    expect(contrastRatio("#767676", "#ffffff")).toBeGreaterThanOrEqual(MIN_CONTRAST);
  });
});

describe("look members on POST and PATCH /linktrees", () => {
  it("a linktree made without them reads exactly as before: no look member in the answer", async () => {
    const tree = await newTree();
    expect(Object.keys(tree).sort()).toEqual(["avatar_url", "bio", "created_at", "id", "published", "slug", "title", "updated_at"]);
    const got = await req("GET", `/linktrees/${tree.id}`);
    expect(Object.keys(got.json).sort()).toEqual(["avatar_url", "bio", "created_at", "id", "items", "published", "slug", "title", "updated_at"]);
  });

  it("stores and answers theme, colors, button_style and socials as sent, on create, get and list", async () => {
    const look = {
      theme: "dark",
      colors: { button: "#0B3D91", button_text: "#ffffff" },
      button_style: "pill",
      socials: [
        { platform: "instagram", url: "https://instagram.com/ana" },
        { platform: "email", url: "mailto:ana@example.com" },
      ],
    };
    const tree = await newTree(look);
    expect(tree).toMatchObject({ ...look, colors: { button: "#0b3d91", button_text: "#ffffff" } });
    expect((await req("GET", `/linktrees/${tree.id}`)).json).toMatchObject({ theme: "dark", button_style: "pill", socials: look.socials });
    const listed = (await req("GET", "/linktrees")).json.linktrees.find((l: { id: string }) => l.id === tree.id);
    expect(listed).toMatchObject({ theme: "dark", colors: { button: "#0b3d91" } });
  });

  it("answers colors and socials with their members in the documented order, however they were sent", async () => {
    const tree = await newTree({
      colors: { button_text: "#ffffff", button: "#0b3d91", text: "#111111", background: "#fafafa" },
      socials: [{ url: "https://github.com/ana", platform: "github" }],
    });
    const expected = '"colors":{"background":"#fafafa","text":"#111111","button":"#0b3d91","button_text":"#ffffff"}';
    const socials = '"socials":[{"platform":"github","url":"https://github.com/ana"}]';
    for (const r of [await req("GET", `/linktrees/${tree.id}`), await patch(tree.id, { title: "Look again" })]) {
      expect(r.text).toContain(expected);
      expect(r.text).toContain(socials);
    }
  });

  it.each(THEMES)("accepts the theme %s", async (theme) => {
    expect((await newTree({ theme })).theme).toBe(theme);
  });

  it("PATCH null clears each look member, so it is no longer answered", async () => {
    const tree = await newTree({
      theme: "bold",
      colors: { background: "#000000" },
      button_style: "square",
      socials: [{ platform: "x", url: "https://x.com/a" }],
    });
    const r = await patch(tree.id, { theme: null, colors: null, button_style: null, socials: null });
    expect(r.status, r.text).toBe(200);
    for (const k of ["theme", "colors", "button_style", "socials"]) expect(r.json).not.toHaveProperty(k);
  });

  it("the default button style (rounded), sent on create or PATCH, reads as unset; the theme light is kept (unset follows the visitor's mode)", async () => {
    const tree = await newTree({ theme: "light", button_style: "rounded" });
    expect(tree).not.toHaveProperty("button_style");
    expect(tree.theme).toBe("light");
    const styled = await newTree({ button_style: "pill" });
    const patched = await req("PATCH", `/linktrees/${styled.id}`, { button_style: "rounded" });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.json).not.toHaveProperty("button_style");
  });

  it("an empty colours object or socials list is stored as none", async () => {
    const tree = await newTree({ colors: {}, socials: [] });
    expect(tree).not.toHaveProperty("colors");
    expect(tree).not.toHaveProperty("socials");
  });

  it("PATCH of one look member leaves the others as stored", async () => {
    const tree = await newTree({ theme: "soft", button_style: "outline" });
    const r = await patch(tree.id, { button_style: "square" });
    expect(r.json).toMatchObject({ theme: "soft", button_style: "square" });
  });

  it.each(
    [
      [{ theme: "neon" }, "theme"],
      [{ theme: 3 }, "theme"],
      [{ colors: { text: "red" } }, "colors"],
      [{ colors: { text: "#12345" } }, "colors"],
      [{ colors: { border: "#123456" } }, "colors"],
      [{ colors: "#123456" }, "colors"],
      [{ button_style: "round" }, "button_style"],
      [{ socials: [{ platform: "myspace", url: "https://myspace.com/a" }] }, "socials"],
      [{ socials: [{ platform: "github", url: "ftp://github.com/a" }] }, "socials"],
      [{ socials: [{ platform: "github", url: "mailto:a@example.com" }] }, "socials"],
      [{ socials: [{ platform: "email", url: "https://example.com/contact" }] }, "socials"],
      [{ socials: [{ platform: "github" }] }, "socials"],
      [{ socials: [{ platform: "github", url: "https://github.com/a", extra: 1 }] }, "socials"],
      [{ socials: Array.from({ length: 13 }, (_, i) => ({ platform: "website", url: `https://example.com/${i}` })) }, "socials"],
    ].map(([body, field]) => [JSON.stringify(body).replace(/(\{"platform":"website".*)$/, "13 socials}"), body, field]) as [
      string,
      Record<string, unknown>,
      string,
    ][],
  )("POST %s answers 400 VALIDATION_FAILED naming that member", async (_name, body, field) => {
    const r = await create(body);
    expect(r.status, r.text).toBe(400);
    expect(r.json.error).toBe("VALIDATION_FAILED");
    expect(Object.keys(r.json.fields)).toEqual([field]);
  });

  it("accepts exactly 12 socials", async () => {
    const socials = Array.from({ length: 12 }, (_, i) => ({ platform: "website", url: `https://example.com/${i}` }));
    expect((await newTree({ socials })).socials).toHaveLength(12);
  });

  it("text on background under 4.5:1 answers 400 naming colors, and nothing is created", async () => {
    const slug = uniqueSlug();
    const r = await req("POST", "/linktrees", { slug, title: "Low", colors: { background: "#ffffff", text: "#aaaaaa" } });
    expect(r.status).toBe(400);
    expect(r.json.error).toBe("VALIDATION_FAILED");
    expect(r.json.fields.colors.join(" ")).toMatch(/text #aaaaaa on background #ffffff/);
    expect(await t.app.db.select().from(links).where(eq(links.slug, slug))).toEqual([]);
  });

  it("a picked colour is judged against the theme's colour it is paired with", async () => {
    // White text on the light theme's near-white background.
    const r = await create({ colors: { text: "#ffffff" } });
    expect(r.status).toBe(400);
    expect(r.json.fields.colors.join(" ")).toMatch(/text #ffffff on background #f4f5f7/);
    // The same text colour on the dark theme is fine.
    expect((await create({ theme: "dark", colors: { text: "#ffffff" } })).status).toBe(201);
  });

  it("button_text on button under 4.5:1 answers 400 naming colors", async () => {
    const r = await create({ theme: "bold", colors: { button_text: "#ffffff" } });
    expect(r.status).toBe(400);
    expect(r.json.fields.colors.join(" ")).toMatch(/button_text #ffffff on button #facc15/);
  });

  it("PATCH of the theme alone is judged with the colours stored", async () => {
    const tree = await newTree({ theme: "dark", colors: { text: "#ffffff" } });
    const r = await patch(tree.id, { theme: "minimal" });
    expect(r.status).toBe(400);
    expect(r.json.fields.colors).toBeDefined();
    expect((await req("GET", `/linktrees/${tree.id}`)).json.theme).toBe("dark");
  });
});

describe("domain", () => {
  it("puts the page on a verified domain of the workspace: answered as domain, its link record on that domain", async () => {
    const name = await domainOf(alice);
    const slug = uniqueSlug();
    const r = await req("POST", "/linktrees", { slug, title: "Branded", domain: name });
    expect(r.status, r.text).toBe(201);
    expect(r.json.domain).toBe(name);
    const [row] = await t.app.db
      .select()
      .from(links)
      .where(and(eq(links.slug, slug), eq(links.kind, "linktree")));
    expect(row.domainId).not.toBeNull();
    expect(row.url).toBe(`https://${name}/${slug}`);
  });

  it("the slug is taken in the domain's namespace only: free on the default domain, taken on the same domain", async () => {
    const name = await domainOf(alice);
    const slug = uniqueSlug();
    expect((await req("POST", "/linktrees", { slug, title: "A", domain: name })).status).toBe(201);
    expect((await req("POST", "/linktrees", { slug, title: "B", domain: name })).status).toBe(409);
    expect((await req("POST", "/linktrees", { slug, title: "B", domain: name })).json.error).toBe("SLUG_ALREADY_IN_USE");
    expect((await req("POST", "/linktrees", { slug, title: "C" })).status).toBe(201);
  });

  it.each([
    ["an unverified domain", async () => domainOf(alice, false)],
    ["another workspace's domain", async () => domainOf(bob)],
    ["an unknown domain", async () => "nobody.brand.example"],
  ])("%s answers 400 naming domain", async (_what, make) => {
    const r = await create({ domain: await make() });
    expect(r.status, r.text).toBe(400);
    expect(r.json.error).toBe("VALIDATION_FAILED");
    expect(Object.keys(r.json.fields)).toEqual(["domain"]);
  });

  it("PATCH moves the page to a domain and back, slug and all; null is the default domain", async () => {
    const name = await domainOf(alice);
    const tree = await newTree();
    const moved = await patch(tree.id, { domain: name });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.json.domain).toBe(name);
    // The default domain's slug is free again.
    expect((await req("POST", "/links", { url: "https://example.com/", slug: tree.slug })).status).toBe(201);
    const back = await patch(tree.id, { domain: null });
    expect(back.status).toBe(409);
    expect(back.json.error).toBe("SLUG_ALREADY_IN_USE");
    const renamed = await patch(tree.id, { domain: null, slug: `${tree.slug}-b` });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.json).not.toHaveProperty("domain");
    expect(renamed.json.slug).toBe(`${tree.slug}-b`);
  });

  it("a domain with a linktree on it cannot be deleted (DOMAIN_IN_USE); after the linktree goes, it can", async () => {
    const name = await domainOf(alice);
    const tree = await newTree({ domain: name });
    const d = (await req("GET", "/domains")).json.domains.find((x: { name: string }) => x.name === name);
    expect((await req("DELETE", `/domains/${d.id}`)).status).toBe(409);
    expect((await req("DELETE", `/linktrees/${tree.id}`)).status).toBe(204);
    expect((await req("DELETE", `/domains/${d.id}`)).status).toBe(204);
  });
});
