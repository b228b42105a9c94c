import { Form, useSubmit } from "@remix-run/react";
import { useEffect, useRef } from "react";
import type { ListSort, ListStatus } from "../../../server/routers/links/list.schema";

export const SORT_LABELS: Record<ListSort, string> = { newest: "Newest first", clicks: "Most clicks" };
export const STATUS_LABELS: Record<ListStatus, string> = {
  active: "Active",
  expired: "Expired",
  password: "With password",
  targeting: "With targeting",
  share_card: "With share card",
  archived: "Archived",
};

export type FilterValues = { q: string; sort: ListSort; tag: string; domain: string; status: string };

/**
 * The list's query string as a GET form: shareable, the back button works, and it needs no
 * JavaScript. With it, a changed select applies at once; typing still waits for Enter or the button.
 * A new filter starts again at page 1 (the form has no `page`).
 */
export function Filters({ values, tags, domains }: { values: FilterValues; tags: string[]; domains: string[] }) {
  const submit = useSubmit();
  // Uncontrolled fields (they work without JavaScript) follow the URL when it changes under them:
  // the back button, a tag chip, a shared link. Focus stays where it is.
  // Only a value that changed is written back: a choice made while the page hydrates stays as made.
  const form = useRef<HTMLFormElement>(null);
  const shown = useRef(values);
  useEffect(() => {
    for (const [name, value] of Object.entries(values)) {
      if (shown.current[name as keyof FilterValues] === value) continue;
      const el = form.current?.elements.namedItem(name);
      if (el instanceof HTMLInputElement || el instanceof HTMLSelectElement) el.value = value;
    }
    shown.current = values;
  }, [values]);
  const select = (name: keyof FilterValues, label: string, options: [string, string][]) => (
    <div className="min-w-0">
      <label htmlFor={`f-${name}`} className="label">
        {label}
      </label>
      <select id={`f-${name}`} name={name} className="input" defaultValue={values[name]}>
        {options.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
  return (
    <Form
      ref={form}
      method="get"
      role="search"
      aria-label="Filter links"
      className="mb-4 grid grid-cols-2 gap-2 sm:grid-cols-3 lg:grid-cols-[2fr_1fr_1fr_1fr_1fr_auto] lg:items-end"
      onChange={(e) => {
        if ((e.target as HTMLElement).tagName === "SELECT") submit(e.currentTarget);
      }}
    >
      <div className="col-span-2 min-w-0 sm:col-span-3 lg:col-span-1">
        <label htmlFor="q" className="label">
          Search
        </label>
        <input id="q" name="q" type="search" className="input" placeholder="Slug, URL or title" maxLength={200} defaultValue={values.q} />
      </div>
      {select(
        "sort",
        "Sort",
        Object.entries(SORT_LABELS).map(([v, t]) => [v, t]),
      )}
      {select("tag", "Tag", [["", "All tags"], ...tags.map((t): [string, string] => [t, `#${t}`])])}
      {select("domain", "Domain", [["", "All domains"], ...domains.map((d): [string, string] => [d, d])])}
      {select("status", "Status", [["", "Any status"], ...Object.entries(STATUS_LABELS).map(([v, t]): [string, string] => [v, t])])}
      <button type="submit" className="btn-secondary col-span-2 sm:col-span-1">
        Apply
      </button>
    </Form>
  );
}
