import { useEffect, useState } from "react";
import { contrastRatio } from "../../server/domain/contrast";
import { shownTheme } from "../../server/domain/page-theme";
import { browserOffset, expiryFromLocal, localInputOf } from "../lib/link-form";
import { Field, FieldErrors, fieldErrors } from "./ui";
import type { FormError } from "../lib/messages";
import { LinktreeContent, pageClass, scopedPageStyle, type ButtonStyle, type PageContent, type Theme } from "./linktree-page";

// The parts of the linktree editor: theme and colours with a preview, socials, item schedules, and
// the phone-sized preview of the whole page.

export type Palette = { background: string; text: string; button: string; button_text: string };
export type ColorKey = keyof Palette;
export type Looks = {
  themes: Record<string, Palette>;
  button_styles: string[];
  platforms: { platform: string; label: string }[];
  min_contrast: number;
};
export type Look = { theme: string; button_style: string; colors: Partial<Palette> };
export type Social = { platform: string; url: string };
export type PreviewItem = { id: string; title: string; kind?: "heading" | "text"; url?: string };

export const COLOR_KEYS: ColorKey[] = ["background", "text", "button", "button_text"];
const COLOR_LABELS: Record<ColorKey, string> = { background: "Background", text: "Text", button: "Buttons", button_text: "Button text" };
const THEME_LABELS: Record<string, string> = {
  "": "Default (follows the visitor's light or dark mode)",
  light: "Light",
  dark: "Dark",
  bold: "Bold",
  soft: "Soft",
  minimal: "Minimal",
};
const STYLE_LABELS: Record<string, string> = { rounded: "Rounded", square: "Square", pill: "Pill", outline: "Outline" };

export const paletteOf = (looks: Looks, look: Look): Palette => ({ ...looks.themes[look.theme || "light"], ...look.colors });

/** Theme picker (each choice drawn in its colours), button style, and colours over the theme's. */
export function LookFields({ looks, look, setLook, error }: { looks: Looks; look: Look; setLook: (l: Look) => void; error: FormError | null | undefined }) {
  const palette = paletteOf(looks, look);
  const pairs: [ColorKey, ColorKey][] = [
    ["text", "background"],
    ["button_text", "button"],
  ];
  return (
    <>
      <fieldset>
        <legend className="label">Theme</legend>
        <div className="mt-1 grid gap-2 sm:grid-cols-2">
          {["", ...Object.keys(looks.themes)].map((theme) => {
            const p = looks.themes[theme || "light"];
            return (
              <label key={theme || "default"} className="flex cursor-pointer items-center gap-3 rounded-md border border-slate-200 p-2 dark:border-slate-700">
                <input type="radio" name="theme" value={theme} checked={look.theme === theme} onChange={() => setLook({ ...look, theme })} />
                <span
                  aria-hidden="true"
                  className="flex h-10 w-14 shrink-0 flex-col items-center justify-center gap-1 rounded border border-slate-300"
                  style={{ background: p.background }}
                >
                  <span className="block h-1 w-8 rounded" style={{ background: p.text }} />
                  <span className="block h-2.5 w-10 rounded-sm" style={{ background: p.button, outline: `1px solid ${p.button_text}` }} />
                </span>
                <span className="text-sm">{THEME_LABELS[theme] ?? theme}</span>
              </label>
            );
          })}
        </div>
        {fieldErrors(error, "theme").length ? <p className="field-error">{fieldErrors(error, "theme").join(" ")}</p> : null}
      </fieldset>
      <fieldset>
        <legend className="label">Button style</legend>
        <div className="mt-1 flex flex-wrap gap-3">
          {looks.button_styles.map((s) => (
            <label key={s} className="flex items-center gap-2 text-sm">
              <input type="radio" name="button_style" value={s} checked={look.button_style === s} onChange={() => setLook({ ...look, button_style: s })} />
              {STYLE_LABELS[s] ?? s}
            </label>
          ))}
        </div>
      </fieldset>
      <fieldset>
        <legend className="label">Colours</legend>
        <p className="hint !mt-0">Tick a colour to use your own instead of the theme&apos;s.</p>
        <div className="mt-2 grid gap-3 sm:grid-cols-2">
          {COLOR_KEYS.map((k) => {
            const own = look.colors[k] !== undefined;
            return (
              <div key={k} className="flex items-center gap-2">
                <input
                  type="checkbox"
                  id={`own-${k}`}
                  name={`own_${k}`}
                  checked={own}
                  onChange={(e) => {
                    const colors = { ...look.colors };
                    if (e.target.checked) colors[k] = palette[k];
                    else delete colors[k];
                    setLook({ ...look, colors });
                  }}
                />
                <label htmlFor={`own-${k}`} className="w-28 text-sm">
                  {COLOR_LABELS[k]}
                </label>
                <input
                  type="color"
                  name={`color_${k}`}
                  aria-label={`${COLOR_LABELS[k]} colour`}
                  value={palette[k]}
                  disabled={!own}
                  onChange={(e) => setLook({ ...look, colors: { ...look.colors, [k]: e.target.value } })}
                  className="h-8 w-12 cursor-pointer rounded border border-slate-300 disabled:cursor-not-allowed disabled:opacity-50"
                />
                <span className="font-mono text-xs">{palette[k]}</span>
              </div>
            );
          })}
        </div>
        <ul className="mt-2 space-y-1 text-sm" aria-live="polite">
          {pairs.map(([fg, bg]) => {
            const ratio = contrastRatio(palette[fg], palette[bg]);
            const ok = ratio >= looks.min_contrast;
            return (
              <li key={fg} className={ok ? "text-slate-600 dark:text-slate-400" : "font-medium text-red-700 dark:text-red-400"}>
                {COLOR_LABELS[fg]} on {COLOR_LABELS[bg].toLowerCase()}: contrast {ratio.toFixed(1)} to 1{" "}
                {ok ? "(readable)" : `(too low: at least ${looks.min_contrast} is needed)`}
              </li>
            );
          })}
        </ul>
        {fieldErrors(error, "colors").length ? (
          <ul className="field-error">
            {fieldErrors(error, "colors").map((e) => (
              <li key={e}>{e}</li>
            ))}
          </ul>
        ) : null}
      </fieldset>
    </>
  );
}

