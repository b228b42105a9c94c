import { Form } from "@remix-run/react";
import { ROW_ARCHIVE_INTENT } from "./BulkBar";

/**
 * A row's own Archive (or, for an archived link, Restore) button: a small POST form of its own,
 * outside the bulk form, so it works without JavaScript. No review step: each undoes the other.
 */
export function ArchiveButton({ id, slug, archived }: { id: string; slug: string; archived: boolean }) {
  return (
    <Form method="post" className="contents">
      <input type="hidden" name="id" value={id} />
      <input type="hidden" name="archived" value={archived ? "false" : "true"} />
      <button type="submit" name="intent" value={ROW_ARCHIVE_INTENT} className="btn-secondary" aria-label={`${archived ? "Restore" : "Archive"} ${slug}`}>
        {archived ? "Restore" : "Archive"}
      </button>
    </Form>
  );
}
