/** A tiny inline chart of clicks per day, oldest first; the numbers are in its label for screen readers. */
export function Sparkline({ daily, width = 84, height = 24 }: { daily: number[]; width?: number; height?: number }) {
  const max = Math.max(1, ...daily);
  const step = daily.length > 1 ? width / (daily.length - 1) : width;
  const y = (n: number) => (height - 2 - (n / max) * (height - 4)).toFixed(1);
  const points = daily.map((n, i) => `${(i * step).toFixed(1)},${y(n)}`).join(" ");
  const label = `Clicks per day, last ${daily.length} days: ${daily.join(", ")}`;
  return (
    <svg
      role="img"
      aria-label={label}
      width={width}
      height={height}
      viewBox={`0 0 ${width} ${height}`}
      className="shrink-0 text-indigo-600 dark:text-indigo-400"
      data-testid="sparkline"
    >
      <title>{label}</title>
      <polyline points={`0,${height} ${points} ${width},${height}`} fill="currentColor" fillOpacity="0.12" stroke="none" />
      <polyline points={points} fill="none" stroke="currentColor" strokeWidth="1.5" strokeLinejoin="round" strokeLinecap="round" />
    </svg>
  );
}
