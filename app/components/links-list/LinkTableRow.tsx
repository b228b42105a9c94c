import { formatNumber } from "../../lib/format";
import { CreatedTime, displayedShortUrl, RowActions, RowSelect, StateBadges, TagLinks, type RowProps } from "./row-parts";

/**
 * One link as a row of the compact table: short link, destination, clicks, tags, created, and its
 * actions in a menu. The menu is a <details> disclosure, so it opens without JavaScript; the
 * checkbox belongs to the bulk form (`form` attribute), as in the card view.
 */
export function LinkTableRow({ link: l, now, checked, tagHref, formId, broken = false }: RowProps) {
  const display = displayedShortUrl(l);
  return (
    <tr data-testid="link-row" data-id={l.id}>
      <td className="w-8 !align-middle">
        <RowSelect link={l} checked={checked} formId={formId} className="h-4 w-4" />
      </td>
      <td className="max-w-[14rem] !align-middle">
        <a href={l.short_url} className="block truncate font-mono font-semibold" title={l.short_url}>
          {display}
        </a>
        <StateBadges link={l} now={now} broken={broken} upcomingExpiry={false} />
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
        <TagLinks tags={l.tags} tagHref={tagHref} />
      </td>
      <td className="whitespace-nowrap !align-middle">
        <CreatedTime link={l} now={now} />
      </td>
      <td className="!align-middle">
        <details className="relative">
          <summary className="btn-secondary cursor-pointer list-none !px-2 !py-1 text-xs" aria-label={`Actions for ${l.slug}`}>
            Actions <span aria-hidden="true">▾</span>
          </summary>
          <div className="absolute right-0 z-10 mt-1 flex w-40 flex-col gap-1 rounded-md border border-slate-200 bg-white p-2 shadow-lg dark:border-slate-700 dark:bg-slate-900">
            <RowActions link={l} copyLabel="Copy short link" />
          </div>
        </details>
      </td>
    </tr>
  );
}
