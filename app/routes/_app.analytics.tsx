import { redirect, type AppLoadContext, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useLoaderData, useLocation } from "@remix-run/react";
import { ClicksChart } from "../components/ClicksChart";
import { LinkPicker } from "../components/LinkPicker";
import { FieldErrors, FormAlert, fieldErrors, PageHeader, Success } from "../components/ui";
import { FILTERS, knownZone, NONE, RANGES, viewRange, withParam, type FilterKey } from "../lib/analytics-view";
import { dailyVisitors, overview, OverviewFieldError, type Overview, type OverviewInput } from "../components/analytics/overview.server";
import { attempt, fieldError, load } from "../lib/errors.server";
import { loadAcrossWorkspaces } from "../lib/locate.server";
import type { FormError } from "../lib/messages";
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

/** A real calendar day YYYY-MM-DD. */
const isRealDay = (s: string) => {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
  const t = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(t.getTime()) && t.toISOString().slice(0, 10) === s && t.getUTCFullYear() >= 1970;
};

/**
 * The picker's text without JavaScript (`link_q`): empty is every link, a slug or a single match
 * is that link (the URL then names it by id), several matches are offered to choose from.
 */
async function resolveTyped(context: AppLoadContext, request: Request, sp: URLSearchParams) {
  const typed = sp.get("link_q");
  if (typed === null) return null;
  const q = typed.trim().toLowerCase();
  const next = new URLSearchParams(sp);
  next.delete("link_q");
  if (q) {
    const current = sp.get("link");
    const { links } = await load(request, () => context.caller.link.suggest({ q: q.slice(0, 200), limit: 10 }));
    const match = links.find((l) => l.slug === q) ?? (links.length === 1 ? links[0] : undefined);
    if (current && links.some((l) => l.id === current && l.slug === q)) next.set("link", current);
    else if (match) next.set("link", match.id);
    else return { typed, choices: links.map((l) => ({ id: l.id, slug: l.slug, url: l.url })) };
  } else next.delete("link");
  const s = next.toString();
  throw redirect(`${new URL(request.url).pathname}${s ? `?${s}` : ""}`);
}

/** The filters of the view (the link apart), as in the address. */
function filtersOf(sp: URLSearchParams): Record<string, string> {
  const filters: Record<string, string> = {};
  for (const [k] of FILTERS) {
    const v = sp.get(k);
    if (k !== "link" && v !== null && v !== "") filters[k] = v;
  }
  return filters;
}

/** The view's range and interval, each checked: a wrong one is marked and replaced by the default. */
function checkedView(sp: URLSearchParams, tz: string, range: ReturnType<typeof viewRange>) {
  const marks: Record<string, string> = {};
  let { from, to } = range;
  for (const [name, v] of [
    ["from", from],
    ["to", to],
  ] as const) {
    if (v !== undefined && !isRealDay(v)) marks[name] = "must be a day YYYY-MM-DD";
  }
  if (!marks.from && !marks.to && from && to && from > to) marks.to = "must not be before from";
  if (marks.from || marks.to) ({ from, to } = viewRange(new URLSearchParams(), tz));
  let interval = sp.get("interval") || undefined;
  if (interval !== undefined && interval !== "hour" && interval !== "day") {
    marks.interval = "must be hour or day";
    interval = undefined;
  }
  return { from, to, interval, marks };
}

