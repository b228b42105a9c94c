/**
 * Tags as people type them, brought into the tag alphabet (`0-9 a-z -`, 1-24 characters): the
 * dashboard's link form and the importers of other services' files use this one function, so
 * "Spring Sale" is `spring-sale` at every door. The API itself does not normalise: it refuses a
 * tag outside the alphabet (INVALID_TAG), naming it.
 */

export const TAG_RE = /^[0-9a-z-]{1,24}$/;
export const TAG_RULE = "1-24 characters of 0-9, a-z and -";

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

/** Why a tag is refused, naming it, or null when it is in the alphabet. */
export function tagProblem(tag: string): string | null {
  if (TAG_RE.test(tag)) return null;
  const hint = normalizeTag(tag);
  const suggest = hint && hint !== tag && TAG_RE.test(hint) ? ` (try "${hint}")` : "";
  return `"${tag}" is not a tag: each tag must be ${TAG_RULE}${suggest}`;
}
