import { Link } from "@remix-run/react";
import type { ListedLink } from "../../../server/routers/links/list.schema";
import { CopyButton } from "../ui";
import { formatDateTime, formatNumber } from "../../lib/format";
import { relativeTime } from "./format";

/**
 * One link as a row of the compact table: short link, destination, clicks, tags, created, and its
 * actions in a menu. The menu is a <details> disclosure, so it opens without JavaScript; the
 * checkbox belongs to the bulk form (`form` attribute), as in the card view.
 */
export function LinkTableRow({
  link: l,
  now,
  checked,
  tagHref,
  formId,
}: {
  link: ListedLink;
  now: number;
  checked: boolean;
  tagHref: (tag: string) => string;
  formId: string;
}) {
  const display = l.short_url.replace(/^https?:\/\//, "");
  const expired = l.expires_at !== null && l.expires_at <= now;
  return (
    <tr data-testid="link-row" data-id={l.id}>
      <td className="w-8 !align-middle">
        <input
          type="checkbox"
          name="ids"
          value={l.id}
          form={formId}
          defaultChecked={checked}
          className="h-4 w-4"
          aria-label={`Select ${display}`}
          data-row-select
        />
      </td>
      <td className="max-w-[14rem] !align-middle">
        <a href={l.short_url} className="block truncate font-mono font-semibold" title={l.short_url}>
          {display}
        </a>
        {expired ? <span className="badge !bg-red-100 !text-red-800 dark:!bg-red-950 dark:!text-red-200">expired</span> : null}
      </td>
      <td className="max-w-[18rem] !align-middle">
        <span className="block truncate text-slate-700 dark:text-slate-300" title={l.url}>
          {l.url}
        </span>
      </td>
      <td className="text-right tabular-nums !align-middle" data-testid="clicks-total">
        {formatNumber(l.clicks.total)}
      </td>
      <td className="!align-middle">
        {l.tags.length ? (
          <span className="flex flex-wrap gap-1">
            {l.tags.map((t) => (
              <Link key={t} to={tagHref(t)} className="badge no-underline" aria-label={`Tag ${t}: show links with this tag`}>
                #{t}
              </Link>
            ))}
          </span>
        ) : null}
      </td>
      <td className="whitespace-nowrap !align-middle">
        <time dateTime={new Date(l.created_at).toISOString()} title={formatDateTime(l.created_at)}>
          {relativeTime(l.created_at, now)}
        </time>
      </td>
      <td className="!align-middle">
        <details className="relative">
          <summary className="btn-secondary cursor-pointer list-none !px-2 !py-1 text-xs" aria-label={`Actions for ${l.slug}`}>
            Actions <span aria-hidden="true">▾</span>
          </summary>
          <div className="absolute right-0 z-10 mt-1 flex w-40 flex-col gap-1 rounded-md border border-slate-200 bg-white p-2 shadow-lg dark:border-slate-700 dark:bg-slate-900">
            <CopyButton value={l.short_url} label="Copy short link" />
            <Link to={`/analytics?link=${l.id}`} className="btn-secondary" aria-label={`Analytics of ${l.slug}`}>
              Analytics
            </Link>
            <Link to={`/links/${l.id}`} className="btn-secondary" aria-label={`Edit ${l.slug}`}>
              Edit
            </Link>
          </div>
        </details>
      </td>
    </tr>
  );
}
