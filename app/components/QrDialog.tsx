import { useId, useState } from "react";
import { contrastRatio, QR_MIN_CONTRAST } from "../../server/domain/contrast";

const LEVELS = [
  ["L", "Low (7%)"],
  ["M", "Medium (15%)"],
  ["Q", "Quartile (25%)"],
  ["H", "High (30%)"],
] as const;

/**
 * A link's QR code: a preview and a download with colours, size, margin and error correction. The
 * form works without JavaScript (it asks the QR route for the file); with it the preview follows
 * the choices.
 */
export function QrDialog({ linkId, shortUrl }: { linkId: string; shortUrl: string }) {
  const id = useId();
  const [format, setFormat] = useState<"png" | "svg">("png");
  const [size, setSize] = useState("512");
  const [fg, setFg] = useState("#000000");
  const [bg, setBg] = useState("#ffffff");
  const [margin, setMargin] = useState("2");
  const [ecl, setEcl] = useState("M");
  // The server refuses a pair under the minimum; this says so before asking.
  const ratio = contrastRatio(fg, bg);
  const readable = ratio >= QR_MIN_CONTRAST;
  const preview = `/links/${linkId}/qr?${new URLSearchParams({ format: "svg", fg, bg, margin, ecl })}`;
  const field = (name: string) => `${id}-${name}`;
  return (
    <div className="space-y-3" data-testid="qr-dialog">
      {readable ? (
        <img src={preview} alt={`QR code for ${shortUrl}`} width={200} height={200} className="mx-auto h-[200px] w-[200px] rounded" data-testid="qr-preview" />
      ) : (
        <p role="alert" className="text-sm text-red-800 dark:text-red-300" id={field("contrast")}>
          These colours are too close to scan (contrast {ratio.toFixed(1)}:1, at least {QR_MIN_CONTRAST}:1 needed).
        </p>
      )}
      <p className="text-xs text-slate-700 dark:text-slate-300">Scans are counted as QR visits in analytics.</p>
      <form method="get" action={`/links/${linkId}/qr`} className="grid grid-cols-2 gap-2 text-sm">
        <input type="hidden" name="download" value="1" />
        <div>
          <label htmlFor={field("fg")} className="label">
            Colour
          </label>
          <input
            id={field("fg")}
            name="fg"
            type="color"
            className="h-9 w-full"
            value={fg}
            onChange={(e) => setFg(e.target.value)}
            aria-describedby={readable ? undefined : field("contrast")}
          />
        </div>
        <div>
          <label htmlFor={field("bg")} className="label">
            Background
          </label>
          <input id={field("bg")} name="bg" type="color" className="h-9 w-full" value={bg} onChange={(e) => setBg(e.target.value)} />
        </div>
        <div>
          <label htmlFor={field("format")} className="label">
            File
          </label>
          <select id={field("format")} name="format" className="input" value={format} onChange={(e) => setFormat(e.target.value as "png" | "svg")}>
            <option value="png">PNG</option>
            <option value="svg">SVG</option>
          </select>
        </div>
        <div>
          <label htmlFor={field("size")} className="label">
            Size (px)
          </label>
          <input
            id={field("size")}
            name="size"
            type="number"
            min={64}
            max={2048}
            step={1}
            className="input"
            value={size}
            onChange={(e) => setSize(e.target.value)}
            disabled={format === "svg"}
          />
        </div>
        <div>
          <label htmlFor={field("margin")} className="label">
            Margin
          </label>
          <input
            id={field("margin")}
            name="margin"
            type="number"
            min={0}
            max={16}
            step={1}
            className="input"
            value={margin}
            onChange={(e) => setMargin(e.target.value)}
          />
        </div>
        <div>
          <label htmlFor={field("ecl")} className="label">
            Error correction
          </label>
          <select id={field("ecl")} name="ecl" className="input" value={ecl} onChange={(e) => setEcl(e.target.value)}>
            {LEVELS.map(([v, text]) => (
              <option key={v} value={v}>
                {text}
              </option>
            ))}
          </select>
        </div>
        <button type="submit" className="btn-secondary col-span-2" disabled={!readable} data-testid="qr-download">
          Download {format.toUpperCase()}
        </button>
      </form>
    </div>
  );
}
