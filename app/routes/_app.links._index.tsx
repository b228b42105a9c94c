import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, Link, useLoaderData, useSearchParams, useSubmit } from "@remix-run/react";
import { CopyButton, Empty, PageHeader } from "../components/ui";
import { load } from "../lib/errors.server";
import { requireActor } from "../lib/session.server";
import { formatDate, formatDateTime } from "../lib/format";

export const meta: MetaFunction = () => [{ title: "Links · Links" }];

export async function loader({ context, request }: LoaderFunctionArgs) {
  await requireActor(context, request);
  const sp = new URL(request.url).searchParams;
  const q = sp.get("q")?.trim() || undefined;
  const tag = sp.get("tag") || undefined;
  const cursor = sp.get("cursor") || undefined;
  const result = await load(request, () => context.caller.link.search({ q, tag, cursor, limit: 20 }));
  return { ...result, q: q ?? "", tag: tag ?? "", paged: Boolean(cursor) };
}

export default function LinksIndex() {
  const data = useLoaderData<typeof loader>();
  const [params] = useSearchParams();
  const submit = useSubmit();
  const nextParams = new URLSearchParams(params);
  if (data.next_cursor) nextParams.set("cursor", data.next_cursor);
  const firstParams = new URLSearchParams(params);
  firstParams.delete("cursor");
  return (
    <>
      <PageHeader title="Links" subtitle="Your short links, newest first.">
        <Link to="/links/import" className="btn-secondary">
          Import
        </Link>
        <a href="/links.csv" className="btn-secondary" download>
          Export CSV
        </a>
        <Link to="/links/new" className="btn-primary">
          New link
        </Link>
      </PageHeader>
      <Form
        method="get"
        role="search"
        className="mb-4 flex flex-col gap-2 sm:flex-row sm:items-end"
        onChange={(e) => {
          // The tag filter applies at once; typing still waits for Enter or the button.
          if ((e.target as HTMLElement).tagName === "SELECT") submit(e.currentTarget, { replace: true });
        }}
      >
        <div className="flex-1">
          <label htmlFor="q" className="label">
            Search
          </label>
          <input id="q" name="q" type="search" className="input" placeholder="Slug, URL or tag" defaultValue={data.q} />
        </div>
        <div className="sm:w-48">
          <label htmlFor="tag" className="label">
            Tag
          </label>
          <select id="tag" name="tag" className="input" defaultValue={data.tag}>
            <option value="">All tags</option>
            {data.tags.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </div>
        <button type="submit" className="btn-secondary">
          Search
        </button>
      </Form>
      {data.links.length === 0 ? (
        <Empty>
          {data.q || data.tag ? (
            "No link matches."
          ) : (
            <>
              No links yet. <Link to="/links/new">Create your first short link</Link>.
            </>
          )}
        </Empty>
      ) : (
        <ul className="space-y-3" aria-label="Links">
          {data.links.map((l) => (
            <li key={l.id} className="card !p-4" data-testid="link-row">
              <div className="flex flex-wrap items-start justify-between gap-3">
                <div className="min-w-0 flex-1">
                  <p className="flex flex-wrap items-center gap-2">
                    <a href={l.short_url} className="break-all font-mono font-semibold">
                      {l.short_url.replace(/^https?:\/\//, "")}
                    </a>
                    {l.has_password ? <span className="badge">password</span> : null}
                    {l.expires_at ? (
                      <span className="badge" title={formatDateTime(l.expires_at)}>
                        {l.expires_at < Date.now() ? "expired" : `expires ${formatDate(l.expires_at)}`}
                      </span>
                    ) : null}
                    {l.targeting ? <span className="badge">targeting</span> : null}
                    {l.og_title || l.og_image ? <span className="badge">share card</span> : null}
                  </p>
                  <p className="mt-1 truncate text-sm text-slate-600 dark:text-slate-400" title={l.url}>
                    → {l.url}
                  </p>
                  {l.tags.length ? (
                    <p className="mt-2 flex flex-wrap gap-1">
                      {l.tags.map((t) => (
                        <Link key={t} to={`/links?tag=${encodeURIComponent(t)}`} className="badge no-underline">
                          #{t}
                        </Link>
                      ))}
                    </p>
                  ) : null}
                </div>
                <div className="flex flex-wrap gap-2">
                  <CopyButton value={l.short_url} />
                  <Link to={`/analytics?link=${l.id}`} className="btn-secondary">
                    Analytics
                  </Link>
                  <Link to={`/links/${l.id}`} className="btn-secondary" aria-label={`Edit ${l.slug}`}>
                    Edit
                  </Link>
                </div>
              </div>
            </li>
          ))}
        </ul>
      )}
      <nav aria-label="Pages" className="mt-6 flex justify-between">
        {data.paged ? (
          <Link to={`?${firstParams}`} className="btn-secondary">
            ← First page
          </Link>
        ) : (
          <span />
        )}
        {data.next_cursor ? (
          <Link to={`?${nextParams}`} className="btn-secondary">
            Next page →
          </Link>
        ) : null}
      </nav>
    </>
  );
}
