/**
 * How well two colours stand apart, by WCAG 2's contrast ratio: the linktree editor's live hints, the
 * linktree look rules and the QR code's colour check all judge with this one function, so what the
 * dashboard calls readable is what the server accepts.
 */

/** A QR code's modules against its background below this ratio: scanners miss them. */
export const QR_MIN_CONTRAST = 3;

/** Relative luminance of `#rrggbb`, 0 (black) to 1 (white). */
function luminance(hex: string): number {
  const channel = (i: number) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

/** The contrast ratio of two `#rrggbb` colours, 1 (the same) to 21 (black on white). */
export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}
