import type { LinktreeColors } from "../../../db/schema";
import { contrastRatio } from "../../domain/contrast";

// How a linktree page looks: themes with their colours, the contrast rule for colours people pick,
// and the social platforms a page may show.

export const THEMES = ["light", "dark", "bold", "soft", "minimal"] as const;
export type Theme = (typeof THEMES)[number];
export const BUTTON_STYLES = ["rounded", "square", "pill", "outline"] as const;
export type ButtonStyle = (typeof BUTTON_STYLES)[number];
export const COLOR_KEYS = ["background", "text", "button", "button_text"] as const;
export type ColorKey = (typeof COLOR_KEYS)[number];
export type Palette = Record<ColorKey, string>;

/** Each theme's own colours; every pair clears the contrast rule by a margin. `light` is the page as it always was. */
export const THEME_PALETTES: Record<Theme, Palette> = {
  light: { background: "#f4f5f7", text: "#111827", button: "#ffffff", button_text: "#111827" },
  dark: { background: "#0f172a", text: "#f1f5f9", button: "#1e293b", button_text: "#f8fafc" },
  bold: { background: "#4c1d95", text: "#ffffff", button: "#facc15", button_text: "#1f2937" },
  soft: { background: "#fdf2f8", text: "#831843", button: "#fbcfe8", button_text: "#831843" },
  minimal: { background: "#ffffff", text: "#000000", button: "#ffffff", button_text: "#000000" },
};

export const COLOR_RE = /^#[0-9a-fA-F]{6}$/;

/** Text must stand out this much from what is behind it (WCAG's level for normal text). */
export const MIN_CONTRAST = 4.5;

/** The colours a page shows: the theme's, each overridden by the one the owner picked. */
export const resolvePalette = (theme: Theme | null | undefined, colors: LinktreeColors | null | undefined): Palette => ({
  ...THEME_PALETTES[theme ?? "light"],
  ...Object.fromEntries(Object.entries(colors ?? {}).map(([k, v]) => [k, v.toLowerCase()])),
});

/** What is wrong with the resulting colours, in plain words, one message per pair under the minimum. */
export function contrastProblems(p: Palette): string[] {
  const out: string[] = [];
  const pairs: [ColorKey, ColorKey][] = [
    ["text", "background"],
    ["button_text", "button"],
  ];
  for (const [fg, bg] of pairs) {
    const ratio = contrastRatio(p[fg], p[bg]);
    if (ratio < MIN_CONTRAST) {
      out.push(`${fg} ${p[fg]} on ${bg} ${p[bg]} has a contrast ratio of ${ratio.toFixed(2)}; at least ${MIN_CONTRAST} is needed`);
    }
  }
  return out;
}

export const SOCIAL_PLATFORMS = [
  "instagram",
  "tiktok",
  "x",
  "youtube",
  "linkedin",
  "github",
  "facebook",
  "threads",
  "mastodon",
  "bluesky",
  "twitch",
  "email",
  "website",
] as const;
export type SocialPlatform = (typeof SOCIAL_PLATFORMS)[number];
export const MAX_SOCIALS = 12;

/** The names people know the platforms by (the icons' labels). */
export const SOCIAL_LABELS: Record<SocialPlatform, string> = {
  instagram: "Instagram",
  tiktok: "TikTok",
  x: "X",
  youtube: "YouTube",
  linkedin: "LinkedIn",
  github: "GitHub",
  facebook: "Facebook",
  threads: "Threads",
  mastodon: "Mastodon",
  bluesky: "Bluesky",
  twitch: "Twitch",
  email: "Email",
  website: "Website",
};
