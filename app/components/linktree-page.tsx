import { SocialIcon } from "./linktree-icons";

/**
 * The one renderer of a linktree page: the public page (a resource route that renders it to a
 * static, script-free document) and the editor's live preview (the same markup and the same
 * stylesheet, scoped to the preview's frame) both draw it, so what the owner sees is what visitors get.
 * Pure: no server module, no browser API.
 */

export type Palette = { background: string; text: string; button: string; button_text: string };
export type Theme = "light" | "dark" | "bold" | "soft" | "minimal";
export type ButtonStyle = "rounded" | "square" | "pill" | "outline";
export type PageItem = { kind: "link"; id: string; title: string; short_url: string } | { kind: "heading" | "text"; id: string; title: string };
export type PageData = {
  slug: string;
  title: string;
  bio: string | null;
  avatar_url: string | null;
  url: string;
  og_image: string;
  theme: Theme | null;
  palette: Palette;
  button_style: ButtonStyle;
  socials: { platform: string; label: string; url: string }[];
  items: PageItem[];
};
/** What the body shows (the share-card members belong to the document's head only). */
export type PageContent = Omit<PageData, "url" | "og_image" | "slug">;

/** Each theme's button border and type; the colours themselves come from the page's palette. */
const THEME_EXTRAS: Record<Theme, { border: string; font: string; heading: string }> = {
  light: { border: "#d1d5db", font: `system-ui,-apple-system,"Segoe UI",Roboto,sans-serif`, heading: "700" },
  dark: { border: "#475569", font: `system-ui,-apple-system,"Segoe UI",Roboto,sans-serif`, heading: "700" },
  bold: { border: "transparent", font: `system-ui,-apple-system,"Segoe UI",Roboto,sans-serif`, heading: "800" },
  soft: { border: "transparent", font: `ui-rounded,"SF Pro Rounded",system-ui,-apple-system,"Segoe UI",Roboto,sans-serif`, heading: "700" },
  minimal: { border: "currentColor", font: `ui-sans-serif,system-ui,-apple-system,"Segoe UI",Roboto,sans-serif`, heading: "600" },
};

const RADIUS: Record<ButtonStyle, string> = { rounded: ".75rem", square: "0", pill: "9999px", outline: ".75rem" };

/** Colours as CSS custom properties on `root`. A page with no theme is the page as it always was, dark mode included. */
function variables(page: Pick<PageContent, "theme" | "palette" | "button_style">, root: string): string {
  const p = page.palette;
  const extra = THEME_EXTRAS[page.theme ?? "light"];
  const base = `--bg:${p.background};--fg:${p.text};--muted:${p.text};--btn:${p.button};--btn-fg:${p.button_text};--btn-border:${extra.border};--focus:${p.text};--radius:${RADIUS[page.button_style] ?? RADIUS.rounded};--font:${extra.font};--h-weight:${extra.heading}`;
  if (page.theme !== null) return `${root}{${base}}`;
  // The default page follows the visitor's colour scheme, as it always did.
  return (
    `${root}{color-scheme:light dark;${base};--muted:#4b5563;--focus:#1d4ed8}` +
    `@media (prefers-color-scheme:dark){${root}{--bg:#0f172a;--fg:#f1f5f9;--muted:#cbd5e1;--btn:#1e293b;--btn-fg:#f8fafc;--btn-border:#475569;--focus:#93c5fd}}`
  );
}

