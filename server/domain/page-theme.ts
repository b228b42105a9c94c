/**
 * The theme a linktree page is drawn in: its own; with none, the page follows the visitor's light or
 * dark mode, unless colours were picked. Those were checked for contrast against the light theme's
 * other colours, and a dark mode would draw the default dark colours over them, so such a page stays
 * light, picked colours and all.
 */
export function shownTheme<T extends string>(theme: T | null | undefined, colors: object | null | undefined): T | "light" | null {
  return theme ?? (colors && Object.keys(colors).length ? "light" : null);
}
