import { escapeHtml } from "./html";

export type CardLink = { id: string; slug: string; ogTitle: string | null; ogDescription: string | null; ogImage: string | null };

/** The image of the card: the link's own, else one generated from the title (else none). */
export function cardImage(link: CardLink, redirectBase: string): string | null {
  if (link.ogImage) return link.ogImage;
  if (link.ogTitle) return `${redirectBase}/_/og/${link.id}.png`;
  return null;
}

/**
 * The share card for social preview crawlers . Every value is HTML-escaped. The
 * destination is not in the page: a password link's card must not reveal it.
 */
export function shareCardPage(link: CardLink, redirectBase: string, shortBase = redirectBase): string {
  // The generated image is served by the redirect domain; og:url is the short link as shared (a branded domain's too).
  const shortUrl = `${shortBase}/${link.slug}`;
  const image = cardImage(link, redirectBase);
  const tags: [string, string, string | null][] = [
    ["property", "og:type", "website"],
    ["property", "og:url", shortUrl],
    ["property", "og:title", link.ogTitle],
    ["property", "og:description", link.ogDescription],
    ["property", "og:image", image],
    ["property", "og:image:width", image && !link.ogImage ? "1200" : null],
    ["property", "og:image:height", image && !link.ogImage ? "630" : null],
    ["name", "twitter:card", "summary_large_image"],
    ["name", "twitter:title", link.ogTitle],
    ["name", "twitter:description", link.ogDescription],
    ["name", "twitter:image", image],
  ];
  const meta = tags
    .filter(([, , v]) => v !== null && v !== "")
    .map(([attr, name, v]) => `<meta ${attr}="${name}" content="${escapeHtml(v!)}">`)
    .join("");
  const title = link.ogTitle ?? shortUrl;
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>` +
    (link.ogDescription ? `<meta name="description" content="${escapeHtml(link.ogDescription)}">` : "") +
    `${meta}</head><body><h1>${escapeHtml(title)}</h1>` +
    (link.ogDescription ? `<p>${escapeHtml(link.ogDescription)}</p>` : "") +
    `<p><a href="${escapeHtml(shortUrl)}">${escapeHtml(shortUrl)}</a></p></body></html>`
  );
}
