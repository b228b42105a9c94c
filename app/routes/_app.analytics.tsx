import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, Link, useLoaderData, useSubmit } from "@remix-run/react";
import { ClicksChart } from "../components/ClicksChart";
import { PageHeader } from "../components/ui";
import { parseRange, PRESETS, rangeQuery, summarise, type Breakdown } from "../lib/analytics";
import { fetchClicks } from "../lib/analytics.server";
import { load } from "../lib/errors.server";
import { formatDateTime, formatNumber } from "../lib/format";
import { useCountryName } from "../lib/hydrated";
import { requireActor } from "../lib/session.server";

export const meta: MetaFunction = () => [{ title: "Analytics · Links" }];

export async function loader({ context, request }: LoaderFunctionArgs) {
  await requireActor(context, request);
  const sp = new URL(request.url).searchParams;
  const linkId = sp.get("link") || null;
  const range = parseRange(sp);
  const [{ links }, data, { days }] = await Promise.all([
    load(request, () => context.caller.link.list({})),
    fetchClicks(context, request, linkId, range),
    load(request, () => context.caller.analytics.daily(rangeQuery(linkId, range))),
  ]);
  const slugs = Object.fromEntries(links.map((l) => [l.id, l.slug]));
  const link = linkId ? (links.find((l) => l.id === linkId) ?? (await load(request, () => context.caller.link.get({ id: linkId })))) : null;
  return {
    links: links.map((l) => ({ id: l.id, slug: l.slug })),
    link: link ? { id: link.id, slug: link.slug, short_url: link.short_url, url: link.url } : null,
    range,
    count: data.count,
    days,
    // Distinct visitor keys over the range are not the sum of the days: keys change every day by design.
    visitorDays: days.reduce((s, x) => s + x.visitors, 0),
    sampled: data.clicks.length,
    ...summarise(data.clicks, range),
    recent: data.clicks.slice(0, 25).map((c) => ({ ...c, slug: slugs[c.link_id] ?? c.link_id })),
    exportQuery: new URLSearchParams({
      ...(linkId ? { link: linkId } : {}),
      ...(range.fromDay ? { from: range.fromDay } : {}),
      ...(range.toDay ? { to: range.toDay } : {}),
    }).toString(),
  };
}

const TITLES: Record<string, string> = {
  country: "Countries",
  device: "Devices",
  platform: "Platforms",
  browser: "Browsers",
  referer: "Referrers",
  rule: "Targeting rule",
};

