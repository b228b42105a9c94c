import { Area, AreaChart, CartesianGrid, Tooltip, XAxis, YAxis } from "recharts";

const WIDTH = 800;
const HEIGHT = 256;

export type SeriesPoint = { bucket: string; clicks: number; previous: number | null };

/** "2026-03-29" → "03-29"; "2026-03-29 14:00" → "14:00" (or "03-29 14:00" at midnight, where a day starts). */
const tick = (b: string) => (b.length > 10 ? (b.endsWith(" 00:00") ? `${b.slice(5, 10)}` : b.slice(11)) : b.slice(5));

/**
 * Clicks per hour or day (recharts), with the previous period drawn faintly behind. Drawn at a fixed
 * viewBox so the server renders it and nothing shifts; CSS scales the SVG to the container's width.
 * Tooltips come alive once the page hydrates.
 */
export function ClicksChart({ series, unit, previousLabel }: { series: SeriesPoint[]; unit: "hour" | "day"; previousLabel?: string }) {
  const total = series.reduce((s, p) => s + p.clicks, 0);
  const hasPrevious = series.some((p) => p.previous !== null);
  return (
    <figure className="w-full text-indigo-600 dark:text-indigo-400 [&_svg]:h-auto [&_svg]:w-full [&_.recharts-wrapper]:!h-auto [&_.recharts-wrapper]:!w-full">
      <div role="img" aria-label={`Clicks per ${unit}: ${total} in ${series.length} ${unit}s`} style={{ aspectRatio: `${WIDTH} / ${HEIGHT}` }}>
        <AreaChart id="clicks-series" width={WIDTH} height={HEIGHT} data={series} margin={{ top: 8, right: 12, bottom: 0, left: -12 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="#94a3b8" strokeOpacity={0.4} vertical={false} />
          {/* A fixed tick interval: recharts' default measures text, which only the browser can (hydration mismatch). */}
          <XAxis dataKey="bucket" tickFormatter={tick} tick={{ fontSize: 11, fill: "#475569" }} interval={Math.max(0, Math.ceil(series.length / 8) - 1)} />
          <YAxis allowDecimals={false} tick={{ fontSize: 11, fill: "#475569" }} width={48} />
          <Tooltip labelClassName="text-slate-900" />
          {hasPrevious ? (
            <Area
              type="monotone"
              dataKey="previous"
              name={previousLabel ?? "Previous period"}
              stroke="#94a3b8"
              strokeDasharray="4 3"
              strokeWidth={1.5}
              fill="#94a3b8"
              fillOpacity={0.08}
              isAnimationActive={false}
            />
          ) : null}
          <Area
            type="monotone"
            dataKey="clicks"
            name="Clicks"
            stroke="currentColor"
            strokeWidth={2}
            fill="currentColor"
            fillOpacity={0.15}
            isAnimationActive={false}
          />
        </AreaChart>
      </div>
      <figcaption className="sr-only">
        {series
          .filter((p) => p.clicks)
          .map((p) => `${p.bucket}: ${p.clicks}`)
          .join(", ") || "No clicks"}
      </figcaption>
    </figure>
  );
}
