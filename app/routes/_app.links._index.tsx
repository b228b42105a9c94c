import { redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { parse as parseCookie, serialize as serializeCookie } from "cookie";
import { Link, useActionData, useLoaderData, useSearchParams } from "@remix-run/react";
import { Empty, PageHeader, Success } from "../components/ui";
import { BulkBar, BulkConfirm, BulkError, type BulkActionData } from "../components/links-list/BulkBar";
import { Filters, type FilterValues } from "../components/links-list/Filters";
import { LinkRow } from "../components/links-list/LinkRow";
import { LinkTableRow } from "../components/links-list/LinkTableRow";
import { load } from "../lib/errors.server";
import { useCanChange } from "../lib/can-change";
import { bulkAction } from "../components/links-list/bulk.server";
import { requireActor } from "../lib/session.server";
import { formatNumber } from "../lib/format";
import type { ListInput } from "../../server/routers/links/list.schema";

export const meta: MetaFunction = () => [{ title: "Links · Links" }];

const BULK_FORM = "bulk";

/** The person's choice of view, kept by the browser: cards (roomy) or a compact table. */
const VIEW_COOKIE = "links_view";
const VIEWS = ["cards", "table"] as const;
type View = (typeof VIEWS)[number];

export async function loader({ context, request }: LoaderFunctionArgs) {
  await requireActor(context, request);
  const url = new URL(request.url);
  const sp = url.searchParams;
  // `?view=` (a plain link, so it works without JavaScript) stores the choice and comes back without it.
  const chosen = sp.get("view");
  if (chosen !== null) {
    sp.delete("view");
    const headers = new Headers();
    if ((VIEWS as readonly string[]).includes(chosen)) {
      // Path "/": the page's data requests go to /links.data, which a cookie scoped to /links never reaches.
      headers.set("Set-Cookie", serializeCookie(VIEW_COOKIE, chosen, { path: "/", maxAge: 365 * 86_400, sameSite: "lax", httpOnly: true }));
    }
    throw redirect(`${url.pathname}${sp.size ? `?${sp}` : ""}`, { headers });
  }
  const view: View = parseCookie(request.headers.get("cookie") ?? "")[VIEW_COOKIE] === "table" ? "table" : "cards";
  const str = (k: string) => sp.get(k)?.trim() || undefined;
  const page = str("page");
  // As the URL has it: a bad value is the procedure's 400 VALIDATION_FAILED, not a silent default.
  const input = {
    q: str("q"),
    sort: str("sort"),
    tag: str("tag"),
    domain: str("domain"),
    status: str("status"),
    page: page === undefined ? undefined : Number(page),
  };
  const now = Date.now();
  const list = await load(request, () => context.caller.link.dashboardList(input as ListInput));
  const filters: FilterValues = {
    q: input.q ?? "",
    sort: input.sort === "clicks" ? "clicks" : "newest",
    tag: input.tag ?? "",
    domain: input.domain ?? "",
    status: input.status ?? "",
  };
  // The "Broken" badges: extra, so the list still shows when they cannot be read.
  const { broken } = await context.caller.health.brokenAmong({ ids: list.links.map((l) => l.id) }).catch(() => ({ broken: [] as string[] }));
  return { ...list, now, filters, view, deleted: sp.has("deleted"), broken };
}

/** Two steps: `review` answers what would happen; only `confirm` calls the bulk procedure (bulk.server.ts). */
export async function action({ context, request }: ActionFunctionArgs): Promise<BulkActionData> {
  await requireActor(context, request);
  return bulkAction(context, request);
}

export default function LinksIndex() {
  const data = useLoaderData<typeof loader>();
  const canChange = useCanChange();
  const result = useActionData<typeof action>();
  const [params] = useSearchParams();
  const withParams = (set: Record<string, string | null>) => {
    const p = new URLSearchParams(params);
    for (const [k, v] of Object.entries(set))
      if (v === null) p.delete(k);
      else p.set(k, v);
    p.delete("deleted");
    const s = p.toString();
    return s ? `?${s}` : "?";
  };
  const tagHref = (t: string) => `/links${withParams({ tag: t, page: null })}`;
  const review = result && "review" in result ? result.review : null;
  const error = result && "error" in result ? result.error : null;
  // Ticks stay as sent while the person reviews or fixes the action; a done action clears them.
  const kept = new Set(review?.ids ?? (result && "ids" in result ? result.ids : []));
  const slugOf = new Map(data.links.map((l) => [l.id, l.slug]));
  const broken = new Set(data.broken);
  const filtered = Boolean(data.filters.q || data.filters.tag || data.filters.domain || data.filters.status);
  const first = (data.page - 1) * data.per_page + 1;
  // A tag typed into the URL that no link has yet still shows as the selected filter.
  const tags = data.filters.tag && !data.tags.includes(data.filters.tag) ? [...data.tags, data.filters.tag] : data.tags;
  return (
    <>
      <PageHeader title="Links" subtitle="Your short links, with their clicks.">
        {canChange ? (
          <Link to="/links/import" className="btn-secondary">
            Import
          </Link>
        ) : null}
        <a href="/links.csv" className="btn-secondary" download>
          Export CSV
        </a>
        {canChange ? (
          <Link to="/links/new" className="btn-primary">
            New link
          </Link>
        ) : null}
      </PageHeader>
      {data.deleted && !result ? (
        <div className="mb-4">
          <Success>Link deleted.</Success>
        </div>
      ) : null}
      <Filters values={data.filters} tags={tags} domains={data.domains} />
      {result && "done" in result ? (
        <div className="mb-4">
          <Success>{result.done}</Success>
        </div>
      ) : null}
      {error ? <BulkError error={error} /> : null}
      {review ? <BulkConfirm review={review} slugs={review.ids.map((id) => slugOf.get(id) ?? id)} cancelHref={withParams({})} /> : null}
      {data.links.length === 0 ? (
        <Empty>
          {filtered ? (
            "No link matches these filters."
          ) : data.page > 1 ? (
            <>
              No links on this page. <Link to={withParams({ page: null })}>Go to the first page</Link>.
            </>
          ) : (
            <>
              No links yet. <Link to="/links/new">Create your first short link</Link>.
            </>
          )}
        </Empty>
      ) : (
        <>
          {canChange ? (
            <BulkBar
              key={result && "done" in result ? result.done : "bar"}
              id={BULK_FORM}
              pageIds={data.links.map((l) => l.id)}
              total={data.total}
              filters={{ q: data.filters.q, tag: data.filters.tag, domain: data.filters.domain, status: data.filters.status }}
            />
          ) : null}
          <div className="mb-2 flex flex-wrap items-center justify-between gap-2">
            <p className="text-sm text-slate-600 dark:text-slate-400" data-testid="list-summary">
              {formatNumber(first)}–{formatNumber(first + data.links.length - 1)} of {formatNumber(data.total)} {data.total === 1 ? "link" : "links"}
            </p>
            <nav aria-label="View" className="flex gap-1 text-sm">
              {(
                [
                  ["cards", "Cards"],
                  ["table", "Compact table"],
                ] as const
              ).map(([v, label]) => (
                <Link
                  key={v}
                  to={withParams({ view: v })}
                  aria-current={data.view === v ? "true" : undefined}
                  className={`rounded-md px-2 py-1 no-underline ${data.view === v ? "bg-indigo-100 font-semibold text-indigo-900 dark:bg-indigo-950 dark:text-indigo-100" : ""}`}
                  data-testid={`view-${v}`}
                >
                  {label}
                </Link>
              ))}
            </nav>
          </div>
          {data.view === "table" ? (
            <div className="card relative overflow-x-auto !p-0 md:overflow-visible">
              <table className="table" aria-label="Links">
                <thead>
                  <tr>
                    <th scope="col">
                      <span className="sr-only">Select</span>
                    </th>
                    <th scope="col">Short link</th>
                    <th scope="col">Destination</th>
                    <th scope="col" className="text-right">
                      Clicks
                    </th>
                    <th scope="col">Tags</th>
                    <th scope="col">Created</th>
                    <th scope="col">
                      <span className="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {data.links.map((l) => (
                    <LinkTableRow
                      key={`${l.id}-${kept.has(l.id)}`}
                      link={l}
                      now={data.now}
                      checked={kept.has(l.id)}
                      tagHref={tagHref}
                      formId={BULK_FORM}
                      broken={broken.has(l.id)}
                    />
                  ))}
                </tbody>
              </table>
            </div>
          ) : (
            <ul className="space-y-3" aria-label="Links">
              {data.links.map((l) => (
                <LinkRow
                  key={`${l.id}-${kept.has(l.id)}`}
                  link={l}
                  now={data.now}
                  checked={kept.has(l.id)}
                  tagHref={tagHref}
                  formId={BULK_FORM}
                  broken={broken.has(l.id)}
                />
              ))}
            </ul>
          )}
        </>
      )}
      {data.pages > 1 ? (
        <nav aria-label="Pages" className="mt-6 flex flex-wrap items-center justify-between gap-2">
          {data.page > 1 ? (
            <Link to={withParams({ page: data.page === 2 ? null : String(data.page - 1) })} className="btn-secondary" rel="prev">
              ← Previous page
            </Link>
          ) : (
            <span />
          )}
          <span className="text-sm" aria-current="page">
            Page {formatNumber(data.page)} of {formatNumber(data.pages)}
          </span>
          {data.page < data.pages ? (
            <Link to={withParams({ page: String(data.page + 1) })} className="btn-secondary" rel="next">
              Next page →
            </Link>
          ) : (
            <span />
          )}
        </nav>
      ) : null}
    </>
  );
}