/**
 * Which row each of the server's socials messages is about: it names a profile by its place among
 * the rows sent (`0.url: …`), and empty rows are not sent. Messages naming no row stay apart.
 */
function socialsErrors(socials: Social[], errors: string[]): { rows: Map<number, string[]>; other: string[] } {
  const sent = socials.flatMap((s, i) => (s.url.trim() ? [i] : []));
  const rows = new Map<number, string[]>();
  const other: string[] = [];
  for (const e of errors) {
    const m = /^(\d+)\.\w+: (.*)$/.exec(e);
    const row = m ? sent[Number(m[1])] : undefined;
    if (row === undefined || !m) other.push(e);
    else rows.set(row, [...(rows.get(row) ?? []), m[2]]);
  }
  return { rows, other };
}

/** Profile rows: a platform and its URL each; empty rows are ignored on save. `errors`: the server's messages for `socials`. */
export function SocialsFields({
  looks,
  socials,
  setSocials,
  max = 12,
  errors = [],
}: {
  looks: Looks;
  socials: Social[];
  setSocials: (s: Social[]) => void;
  max?: number;
  errors?: string[];
}) {
  const wrong = socialsErrors(socials, errors);
  return (
    <div className="space-y-2">
      {socials.map((s, i) => (
        <div key={i} className="grid gap-2 sm:grid-cols-[10rem_1fr_auto] sm:items-end">
          <div>
            <label htmlFor={`social-platform-${i}`} className="label">
              Profile {i + 1}
            </label>
            <select
              id={`social-platform-${i}`}
              name="social_platform"
              className="input"
              value={s.platform}
              onChange={(e) => setSocials(socials.map((x, j) => (j === i ? { ...x, platform: e.target.value } : x)))}
            >
              {looks.platforms.map((p) => (
                <option key={p.platform} value={p.platform}>
                  {p.label}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label htmlFor={`social-url-${i}`} className="label">
              {s.platform === "email" ? "Address (mailto:)" : "Profile URL"}
            </label>
            <input
              id={`social-url-${i}`}
              name="social_url"
              className="input"
              value={s.url}
              placeholder={s.platform === "email" ? "mailto:you@example.com" : "https://"}
              aria-invalid={wrong.rows.has(i) || undefined}
              aria-describedby={wrong.rows.has(i) ? `social-url-${i}-error` : undefined}
              onChange={(e) => setSocials(socials.map((x, j) => (j === i ? { ...x, url: e.target.value } : x)))}
            />
            <FieldErrors id={`social-url-${i}-error`} errors={wrong.rows.get(i) ?? []} />
          </div>
          <button type="button" className="btn-ghost" onClick={() => setSocials(socials.filter((_, j) => j !== i))} aria-label={`Remove profile ${i + 1}`}>
            Remove
          </button>
        </div>
      ))}
      <FieldErrors errors={wrong.other} />
      {socials.length < max ? (
        <button type="button" className="btn-secondary" onClick={() => setSocials([...socials, { platform: "instagram", url: "" }])}>
          Add a profile
        </button>
      ) : (
        <p className="hint">At most {max} profiles.</p>
      )}
    </div>
  );
}

/** Reads the socials rows of a submitted form, skipping empty ones. */
export function socialsFromForm(form: FormData): Social[] {
  const platforms = form.getAll("social_platform").map(String);
  const urls = form.getAll("social_url").map((u) => String(u).trim());
  return platforms.flatMap((platform, i) => (urls[i] ? [{ platform, url: urls[i] }] : []));
}

/** The item's window in ms from the form's wall times; null when left empty, NaN when unreadable. */
export function scheduleFromForm(form: FormData): { starts_at: number | null; ends_at: number | null } {
  const at = (name: string) => expiryFromLocal(String(form.get(`${name}_local`) ?? ""), String(form.get(`${name}_tz`) ?? ""));
  return { starts_at: at("starts_at"), ends_at: at("ends_at") };
}

/** UTC wall time of `ms` for a datetime-local field (what the server renders before the browser takes over). */
const utcLocal = (ms: number | undefined) => (ms === undefined ? "" : new Date(ms).toISOString().slice(0, 16));

/**
 * A datetime-local field in the browser's zone once hydrated (UTC before, as the hint says), with
 * the offset of its date beside it, so the server reads the instant the person sees.
 */
function WhenField({ name, label, ms, errors }: { name: string; label: string; ms: number | undefined; errors: string[] }) {
  const [local, setLocal] = useState(utcLocal(ms));
  const [zoned, setZoned] = useState(false);
  useEffect(() => {
    setLocal(ms === undefined ? "" : localInputOf(ms));
    setZoned(true);
  }, [ms]);
  return (
    <Field
      label={label}
      name={`${name}_local`}
      errors={errors}
      hint={zoned ? "Your time zone. Leave empty for no limit." : "In UTC. Leave empty for no limit."}
    >
      {({ id, describedBy, invalid }) => (
        <>
          <input
            id={id}
            name={`${name}_local`}
            type="datetime-local"
            className="input"
            value={local}
            onChange={(e) => setLocal(e.target.value)}
            aria-invalid={invalid || undefined}
            aria-describedby={describedBy}
          />
          {zoned ? <input type="hidden" name={`${name}_tz`} value={browserOffset(local)} /> : null}
        </>
      )}
    </Field>
  );
}

/** Shown from / until, for an item. */
export function ScheduleFields({ startsAt, endsAt, error }: { startsAt?: number; endsAt?: number; error: FormError | null | undefined }) {
  return (
    <div className="grid gap-3 sm:grid-cols-2">
      <WhenField name="starts_at" label="Show from" ms={startsAt} errors={fieldErrors(error, "starts_at")} />
      <WhenField name="ends_at" label="Show until" ms={endsAt} errors={fieldErrors(error, "ends_at")} />
    </div>
  );
}

const PREVIEW_SCOPE = "lt-preview";

/**
 * What visitors will see, drawn from the form as it is typed by the public page's own renderer and
 * stylesheet (scoped to this frame), so the two cannot drift apart.
 */
export function Preview({
  profile,
  look,
  looks,
  socials,
  items,
}: {
  profile: { title: string; bio: string; avatar_url: string };
  look: Look;
  looks: Looks;
  socials: Social[];
  items: PreviewItem[];
}) {
  const page: PageContent = {
    title: profile.title || "Title",
    bio: profile.bio || null,
    avatar_url: /^https?:\/\/./.test(profile.avatar_url) ? profile.avatar_url : null,
    theme: shownTheme((look.theme || null) as Theme | null, look.colors),
    palette: paletteOf(looks, look),
    button_style: (look.button_style || "rounded") as ButtonStyle,
    socials: socials.filter((s) => s.url).map((s) => ({ ...s, label: looks.platforms.find((x) => x.platform === s.platform)?.label ?? s.platform })),
    items: items.map((i) =>
      i.kind ? { kind: i.kind, id: i.id, title: i.title } : { kind: "link" as const, id: i.id, title: i.title, short_url: i.url ?? "" },
    ),
  };
  return (
    <div
      className={`${PREVIEW_SCOPE} ${pageClass(page)} mx-auto w-full max-w-[20rem] overflow-hidden rounded-[2rem] border-8 border-slate-800 dark:border-slate-700`}
      style={{ minHeight: "24rem", fontSize: "14px" }}
      data-testid="preview"
    >
      <style dangerouslySetInnerHTML={{ __html: scopedPageStyle(page, PREVIEW_SCOPE) }} />
      <LinktreeContent page={page} preview />
    </div>
  );
}
