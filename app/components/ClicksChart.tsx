/**
 * Clicks per day as an SVG area chart, rendered on the server: no client code, and the box has a
 * fixed height so nothing shifts. The SVG stretches to the width; labels are HTML so they do not.
 * (recharts is not installed in this tree; see the report.)
 */
export function ClicksChart({ series }: { series: { day: string; clicks: number }[] }) {
  const total = series.reduce((s, p) => s + p.clicks, 0);
  const max = Math.max(1, ...series.map((p) => p.clicks));
  const step = niceStep(max);
  const top = Math.ceil(max / step) * step;
  const n = Math.max(1, series.length - 1);
  const x = (i: number) => (i / n) * 100; // percent of the plot width
  const y = (v: number) => (1 - v / top) * 100; // percent of the plot height
  const line = series.map((p, i) => `${i ? "L" : "M"}${x(i).toFixed(2)},${y(p.clicks).toFixed(2)}`).join("");
  const area = series.length ? `${line}L${x(series.length - 1).toFixed(2)},100L0,100Z` : "";
  const ticks = Array.from({ length: top / step + 1 }, (_, i) => i * step);
  const every = Math.max(1, Math.ceil(series.length / 7));
  return (
    <figure className="relative h-64 w-full pb-6 pl-10 text-indigo-600 dark:text-indigo-400">
      <div className="relative h-full w-full">
        {ticks.map((t) => (
          <span key={t} className="absolute -left-10 w-8 -translate-y-1/2 text-right text-[11px] text-slate-500" style={{ top: `${y(t)}%` }} aria-hidden="true">
            {t}
          </span>
        ))}
        <svg viewBox="0 0 100 100" preserveAspectRatio="none" className="absolute inset-0 h-full w-full overflow-visible" role="img" aria-label={`Clicks per day: ${total} in ${series.length} days`}>
          {ticks.map((t) => (
            <line key={t} x1={0} x2={100} y1={y(t)} y2={y(t)} stroke="#94a3b8" strokeOpacity={0.4} strokeDasharray="3 3" vectorEffect="non-scaling-stroke" />
          ))}
          <path d={area} fill="currentColor" fillOpacity={0.15} />
          <path d={line} fill="none" stroke="currentColor" strokeWidth={2} vectorEffect="non-scaling-stroke" strokeLinejoin="round" />
        </svg>
        {series.map((p, i) =>
          p.clicks ? (
            <span key={p.day} title={`${p.day}: ${p.clicks}`} className="absolute h-2 w-2 -translate-x-1/2 -translate-y-1/2 rounded-full bg-current" style={{ left: `${x(i)}%`, top: `${y(p.clicks)}%` }} />
          ) : null,
        )}
        {series.map((p, i) =>
          i % every === 0 ? (
            <span key={p.day} className="absolute top-full mt-1 -translate-x-1/2 whitespace-nowrap text-[11px] text-slate-500" style={{ left: `${x(i)}%` }} aria-hidden="true">
              {p.day.slice(5)}
            </span>
          ) : null,
        )}
      </div>
      <figcaption className="sr-only">{series.filter((p) => p.clicks).map((p) => `${p.day}: ${p.clicks}`).join(", ") || "No clicks"}</figcaption>
    </figure>
  );
}

function niceStep(max: number): number {
  const raw = max / 4;
  const mag = 10 ** Math.floor(Math.log10(raw || 1));
  return Math.max(1, [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag);
}
