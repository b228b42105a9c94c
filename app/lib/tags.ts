/**
 * Tags as people type them, brought into the tag alphabet (`0-9 a-z -`, 1-24 characters), as the
 * server's importers do, so "Spring Sale" is `spring-sale` at every door. The dashboard's own copy
 * (its build holds no server module); server/http/dashboard-rules.test.ts holds it to the server's.
 */

export const TAG_RE = /^[0-9a-z-]{1,24}$/;

/**
 * One tag in the alphabet: lower case, accents dropped ("Café" → "cafe"), every run of other
 * characters one `-`, none at either end. Empty when nothing of it is left. Not cut to length:
 * a tag that is still too long is refused with its name rather than changed behind one's back.
 */
export function normalizeTag(tag: string): string {
  return tag
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^0-9a-z]+/g, "-")
    .replace(/^-|-$/g, "");
}

/** Each tag normalised, empty ones dropped, duplicates dropped (first kept). */
export function normalizeTags(tags: readonly string[]): string[] {
  return [...new Set(tags.map(normalizeTag).filter(Boolean))];
}

/** Tags typed in one text field, separated by commas (a tag may hold spaces: "Q4 Push" is one tag). */
export const splitTags = (typed: string): string[] =>
  typed
    .split(/[,|]/)
    .map((t) => t.trim())
    .filter(Boolean);
