import type { ListedLink } from "../../../server/routers/links/list.schema";
import { formatNumber } from "../../lib/format";
import { targetingSummary } from "./format";
import { CreatedTime, displayedShortUrl, RowActions, RowSelect, StateBadges, TagLinks, type RowProps } from "./row-parts";
import { Sparkline } from "./Sparkline";

/** Serialised by the loader: the same shape as the procedure's output. */
export type Row = ListedLink;

/**
 * One link: a card that stacks at phone width and spreads into columns from `md` up. The checkbox
 * belongs to the bulk form (`form` attribute), so the row can sit anywhere in the page.
 */
export function LinkRow({ link: l, now, checked, tagHref, formId, broken = false }: RowProps) {
  const targeting = targetingSummary(l.targeting);
  const display = displayedShortUrl(l);
  return (
    <li className="card !p-4" data-testid="link-row" data-id={l.id}>
      <div className="flex flex-col gap-3 md:flex-row md:items-start">
        <div className="flex min-w-0 flex-1 items-start gap-3">
          <RowSelect link={l} checked={checked} formId={formId} className="mt-1 h-4 w-4 shrink-0" />
          <div className="min-w-0 flex-1">
            {l.title ? (
              <p className="mb-0.5 break-words font-semibold" data-testid="link-title">
                {l.title}
              </p>
            ) : null}
            <p className="flex flex-wrap items-center gap-2">
              <a href={l.short_url} className="break-all font-mono font-semibold">
                {display}
              </a>
              <StateBadges link={l} now={now} broken={broken} upcomingExpiry />
              {l.has_password ? <span className="badge">password</span> : null}
              {targeting ? (
                <span className="badge" title={`Targeting: ${targeting}`}>
                  targeting: {targeting}
                </span>
              ) : null}
              {l.og_title || l.og_description || l.og_image ? (
                <span className="badge" title={l.og_title ?? undefined}>
                  share card
                </span>
              ) : null}
            </p>
            <p className="mt-1 truncate text-sm text-slate-600 dark:text-slate-400" title={l.url}>
              <span className="sr-only">Destination: </span>→ {l.url}
            </p>
            <p className="mt-2 flex flex-wrap items-center gap-x-3 gap-y-1 text-xs text-slate-600 dark:text-slate-400">
              <span>
                Created <CreatedTime link={l} now={now} />
              </span>
              <TagLinks tags={l.tags} tagHref={tagHref} label />
            </p>
          </div>
        </div>
        <div className="flex items-center gap-3 md:w-56 md:flex-col md:items-end">
          <div className="flex items-center gap-3" data-testid="clicks">
            <Sparkline daily={l.clicks.daily} />
            <p className="text-right text-sm leading-tight">
              <span className="font-semibold tabular-nums" data-testid="clicks-total">
                {formatNumber(l.clicks.total)}
              </span>{" "}
              {l.clicks.total === 1 ? "click" : "clicks"}
              <br />
              <span className="text-xs text-slate-600 dark:text-slate-400">
                <span className="tabular-nums" data-testid="clicks-7d">
                  {formatNumber(l.clicks.last_7_days)}
                </span>{" "}
                in 7 days
              </span>
            </p>
          </div>
        </div>
      </div>
      <div className="mt-3 flex flex-wrap gap-2 border-t border-slate-100 pt-3 dark:border-slate-800">
        <RowActions link={l} />
      </div>
    </li>
  );
}