/** The page's rules; `body` is the element holding the page's classes, `s` the prefix of every other rule. */
const baseStyle = (body: string, s: string) =>
  `
${s}*{box-sizing:border-box}
${body}{margin:0;min-height:100vh;background:var(--bg);color:var(--fg);font:16px/1.5 var(--font)}
${s}main,${s}.page{max-width:36rem;margin:0 auto;padding:2.5rem 1rem 3rem;text-align:center}
${s}.avatar{width:96px;height:96px;border-radius:50%;object-fit:cover;display:block;margin:0 auto 1rem;background:var(--btn-border)}
${s}h1,${s}.title{font-size:1.5rem;line-height:1.25;margin:0 0 .5rem;font-weight:var(--h-weight);overflow-wrap:anywhere}
${s}.bio{color:var(--muted);margin:0 0 1.25rem;white-space:pre-line;overflow-wrap:anywhere}
${s}.socials{display:flex;flex-wrap:wrap;justify-content:center;gap:.25rem;margin:0 0 1.5rem}
${s}.socials a{display:inline-flex;align-items:center;justify-content:center;width:44px;height:44px;border-radius:50%;color:var(--fg)}
${s}.socials a:hover{background:color-mix(in srgb,var(--fg) 12%,transparent)}
${s}.socials a:focus-visible,${s}a.item:focus-visible{outline:3px solid var(--focus);outline-offset:3px}
${s}.socials svg{width:24px;height:24px}
${s}.sr{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);white-space:nowrap;border:0}
${s}ul{list-style:none;margin:0;padding:0;display:grid;gap:.75rem}
${s}a.item{display:flex;align-items:center;justify-content:center;min-height:3.25rem;padding:.75rem 1rem;border:1px solid var(--btn-border);border-radius:var(--radius);background:var(--btn);color:var(--btn-fg);font-weight:600;text-decoration:none;overflow-wrap:anywhere;transition:transform .1s}
${s}a.item:hover{transform:translateY(-1px);border-color:var(--fg)}
${body}.outline a.item{background:transparent;color:var(--fg);border:2px solid var(--fg)}
${s}h2.section,${s}.section{font-size:1.05rem;font-weight:var(--h-weight);margin:1rem 0 0;overflow-wrap:anywhere}
${s}p.note{margin:0;white-space:pre-line;overflow-wrap:anywhere}
${s}.empty{color:var(--muted)}
@media (prefers-reduced-motion:reduce){${s}a.item{transition:none}${s}a.item:hover{transform:none}}
`.trim();

/** The public page's stylesheet (one inline style, allowed by its hash). */
export const pageStyle = (page: Pick<PageContent, "theme" | "palette" | "button_style">) => `${variables(page, ":root")}\n${baseStyle("body", "")}`;

/** The preview's: the same rules, every one scoped to the element with class `scope`. */
export const scopedPageStyle = (page: Pick<PageContent, "theme" | "palette" | "button_style">, scope: string) =>
  `${variables(page, `.${scope}`)}\n${baseStyle(`.${scope}`, `.${scope} `)}`;

/** The classes of the element holding the page (the public page's body). */
export const pageClass = (page: Pick<PageContent, "theme" | "button_style">) =>
  `theme-${page.theme ?? "default"} buttons-${page.button_style}${page.button_style === "outline" ? " outline" : ""}`;

/**
 * The page's content. `preview`: drawn inside the dashboard, so no landmark or heading of its own
 * that would clash with the dashboard's (its buttons link straight to their destinations, so an owner's click is not counted).
 */
export function LinktreeContent({ page, preview = false }: { page: PageContent; preview?: boolean }) {
  const Root = preview ? "div" : "main";
  const Title = preview ? "p" : "h1";
  const Section = preview ? "p" : "h2";
  return (
    <Root className={preview ? "page" : undefined}>
      <header>
        {page.avatar_url ? <img className="avatar" src={page.avatar_url} alt="" width={96} height={96} /> : null}
        <Title className={preview ? "title" : undefined}>{page.title}</Title>
        {page.bio ? <p className="bio">{page.bio}</p> : null}
        {page.socials.length ? (
          <nav aria-label={`Profiles of ${page.title}`}>
            <ul className="socials">
              {page.socials.map((s, i) => (
                <li key={`${s.platform}-${i}`}>
                  <a href={s.url} title={s.label} rel="me noopener">
                    <SocialIcon platform={s.platform} />
                    <span className="sr">{s.label}</span>
                  </a>
                </li>
              ))}
            </ul>
          </nav>
        ) : null}
      </header>
      {page.items.length ? (
        <nav aria-label={`Links of ${page.title}`}>
          <ul>
            {page.items.map((item) => (
              <li key={item.id}>
                {item.kind === "link" ? (
                  <a className="item" href={item.short_url}>
                    {item.title}
                  </a>
                ) : item.kind === "heading" ? (
                  <Section className="section">{item.title}</Section>
                ) : (
                  <p className="note">{item.title}</p>
                )}
              </li>
            ))}
          </ul>
        </nav>
      ) : (
        <p className="empty">No links yet.</p>
      )}
    </Root>
  );
}
