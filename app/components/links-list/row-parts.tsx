import { Link } from "@remix-run/react";
import type { ListedLink } from "../../../server/routers/links/list.schema";
import { CopyButton } from "../ui";
import { useCanChange } from "../../lib/can-change";
import { ArchiveButton } from "./ArchiveButton";
import { BrokenBadge } from "../LinkHealthCard";
import { formatDate, formatDateTime } from "../../lib/format";
import { relativeTime } from "./format";

/** The parts a link shows alike in the card view and the compact table: one markup for each. */

/** What the links list hands every row. */
export type RowProps = {
  link: ListedLink;
  now: number;
  checked: boolean;
  tagHref: (tag: string) => string;
  formId: string;
  /** A destination failed two checks in a row. */
  broken?: boolean;
};

/** The short link as people read it, without its scheme. */
export const displayedShortUrl = (l: ListedLink) => l.short_url.replace(/^https?:\/\//, "");

/** The row's checkbox: it belongs to the bulk form (`form` attribute), so the row can sit anywhere in the page. */
export function RowSelect({ link: l, checked, formId, className }: Pick<RowProps, "link" | "checked" | "formId"> & { className: string }) {
  // A viewer has no bulk action to choose links for.
  if (!useCanChange()) return null;
  return (
    <input
      type="checkbox"
      name="ids"
      value={l.id}
      form={formId}
      defaultChecked={checked}
      className={className}
      aria-label={`Select ${displayedShortUrl(l)}`}
      data-row-select
    />
  );
}

/** Expired, archived and broken; the card view also says when a live link expires. */
export function StateBadges({ link: l, now, broken = false, upcomingExpiry }: Pick<RowProps, "link" | "now" | "broken"> & { upcomingExpiry: boolean }) {
  const expired = l.expires_at !== null && l.expires_at <= now;
  return (
    <>
      {expired ? (
        <span className="badge !bg-red-100 !text-red-800 dark:!bg-red-950 dark:!text-red-200" title={`Expired ${formatDateTime(l.expires_at)}`}>
          expired
        </span>
      ) : upcomingExpiry && l.expires_at ? (
        <span className="badge" title={formatDateTime(l.expires_at)}>
          expires {formatDate(l.expires_at)}
        </span>
      ) : null}
      {l.archived ? <span className="badge">archived</span> : null}
      {broken ? <BrokenBadge /> : null}
    </>
  );
}

/** The link's tags, each a filter of the list. */
export function TagLinks({ tags, tagHref, label = false }: { tags: string[]; tagHref: RowProps["tagHref"]; label?: boolean }) {
  if (!tags.length) return null;
  return (
    <span className="flex flex-wrap gap-1">
      {label ? <span className="sr-only">Tags:</span> : null}
      {tags.map((t) => (
        <Link key={t} to={tagHref(t)} className="badge no-underline" aria-label={`Tag ${t}: show links with this tag`}>
          #{t}
        </Link>
      ))}
    </span>
  );
}

/** When the link was made, relative, with the exact time on hover. */
export function CreatedTime({ link: l, now }: Pick<RowProps, "link" | "now">) {
  return (
    <time dateTime={new Date(l.created_at).toISOString()} title={formatDateTime(l.created_at)}>
      {relativeTime(l.created_at, now)}
    </time>
  );
}

/** Copy, analytics, edit, archive or restore (the last two not for a viewer, whose writes are refused). */
export function RowActions({ link: l, copyLabel }: { link: ListedLink; copyLabel?: string }) {
  const canChange = useCanChange();
  return (
    <>
      <CopyButton value={l.short_url} label={copyLabel} />
      <Link to={`/analytics?link=${l.id}`} className="btn-secondary" aria-label={`Analytics of ${l.slug}`}>
        Analytics
      </Link>
      {canChange ? (
        <>
          <Link to={`/links/${l.id}`} className="btn-secondary" aria-label={`Edit ${l.slug}`}>
            Edit
          </Link>
          <ArchiveButton id={l.id} slug={l.slug} archived={Boolean(l.archived)} />
        </>
      ) : null}
    </>
  );
}
