import { Area, AreaChart, CartesianGrid, Tooltip, XAxis, YAxis } from "recharts";

const WIDTH = 800;
const HEIGHT = 256;

/**
 * Clicks per day (recharts). Drawn at a fixed viewBox so the server renders it and nothing shifts;
 * CSS scales the SVG to the container's width. Tooltips come alive once the page hydrates.
 */
export function ClicksChart({ series }: { series: { day: string; clicks: number }[] }) {
  const total = series.reduce((s, p) => s + p.clicks, 0);
  return (
    <figure className="w-full text-indigo-600 dark:text-indigo-400 [&_svg]:h-auto [&_svg]:w-full [&_.recharts-wrapper]:!h-auto [&_.recharts-wrapper]:!w-full">
      <div role="img" aria-label={`Clicks per day: ${total} in ${series.length} days`} style={{ aspectRatio: `${WIDTH} / ${HEIGHT}` }}>
        <AreaChart id="clicks-per-day" width={WIDTH} height={HEIGHT} data={series} margin={{ top: 8, right: 12, bottom: 0, left: -12 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="#94a3b8" strokeOpacity={0.4} vertical={false} />
          {/* A fixed tick interval: recharts' default measures text, which only the browser can (hydration mismatch). */}
          <XAxis
            dataKey="day"
            tickFormatter={(d: string) => d.slice(5)}
            tick={{ fontSize: 11, fill: "#64748b" }}
            interval={Math.max(0, Math.ceil(series.length / 8) - 1)}
          />
          <YAxis allowDecimals={false} tick={{ fontSize: 11, fill: "#64748b" }} width={48} />
          <Tooltip labelClassName="text-slate-900" />
          <Area type="monotone" dataKey="clicks" stroke="currentColor" strokeWidth={2} fill="currentColor" fillOpacity={0.15} isAnimationActive={false} />
        </AreaChart>
      </div>
      <figcaption className="sr-only">
        {series
          .filter((p) => p.clicks)
          .map((p) => `${p.day}: ${p.clicks}`)
          .join(", ") || "No clicks"}
      </figcaption>
    </figure>
  );
}
