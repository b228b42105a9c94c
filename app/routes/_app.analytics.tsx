import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, Link, useLoaderData, useLocation } from "@remix-run/react";
import { ClicksChart } from "../components/ClicksChart";
import { PageHeader } from "../components/ui";
import { FILTERS, knownZone, NONE, RANGES, viewRange, withParam, type FilterKey } from "../lib/dashboard";
import { load } from "../lib/errors.server";
import { formatNumber } from "../lib/format";
import { useCountryName } from "../lib/hydrated";
import { requireActor } from "../lib/session.server";

export const meta: MetaFunction = () => [{ title: "Analytics · Links" }];

/** The viewer's zone: `?tz=` (an invalid one is the procedure's 400), else the cookie root.tsx sets from the browser, else UTC. */
function zoneOf(request: Request, sp: URLSearchParams): string {
  const given = sp.get("tz");
  if (given !== null) return given;
  const raw = /(?:^|;\s*)tz=([^;]*)/.exec(request.headers.get("cookie") ?? "")?.[1];
  let cookie: string | undefined;
  try {
    cookie = raw ? decodeURIComponent(raw) : undefined;
  } catch {
    cookie = undefined;
  }
  return knownZone(cookie) ? cookie : "UTC";
}

export async function loader({ context, request }: LoaderFunctionArgs) {
  await requireActor(context, request);
  const sp = new URL(request.url).searchParams;
  const tz = zoneOf(request, sp);
  const range = viewRange(sp, knownZone(tz) ? tz : "UTC");
  const linkId = sp.get("link") || undefined;
  const filters: Record<string, string> = {};
  for (const [k] of FILTERS) {
    const v = sp.get(k);
    if (k !== "link" && v !== null && v !== "") filters[k] = v;
  }
  const interval = sp.get("interval") || undefined;
  const [{ links }, d] = await Promise.all([
    load(request, () => context.caller.link.list({})),
    load(request, () =>
      context.caller.analytics.dashboard({ tz, from: range.from, to: range.to, interval: interval as "hour" | "day" | undefined, link_id: linkId, ...filters }),
    ),
  ]);
  // Unique visitors per UTC day (a visitor key lasts one UTC day), over the view's link and time.
  const { days } = await load(request, () =>
    context.caller.analytics.daily({ ...(linkId ? { link_id: linkId } : {}), from: String(d.from), to: String(d.to) }),
  );
  const link = linkId ? (links.find((l) => l.id === linkId) ?? (await load(request, () => context.caller.link.get({ id: linkId })))) : null;
  return {
    links: links.map((l) => ({ id: l.id, slug: l.slug })),
    link: link ? { id: link.id, slug: link.slug, short_url: link.short_url } : null,
    preset: range.preset,
    explicitTz: sp.get("tz"),
    interval: interval ?? "",
    filters,
    d,
    days,
    exportQuery: new URLSearchParams({ ...(linkId ? { link: linkId } : {}), start: String(d.from), end: String(d.to) }).toString(),
  };
}

const TITLES: Record<FilterKey, string> = {
  link: "Top links",
  referrer: "Referrers",
  country: "Countries",
  city: "Cities",
  device: "Devices",
  browser: "Browsers",
  platform: "Systems",
  rule: "Targeting rules",
};
const FILTER_NAME = Object.fromEntries(FILTERS) as Record<FilterKey, string>;

const percent = (n: number) => `${n > 0 ? "+" : n < 0 ? "−" : "±"}${Math.abs(n).toLocaleString("en", { maximumFractionDigits: 1 })}%`;

