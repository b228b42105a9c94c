import type { AppLoadContext } from "@remix-run/node";
import { attempt, fieldError } from "../../lib/errors.server";
import { expiryFromLocal } from "../../lib/link-form";
import { normalizeTag, TAG_RE } from "../../../server/domain/tags";
import { BULK_OPS, ROW_ARCHIVE_INTENT, type BulkActionData, type BulkOp, type MatchingFilters } from "./BulkBar";

const FILTER_KEYS = ["q", "tag", "domain", "status"] as const;

/**
 * The links list's bulk form. `step=review` only reads the form and answers what would happen;
 * `step=confirm` runs the bulk procedure (one transaction, the same checks as single edits).
 * Server-only: the schema module pulls in Node's Buffer.
 */
export async function bulkAction(context: AppLoadContext, request: Request): Promise<BulkActionData> {
  const form = await request.formData();
  if (form.get("intent") === ROW_ARCHIVE_INTENT) return rowArchive(context, request, form);
  // "Select all N matching": the list's filters and the count the person saw, instead of ids.
  const matching =
    form.get("scope") === "matching"
      ? {
          filters: Object.fromEntries(FILTER_KEYS.flatMap((k) => (form.get(`f_${k}`) ? [[k, String(form.get(`f_${k}`))]] : []))) as MatchingFilters,
          expected: Number(form.get("expected")),
        }
      : undefined;
  const ids = matching ? [] : (form.get("all") === "page" ? form.getAll("page_ids") : form.getAll("ids")).map(String);
  const op = String(form.get("op") ?? "") as BulkOp;
  // As the link form and the importers read tags ("Q4 Push" → q4-push); the review step shows the result.
  const tag = normalizeTag(String(form.get("tag") ?? "").replace(/^\s*#/, ""));
  const fail = (field: string, message: string) => ({ error: fieldError({ [field]: [message] }), ids });
  if (!(op in BULK_OPS)) return fail("op", "Choose what to do with the selected links.");
  if (!matching && !ids.length) return fail("ids", "Select at least one link.");
  if ((op === "add_tag" || op === "remove_tag") && !TAG_RE.test(tag)) return fail("tag", "Give a tag: 1-24 characters of a-z, 0-9 and -.");
  const confirmed = form.get("step") === "confirm";
  let expires: number | null = null;
  if (op === "set_expiry") {
    expires = confirmed ? Number(form.get("expires_at")) : expiryFromLocal(String(form.get("expires_at_local") ?? ""), String(form.get("tz_offset") ?? ""));
    if (expires === null || !Number.isFinite(expires) || expires <= 0) return fail("expires_at", "Give the date and time the links expire at.");
  }
  if (!confirmed) return { review: { op, ids, tag, expires_at: expires, ...(matching ? { matching } : {}) } };
  const caller = context.caller.link;
  const r = await attempt(request, () => {
    if (matching) {
      // As sent: a bad filter or count is the procedure's 400, shown with its fields.
      const m = matching as { filters: never; expected: number };
      if (op === "add_tag") return caller.bulkTagMatching({ ...m, add: tag });
      if (op === "remove_tag") return caller.bulkTagMatching({ ...m, remove: tag });
      if (op === "set_expiry" || op === "clear_expiry") return caller.bulkExpiryMatching({ ...m, expires_at: expires });
      if (op === "archive" || op === "restore") return caller.bulkArchiveMatching({ ...m, archived: op === "archive" });
      return caller.bulkDeleteMatching(m);
    }
    if (op === "add_tag") return caller.bulkTag({ ids, add: [tag] });
    if (op === "remove_tag") return caller.bulkTag({ ids, remove: [tag] });
    if (op === "set_expiry" || op === "clear_expiry") return caller.bulkExpiry({ ids, expires_at: expires });
    if (op === "archive" || op === "restore") return caller.bulkArchive({ ids, archived: op === "archive" });
    return caller.bulkDelete({ ids });
  });
  if (!r.ok) return { error: r.error, ids };
  const n = `${r.value.updated} ${r.value.updated === 1 ? "link" : "links"}`;
  const done: Record<BulkOp, string> = {
    add_tag: `Tagged ${n} #${tag}.`,
    remove_tag: `Removed #${tag} from ${n}.`,
    set_expiry: `Set the expiry of ${n}.`,
    clear_expiry: `Removed the expiry of ${n}.`,
    archive: `Archived ${n}.`,
    restore: `Restored ${n} from the archive.`,
    delete: `Deleted ${n}.`,
  };
  return { done: done[op] };
}

/** One row's Archive or Restore button: the same single edit as the link page's "Archived" box. */
async function rowArchive(context: AppLoadContext, request: Request, form: FormData): Promise<BulkActionData> {
  const id = String(form.get("id") ?? "");
  const archived = form.get("archived") === "true";
  const r = await attempt(request, () => context.caller.link.update({ id, archived }));
  if (!r.ok) return { error: r.error, ids: [] };
  const name = r.value.short_url.replace(/^https?:\/\//, "");
  return { done: archived ? `Archived ${name}. It is listed under the Archived filter.` : `Restored ${name} from the archive.` };
}
