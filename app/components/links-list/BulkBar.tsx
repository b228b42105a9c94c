import { Form, Link } from "@remix-run/react";
import { useEffect, useRef, useState } from "react";
import type { FormError } from "../../lib/messages";
import { formatDateTime } from "../../lib/format";

export const BULK_OPS = {
  add_tag: "Add a tag",
  remove_tag: "Remove a tag",
  set_expiry: "Set an expiry",
  clear_expiry: "Remove the expiry",
  archive: "Archive",
  restore: "Restore from the archive",
  delete: "Delete",
} as const;
export type BulkOp = keyof typeof BULK_OPS;

/** The list's filters, as the URL has them: what "all matching" means. */
export type MatchingFilters = { q?: string; tag?: string; domain?: string; status?: string };

/** What the action sends back: a step to confirm, the outcome, or what was wrong. */
export type BulkReview = {
  op: BulkOp;
  ids: string[];
  tag: string;
  expires_at: number | null;
  /** Set for "every link matching the filters": the filters and the count the person saw. */
  matching?: { filters: MatchingFilters; expected: number };
};
export type BulkActionData = { review: BulkReview } | { done: string } | { error: FormError; ids: string[] };

/** The per-row archive and restore buttons' form value (the row's own form, no review step: both undo each other). */
export const ROW_ARCHIVE_INTENT = "row_archive";

/** The errors of a failed bulk action, every field included (the bulk form has no per-field slots). */
export function BulkError({ error }: { error: FormError }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => ref.current?.focus(), [error]);
  const details = Object.values(error.fields ?? {}).flat();
  return (
    <div ref={ref} tabIndex={-1} role="alert" className="alert-error mb-4">
      <p>
        {error.message} <span className="font-mono text-xs opacity-70">({error.error})</span>
      </p>
      {details.map((m) => (
        <p key={m}>{m}</p>
      ))}
    </div>
  );
}

/**
 * The bulk toolbar: a POST form the rows' checkboxes join by `form={id}`. "Select all on this page"
 * also works without JavaScript (the action then takes `page_ids`); with it, it ticks the rows.
 * Nothing is written until the confirmation step (`BulkConfirm`).
 */
export function BulkBar({ id, pageIds, total, filters }: { id: string; pageIds: string[]; total: number; filters: MatchingFilters }) {
  const [selected, setSelected] = useState<number | null>(null);
  const [matching, setMatching] = useState(false);
  const [op, setOp] = useState<BulkOp | "">("");
  const [offset, setOffset] = useState<string | null>(null);
  const allRef = useRef<HTMLInputElement>(null);
  const pageKey = pageIds.join(",");
  useEffect(() => {
    const rows = () => [...document.querySelectorAll<HTMLInputElement>("input[data-row-select]")];
    const count = () => {
      const n = rows().filter((r) => r.checked).length;
      setSelected(n);
      if (allRef.current) {
        allRef.current.checked = n > 0 && n === rows().length;
        allRef.current.indeterminate = n > 0 && n < rows().length;
      }
    };
    const onChange = (e: Event) => {
      const t = e.target as HTMLInputElement;
      if (t === allRef.current) rows().forEach((r) => (r.checked = t.checked));
      if (t === allRef.current || t.matches("input[data-row-select]")) count();
      if (t.id === "select-matching") setMatching(t.checked);
    };
    count();
    setOffset(String(new Date().getTimezoneOffset()));
    document.addEventListener("change", onChange);
    return () => document.removeEventListener("change", onChange);
  }, [pageKey]);
  const showTag = op === "" || op === "add_tag" || op === "remove_tag";
  const showExpiry = op === "" || op === "set_expiry";
  return (
    <Form method="post" id={id} className="card mb-4 !p-3" aria-label="Bulk actions">
      <div className="flex flex-wrap items-end gap-3">
        <div className="flex items-center gap-2 self-center">
          <input ref={allRef} id="select-all" type="checkbox" name="all" value="page" className="h-4 w-4" />
          <label htmlFor="select-all" className="text-sm">
            Select all on this page
          </label>
          {pageIds.map((p) => (
            <input key={p} type="hidden" name="page_ids" value={p} />
          ))}
        </div>
        {total > pageIds.length ? (
          // Beyond the page: the action then takes the filters, and the count to confirm.
          <div className="flex items-center gap-2 self-center">
            <input id="select-matching" type="checkbox" name="scope" value="matching" className="h-4 w-4" />
            <label htmlFor="select-matching" className="text-sm">
              Select all {total.toLocaleString("en-US")} matching links
            </label>
            {Object.entries(filters).map(([k, v]) => (v ? <input key={k} type="hidden" name={`f_${k}`} value={v} /> : null))}
            <input type="hidden" name="expected" value={total} />
          </div>
        ) : null}
        <p className="self-center text-sm text-slate-600 dark:text-slate-400" aria-live="polite" data-testid="selected-count">
          {selected === null ? "" : matching ? `All ${total.toLocaleString("en-US")} matching selected` : `${selected} selected`}
        </p>
        <div className="min-w-[10rem] flex-1 sm:flex-none">
          <label htmlFor="bulk-op" className="label">
            With the selected links
          </label>
          <select id="bulk-op" name="op" className="input" value={op} onChange={(e) => setOp(e.target.value as BulkOp | "")}>
            <option value="">Choose an action…</option>
            {Object.entries(BULK_OPS)
              // Archived links are listed only under the Archived filter: only there is "restore" of use, and only elsewhere "archive".
              .filter(([v]) => v !== (filters.status === "archived" ? "archive" : "restore"))
              .map(([v, t]) => (
                <option key={v} value={v}>
                  {t}
                </option>
              ))}
          </select>
        </div>
        {showTag ? (
          <div className="min-w-[8rem] flex-1 sm:flex-none">
            <label htmlFor="bulk-tag" className="label">
              Tag to add or remove
            </label>
            <input id="bulk-tag" name="tag" className="input" placeholder="e.g. promo" autoCapitalize="none" spellCheck={false} />
          </div>
        ) : null}
        {showExpiry ? (
          <div className="min-w-[12rem] flex-1 sm:flex-none">
            <label htmlFor="bulk-expiry" className="label">
              Expires at {offset === null ? "(UTC)" : "(your time)"}
            </label>
            <input id="bulk-expiry" name="expires_at_local" type="datetime-local" className="input" />
            {offset === null ? null : <input type="hidden" name="tz_offset" value={offset} />}
          </div>
        ) : null}
        <button type="submit" name="step" value="review" className="btn-secondary">
          Review…
        </button>
      </div>
    </Form>
  );
}