export default function Analytics() {
  const { d, days, link, links, preset, explicitTz, interval, filters, exportQuery } = useLoaderData<typeof loader>();
  const location = useLocation();
  const sp = new URLSearchParams(location.search);
  const countryName = useCountryName();
  const label = (key: FilterKey, value: string | null, fallback: string) =>
    key === "country" && value ? `${countryName(value)} (${value})` : key === "link" && link && value === link.id ? link.slug : fallback;
  const active = FILTERS.filter(([k]) => (k === "link" ? !!link : filters[k] !== undefined));
  return (
    <>
      <PageHeader
        title={link ? `Analytics · ${link.slug}` : "Analytics"}
        subtitle={
          <>
            {link ? <a href={link.short_url}>{link.short_url}</a> : "All short links of your workspace."} Times in <span data-testid="time-zone">{d.tz}</span>.
          </>
        }
      >
        <a href={`/analytics.csv?${exportQuery}`} className="btn-secondary" download data-testid="export-csv">
          Export CSV
        </a>
      </PageHeader>

      <Form method="get" className="card mb-4 grid gap-3 sm:grid-cols-2 lg:grid-cols-[1fr_1fr_1fr_1fr_1fr_auto] lg:items-end">
        {/* The breakdown filters and an explicit zone ride along when the form is applied. */}
        {Object.entries(filters).map(([k, v]) => (
          <input key={k} type="hidden" name={k} value={v} />
        ))}
        {explicitTz !== null ? <input type="hidden" name="tz" value={explicitTz} /> : null}
        <div>
          <label htmlFor="link" className="label">
            Link
          </label>
          <select id="link" name="link" className="input" defaultValue={link?.id ?? ""}>
            <option value="">All links</option>
            {link && !links.some((l) => l.id === link.id) ? <option value={link.id}>{link.slug}</option> : null}
            {links.map((l) => (
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
          <select id="range" name="range" className="input" defaultValue={preset === "custom" ? "30d" : preset}>
            {RANGES.map(([v, text]) => (
              <option key={v} value={v}>
                {text}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor="from" className="label">
            From
          </label>
          <input id="from" name="from" type="date" className="input" defaultValue={preset === "custom" ? d.from_day : ""} />
        </div>
        <div>
          <label htmlFor="to" className="label">
            To
          </label>
          <input id="to" name="to" type="date" className="input" defaultValue={preset === "custom" ? d.to_day : ""} />
        </div>
        <div>
          <label htmlFor="interval" className="label">
            Points
          </label>
          <select id="interval" name="interval" className="input" defaultValue={interval}>
            <option value="">Automatic</option>
            <option value="hour">Hourly</option>
            <option value="day">Daily</option>
          </select>
        </div>
        <button type="submit" className="btn-secondary">
          Apply
        </button>
      </Form>

      {active.length ? (
        <div className="mb-4 flex flex-wrap items-center gap-2" data-testid="filters">
          <span className="text-sm text-slate-700 dark:text-slate-300">Filtered by</span>
          <ul className="flex flex-wrap gap-2">
            {active.map(([k]) => {
              const v = k === "link" ? link!.id : filters[k];
              const shown = v === NONE ? "Unknown" : label(k, v, v);
              return (
                <li key={k}>
                  <Link
                    to={withParam(sp, k, null)}
                    className="inline-flex items-center gap-1 rounded-full border border-indigo-300 bg-indigo-50 px-3 py-1 text-sm text-indigo-900 no-underline hover:bg-indigo-100 dark:border-indigo-700 dark:bg-indigo-950 dark:text-indigo-100"
                    aria-label={`Remove filter ${FILTER_NAME[k]}: ${shown}`}
                    data-testid={`chip-${k}`}
                  >
                    {FILTER_NAME[k]}: {shown} <span aria-hidden="true">×</span>
                  </Link>
                </li>
              );
            })}
          </ul>
          <Link to={clearFilters(sp)} className="text-sm">
            Clear filters
          </Link>
        </div>
      ) : null}

      <div className="mb-6 grid gap-4 sm:grid-cols-3">
        <Stat label="Clicks" value={formatNumber(d.total)} testId="click-count">
          {d.previous ? (
            <p className="mt-1 text-sm text-slate-700 dark:text-slate-300" data-testid="comparison">
              {d.change !== null ? (
                <span className={d.change >= 0 ? "font-semibold text-emerald-800 dark:text-emerald-300" : "font-semibold text-red-800 dark:text-red-300"}>
                  {percent(d.change)}
                </span>
              ) : (
                "New"
              )}{" "}
              vs. {formatNumber(d.previous.total)} in the previous {d.previous.from_day === d.previous.to_day ? "day" : "period"} ({d.previous.from_day} –{" "}
              {d.previous.to_day})
            </p>
          ) : null}
        </Stat>
        <Stat label="Visitors (daily uniques)" value={formatNumber(d.visitors)} testId="visitor-count" />
        <Stat label="Countries" value={String(d.breakdowns.country.filter((c) => c.value !== null).length)} />
      </div>

      <section className="card mb-6" aria-labelledby="h-time">
        <h2 id="h-time" className="mb-1 font-semibold">
          Clicks per {d.interval}
        </h2>
        <p className="mb-3 text-sm text-slate-700 dark:text-slate-300">
          {d.from_day} – {d.to_day} ({d.tz}){d.previous ? <> · the dashed line is the previous period</> : null}
        </p>
        <ClicksChart series={d.series} unit={d.interval} previousLabel={d.previous ? `${d.previous.from_day} – ${d.previous.to_day}` : undefined} />
      </section>

      <div className="mb-6 grid gap-4 md:grid-cols-2 xl:grid-cols-3">
        {FILTERS.map(([k]) => (
          <BreakdownCard
            key={k}
            name={k}
            title={TITLES[k]}
            rows={d.breakdowns[k].map((r) => ({ ...r, label: label(k, r.value, r.label) }))}
            total={d.total}
            current={k === "link" ? (link?.id ?? undefined) : filters[k]}
            href={(v) => withParam(sp, k, v)}
          />
        ))}
      </div>

      <section className="card overflow-x-auto" aria-labelledby="h-daily">
        <h2 id="h-daily" className="mb-1 font-semibold">
          Clicks and unique visitors per day
        </h2>
        <p className="mb-3 text-sm text-slate-700 dark:text-slate-300">
          A visitor is one address and browser on one UTC day; no address is stored, and the key changes every day. This table counts every click of the link
          and range, without the breakdown filters.
        </p>
        {days.length ? (
          <table className="table" data-testid="daily-table">
            <thead>
              <tr>
                <th scope="col">Day (UTC)</th>
                <th scope="col">Clicks</th>
                <th scope="col">Unique visitors</th>
              </tr>
            </thead>
            <tbody>
              {days
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
          <p className="text-sm text-slate-700 dark:text-slate-300">No clicks in this range.</p>
        )}
      </section>
    </>
  );
}

function clearFilters(sp: URLSearchParams): string {
  const next = new URLSearchParams(sp);
  for (const [k] of FILTERS) next.delete(k);
  const s = next.toString();
  return s ? `?${s}` : "?";
}

function Stat({ label, value, testId, children }: { label: string; value: string; testId?: string; children?: React.ReactNode }) {
  return (
    <div className="card !p-4">
      <p className="text-sm text-slate-700 dark:text-slate-300">{label}</p>
      <p className="mt-1 truncate text-2xl font-semibold" data-testid={testId}>
        {value}
      </p>
      {children}
    </div>
  );
}

type Row = { value: string | null; label: string; clicks: number };

/** Top values of one dimension; each row is a link that filters the whole page by it (again: removes it). */
function BreakdownCard(props: { name: FilterKey; title: string; rows: Row[]; total: number; current?: string; href: (value: string | null) => string }) {
  const { name, title, rows, total, current, href } = props;
  const headingId = `h-${name}`;
  return (
    <section className="card !p-4" aria-labelledby={headingId} data-testid={`breakdown-${name}`}>
      <h2 id={headingId} className="mb-2 font-semibold">
        {title}
      </h2>
      {rows.length ? (
        <ul className="space-y-1.5">
          {rows.map((r) => {
            const value = r.value ?? NONE;
            const on = current === value;
            return (
              <li key={value} className="text-sm">
                <Link
                  to={href(on ? null : value)}
                  className="block rounded px-1 py-0.5 text-slate-900 no-underline hover:bg-slate-100 dark:text-slate-100 dark:hover:bg-slate-800"
                  aria-current={on ? "true" : undefined}
                  title={on ? `Remove the ${title.toLowerCase()} filter` : `Show only ${r.label}`}
                >
                  <span className="flex justify-between gap-2">
                    <span className={`truncate ${on ? "font-semibold" : ""}`}>{r.label}</span>
                    <span className="tabular-nums text-slate-700 dark:text-slate-300">{formatNumber(r.clicks)}</span>
                  </span>
                  <span className="mt-0.5 block h-1.5 rounded bg-slate-100 dark:bg-slate-800" aria-hidden="true">
                    <span className="block h-1.5 rounded bg-indigo-500" style={{ width: `${total ? Math.max(2, (r.clicks / total) * 100) : 0}%` }} />
                  </span>
                </Link>
              </li>
            );
          })}
        </ul>
      ) : (
        <p className="text-sm text-slate-700 dark:text-slate-300">No data.</p>
      )}
    </section>
  );
}