export default function Analytics() {
  const d = useLoaderData<typeof loader>();
  const submit = useSubmit();
  const countryName = useCountryName();
  return (
    <>
      <PageHeader
        title={d.link ? `Analytics · ${d.link.slug}` : "Analytics"}
        subtitle={d.link ? <a href={d.link.short_url}>{d.link.short_url}</a> : "All short links of your workspace."}
      >
        <a href={`/analytics.csv?${d.exportQuery}`} className="btn-secondary" download data-testid="export-csv">
          Export CSV
        </a>
      </PageHeader>
      <Form
        method="get"
        className="card mb-6 grid gap-3 sm:grid-cols-2 lg:grid-cols-[1fr_1fr_auto_auto_auto] lg:items-end"
        onChange={(e) => {
          if ((e.target as HTMLElement).tagName === "SELECT") submit(e.currentTarget, { replace: true });
        }}
      >
        <div>
          <label htmlFor="link" className="label">
            Link
          </label>
          <select id="link" name="link" className="input" defaultValue={d.link?.id ?? ""}>
            <option value="">All links</option>
            {d.links.map((l) => (
              <option key={l.id} value={l.id}>
                {l.slug}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor="range" className="label">
            Range
          </label>
          <select id="range" name="range" className="input" defaultValue={d.range.preset === "custom" ? "30d" : d.range.preset}>
            {PRESETS.map(([v, label]) => (
              <option key={v} value={v}>
                {label}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor="from" className="label">
            From
          </label>
          <input id="from" name="from" type="date" className="input" defaultValue={d.range.preset === "custom" ? d.range.fromDay : ""} />
        </div>
        <div>
          <label htmlFor="to" className="label">
            To
          </label>
          <input id="to" name="to" type="date" className="input" defaultValue={d.range.preset === "custom" ? d.range.toDay : ""} />
        </div>
        <button type="submit" className="btn-secondary">
          Apply
        </button>
      </Form>
      <div className="mb-6 grid gap-4 sm:grid-cols-3">
        <Stat label="Clicks" value={formatNumber(d.count)} testId="click-count" />
        <Stat label="Visitors (daily uniques)" value={formatNumber(d.visitorDays)} testId="visitor-count" />
        <Stat label="Countries" value={String(d.breakdowns.country.filter((c) => c.label !== "Unknown").length)} />
      </div>
      {d.sampled < d.count ? (
        <p className="alert-info mb-4">
          The chart and breakdowns use the latest {formatNumber(d.sampled)} of {formatNumber(d.count)} clicks.
        </p>
      ) : null}
      <section className="card mb-6" aria-labelledby="h-time">
        <h2 id="h-time" className="mb-3 font-semibold">
          Clicks over time
        </h2>
        <ClicksChart series={d.series} />
      </section>
      <section className="card mb-6 overflow-x-auto" aria-labelledby="h-daily">
        <h2 id="h-daily" className="mb-1 font-semibold">
          Clicks and unique visitors per day
        </h2>
        <p className="mb-3 text-sm text-slate-600 dark:text-slate-400">
          A visitor is one address and browser on one UTC day; no address is stored, and the key changes every day.
        </p>
        {d.days.length ? (
          <table className="table" data-testid="daily-table">
            <thead>
              <tr>
                <th scope="col">Day (UTC)</th>
                <th scope="col">Clicks</th>
                <th scope="col">Unique visitors</th>
              </tr>
            </thead>
            <tbody>
              {d.days
                .slice()
                .reverse()
                .map((x) => (
                  <tr key={x.day}>
                    <td>{x.day}</td>
                    <td>{formatNumber(x.clicks)}</td>
                    <td>{formatNumber(x.visitors)}</td>
                  </tr>
                ))}
            </tbody>
          </table>
        ) : (
          <p className="text-sm text-slate-600 dark:text-slate-400">No clicks in this range.</p>
        )}
      </section>
      <div className="mb-6 grid gap-4 md:grid-cols-2 xl:grid-cols-3">
        {Object.entries(d.breakdowns).map(([k, rows]) => (
          <BreakdownCard
            key={k}
            title={TITLES[k]}
            rows={
              k === "country"
                ? rows.map((r) => ({ ...r, label: r.label === "Unknown" || r.label === "Other" ? r.label : `${countryName(r.label)} (${r.label})` }))
                : rows
            }
            total={d.sampled}
          />
        ))}
      </div>
      <section className="card overflow-x-auto" aria-labelledby="h-recent">
        <h2 id="h-recent" className="mb-3 font-semibold">
          Recent clicks
        </h2>
        {d.recent.length ? (
          <table className="table">
            <thead>
              <tr>
                <th scope="col">When</th>
                {!d.link ? <th scope="col">Link</th> : null}
                <th scope="col">Country</th>
                <th scope="col">Device</th>
                <th scope="col">Browser</th>
                <th scope="col">Rule</th>
              </tr>
            </thead>
            <tbody>
              {d.recent.map((c) => (
                <tr key={c.ts}>
                  <td className="whitespace-nowrap">{formatDateTime(c.timestamp)}</td>
                  {!d.link ? (
                    <td>
                      <Link to={`/analytics?link=${c.link_id}`}>{c.slug}</Link>
                    </td>
                  ) : null}
                  <td>{c.country ?? "—"}</td>
                  <td>{c.device}</td>
                  <td>{c.browser ?? "—"}</td>
                  <td>{c.rule ?? "url"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <p className="text-sm text-slate-600 dark:text-slate-400">No clicks in this range.</p>
        )}
      </section>
    </>
  );
}

function Stat({ label, value, testId }: { label: string; value: string; testId?: string }) {
  return (
    <div className="card !p-4">
      <p className="text-sm text-slate-600 dark:text-slate-400">{label}</p>
      <p className="mt-1 truncate text-2xl font-semibold" data-testid={testId}>
        {value}
      </p>
    </div>
  );
}

function BreakdownCard({ title, rows, total }: { title: string; rows: Breakdown; total: number }) {
  return (
    <section className="card !p-4" aria-label={title}>
      <h2 className="mb-2 font-semibold">{title}</h2>
      {rows.length ? (
        <ul className="space-y-1.5">
          {rows.map((r) => (
            <li key={r.label} className="text-sm">
              <div className="flex justify-between gap-2">
                <span className="truncate">{r.label}</span>
                <span className="tabular-nums text-slate-600 dark:text-slate-400">{formatNumber(r.count)}</span>
              </div>
              <div className="mt-0.5 h-1.5 rounded bg-slate-100 dark:bg-slate-800" aria-hidden="true">
                <div className="h-1.5 rounded bg-indigo-500" style={{ width: `${total ? Math.max(2, (r.count / total) * 100) : 0}%` }} />
              </div>
            </li>
          ))}
        </ul>
      ) : (
        <p className="text-sm text-slate-500">No data.</p>
      )}
    </section>
  );
}