const filterSummary = (f: MatchingFilters) => {
  const parts = [f.q ? `search “${f.q}”` : "", f.tag ? `tag #${f.tag}` : "", f.domain ? `domain ${f.domain}` : "", f.status ? `status ${f.status}` : ""].filter(
    Boolean,
  );
  return parts.length ? `Every link with ${parts.join(", ")}.` : "Every link of the workspace.";
};

const describe = (r: BulkReview, n: string) => {
  switch (r.op) {
    case "add_tag":
      return `Add the tag #${r.tag} to ${n}`;
    case "remove_tag":
      return `Remove the tag #${r.tag} from ${n}`;
    case "set_expiry":
      return `Make ${n} expire at ${formatDateTime(r.expires_at)}`;
    case "clear_expiry":
      return `Remove the expiry of ${n}`;
    case "archive":
      return `Archive ${n}: visitors get “not found” until they are restored; slugs and clicks are kept`;
    case "restore":
      return `Restore ${n} from the archive: they redirect again`;
    case "delete":
      return `Delete ${n}. This cannot be undone.`;
  }
};

/** The confirmation step: says exactly what will happen to which links; only its button writes. */
export function BulkConfirm({ review, slugs, cancelHref }: { review: BulkReview; slugs: string[]; cancelHref: string }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => ref.current?.focus(), [review]);
  const count = review.matching ? review.matching.expected : review.ids.length;
  const n = `${count.toLocaleString("en-US")} ${count === 1 ? "link" : "links"}${review.matching ? " matching the filters" : ""}`;
  return (
    <section aria-labelledby="bulk-confirm-title" className="alert-info mb-4" data-testid="bulk-confirm">
      <h2 id="bulk-confirm-title" ref={ref} tabIndex={-1} className="font-semibold">
        Confirm: {describe(review, n)}
      </h2>
      {review.matching ? (
        <p className="mt-1 text-sm">{filterSummary(review.matching.filters)}</p>
      ) : slugs.length ? (
        <p className="mt-1 break-words text-sm">{slugs.join(", ")}</p>
      ) : null}
      <Form method="post" className="mt-3 flex flex-wrap gap-2">
        {review.matching ? (
          <>
            <input type="hidden" name="scope" value="matching" />
            <input type="hidden" name="expected" value={review.matching.expected} />
            {Object.entries(review.matching.filters).map(([k, v]) => (v ? <input key={k} type="hidden" name={`f_${k}`} value={v} /> : null))}
          </>
        ) : null}
        {review.ids.map((id) => (
          <input key={id} type="hidden" name="ids" value={id} />
        ))}
        <input type="hidden" name="op" value={review.op} />
        <input type="hidden" name="tag" value={review.tag} />
        <input type="hidden" name="expires_at" value={review.expires_at ?? ""} />
        <button type="submit" name="step" value="confirm" className={review.op === "delete" ? "btn-danger" : "btn-primary"}>
          {review.op === "delete" ? `Delete ${n}` : `Confirm for ${n}`}
        </button>
        <Link to={cancelHref} className="btn-secondary">
          Cancel
        </Link>
      </Form>
    </section>
  );
}