export async function loader({ context, request }: LoaderFunctionArgs) {
  await requireActor(context, request);
  const sp = new URL(request.url).searchParams;
  const typed = await resolveTyped(context, request, sp);
  const tz = zoneOf(request, sp);
  // A zone the server does not know is the procedure's 400 (the error page), as for any bad value.
  if (!knownZone(tz)) await load(request, () => context.caller.analytics.breakdown({ by: "day", tz }));
  const range = viewRange(sp, tz);
  let linkId = typed ? undefined : sp.get("link") || undefined;
  // A teammate's link of another of the user's workspaces: switch there and open it (with a notice).
  if (linkId) {
    const id = linkId;
    const here = await attempt(request, () => context.caller.link.get({ id }));
    if (!here.ok && here.error.error === "NOT_FOUND") await loadAcrossWorkspaces(context, request, "link", id, () => context.caller.link.get({ id }));
  }
  const filters = filtersOf(sp);
  let problem: FormError | null = typed
    ? fieldError({
        link: [typed.choices.length ? `${typed.choices.length} links match “${typed.typed.trim()}”: choose one` : `no link matches “${typed.typed.trim()}”`],
      })
    : null;
  const mark = (field: string, message: string) => {
    problem = fieldError({ ...problem?.fields, [field]: [message] });
  };
  // A bad range, interval or link keeps the page: the field is marked, and the default view shows meanwhile.
  const view = checkedView(sp, tz, range);
  for (const [field, message] of Object.entries(view.marks)) mark(field, message);
  const { from, to } = view;
  let interval = view.interval;
  if (linkId) {
    const id = linkId;
    const found = await attempt(request, () => context.caller.link.get({ id }));
    if (!found.ok && found.error.error === "VALIDATION_FAILED") {
      mark("link", found.error.fields?.id?.[0] ?? "is not a link");
      linkId = undefined;
    }
  }
  const input: OverviewInput = { tz, from, to, interval: interval as "hour" | "day" | undefined, linkId, filters };
  let d: Overview;
  try {
    d = await overview(context.caller, input);
  } catch (e) {
    if (!(e instanceof OverviewFieldError)) return load(request, () => Promise.reject(e));
    mark(e.field, e.message);
    interval = undefined;
    d = await load(request, () => overview(context.caller, { ...input, interval: undefined }));
  }
  // Unique visitors per UTC day (a visitor key lasts one UTC day), over the view's link and time.
  const [days, link] = await Promise.all([
    load(request, () => dailyVisitors(context.caller, linkId, d.from, d.to)),
    linkId ? load(request, () => context.caller.link.get({ id: linkId })) : null,
  ]);
  return {
    link: link ? { id: link.id, slug: link.slug, short_url: link.short_url } : null,
    // The values as typed, so a marked field still shows what was wrong.
    typedRange: { from: sp.get("from") ?? "", to: sp.get("to") ?? "" },
    problem: problem as FormError | null,
    choices: typed?.choices ?? [],
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
  trigger: "Link or QR code",
};
const FILTER_NAME = Object.fromEntries(FILTERS) as Record<FilterKey, string>;

const percent = (n: number) => `${n > 0 ? "+" : n < 0 ? "−" : "±"}${Math.abs(n).toLocaleString("en", { maximumFractionDigits: 1 })}%`;

export default function Analytics() {
  const { d, days, link, preset, explicitTz, interval, filters, exportQuery, problem, typedRange, choices } = useLoaderData<typeof loader>();
  const location = useLocation();
  const sp = new URLSearchParams(location.search);
  // The picker's unresolved text is not part of any view the page links to.
  sp.delete("link_q");
  const switched = sp.get("switched");
  sp.delete("switched");
  const errs = (name: string) => fieldErrors(problem, name);
  const marked = (name: string) => (errs(name).length ? { "aria-invalid": true, "aria-describedby": `${name}-err` } : {});
  const countryName = useCountryName();
  const label = (key: FilterKey, value: string | null, fallback: string) =>
    key === "country" && value
      ? `${countryName(value)} (${value})`
      : key === "link" && link && value === link.id
        ? link.slug
        : key === "trigger" && value
          ? value === "qr"
            ? "QR code"
            : "Link"
          : fallback;
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

      {switched && link ? (
        <div className="mb-4">
          <Success>Switched to workspace {switched} to open this link.</Success>
        </div>
      ) : null}
      <FormAlert error={problem} className="mb-4" />
      <Form method="get" className="card mb-4 grid gap-3 sm:grid-cols-2 lg:grid-cols-[1fr_1fr_1fr_1fr_1fr_auto] lg:items-end">
        {/* The breakdown filters and an explicit zone ride along when the form is applied. */}
        {Object.entries(filters).map(([k, v]) => (
          <input key={k} type="hidden" name={k} value={v} />
        ))}
        {explicitTz !== null ? <input type="hidden" name="tz" value={explicitTz} /> : null}
        <LinkPicker
          key={link?.id ?? ""}
          selected={link ? { id: link.id, slug: link.slug } : null}
          errors={errs("link")}
          choices={
            choices.length ? (
              <ul className="mt-1 space-y-0.5 text-sm" aria-label="Matching links" data-testid="link-choices">
                {choices.map((c) => (
                  <li key={c.id}>
                    <Link to={withParam(sp, "link", c.id)} className="font-mono">
                      {c.slug}
                    </Link>{" "}
                    <span className="text-xs text-slate-700 dark:text-slate-300">{c.url}</span>
                  </li>
                ))}
              </ul>
            ) : null
          }
        />
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
          <input
            id="from"
            name="from"
            type="date"
            className="input"
            defaultValue={errs("from").length ? typedRange.from : preset === "custom" ? d.from_day : ""}
            {...marked("from")}
          />
          <FieldErrors id="from-err" errors={errs("from")} />
        </div>
        <div>
          <label htmlFor="to" className="label">
            To
          </label>
          <input
            id="to"
            name="to"
            type="date"
            className="input"
            defaultValue={errs("to").length ? typedRange.to : preset === "custom" ? d.to_day : ""}
            {...marked("to")}
          />
          <FieldErrors id="to-err" errors={errs("to")} />
        </div>
        <div>
          <label htmlFor="interval" className="label">
            Points
          </label>
          <select id="interval" name="interval" className="input" defaultValue={interval} {...marked("interval")}>
            <option value="">Automatic</option>
            <option value="hour">Hourly</option>
            <option value="day">Daily</option>
          </select>
          <FieldErrors id="interval-err" errors={errs("interval")} />
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
