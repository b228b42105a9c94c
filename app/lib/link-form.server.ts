import type { LinkDto } from "../../server/routers/links/links.schema";
import { expiryFromLocal, parseTags, targetingFrom, valuesFromForm, variantsFrom, withUtm, type LinkFormValues } from "./link-form";

/** The link.create input from the form: empty fields are simply left out. */
export function createInputFrom(form: FormData): { values: LinkFormValues; input: Record<string, unknown> } {
  const v = valuesFromForm(form);
  const input: Record<string, unknown> = { url: withUtm(v.url, v.utm) };
  if (v.slug) input.slug = v.slug;
  if (v.domain) input.domain = v.domain;
  if (v.title) input.title = v.title;
  const tags = parseTags(v.tags);
  if (tags.length) input.tags = tags;
  const expires = expiryFromLocal(v.expires_at_local, v.tz_offset);
  if (expires !== null) input.expires_at = expires;
  if (v.expiration_url) input.expiration_url = v.expiration_url;
  const targeting = targetingFrom(v);
  if (targeting) input.targeting = targeting;
  if (v.password) input.password = v.password;
  if (v.og_title) input.og_title = v.og_title;
  if (v.og_description) input.og_description = v.og_description;
  if (v.og_image) input.og_image = v.og_image;
  const variants = variantsFrom(v);
  if (variants) input.variants = variants;
  if (v.forward_query) input.forward_query = true;
  if (v.archived) input.archived = true;
  return { values: v, input };
}

/** The link.update input: every field the form shows, so clearing one clears it (null); unchanged slug and expiry are left out. */
export function updateInputFrom(form: FormData, current: LinkDto): { values: LinkFormValues; input: Record<string, unknown> } {
  const v = valuesFromForm(form);
  const input: Record<string, unknown> = { id: current.id, url: withUtm(v.url, v.utm), tags: parseTags(v.tags) };
  if (v.slug !== current.slug) input.slug = v.slug;
  // The picker's domain ("" is the default one); unchanged, it is a no-op.
  if (v.domain !== null) input.domain = v.domain || null;
  const expires = expiryFromLocal(v.expires_at_local, v.tz_offset);
  // An untouched expiry (possibly already past) is not re-sent; the form shows minutes only.
  const sameExpiry = expires !== null && current.expires_at !== null && Math.floor(expires / 60_000) === Math.floor(current.expires_at / 60_000);
  if (!sameExpiry) input.expires_at = expires;
  if (expires !== null) input.expiration_url = v.expiration_url || null;
  input.targeting = targetingFrom(v);
  if (v.password_clear) input.password = null;
  else if (v.password) input.password = v.password;
  input.title = v.title || null;
  input.og_title = v.og_title || null;
  input.og_description = v.og_description || null;
  input.og_image = v.og_image || null;
  input.variants = variantsFrom(v);
  input.forward_query = v.forward_query;
  input.archived = v.archived;
  return { values: v, input };
}
