import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { json, redirect } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useNavigation, useRevalidator } from "@remix-run/react";
import { useEffect, useState } from "react";
import { FieldErrors, fieldErrors, FormAlert, PageHeader, ScrollRegion } from "../components/ui";
import { attempt, load, uploadError } from "../lib/errors.server";
import { formatDateTime } from "../lib/format";
import { messageFor, type FormError } from "../lib/messages";
import { requireActor } from "../lib/session.server";
// Types only: the lists come from the imports.formats procedure.
import type { ImportFormat, MappingField } from "../../server/routers/imports/formats";
import type { InspectionDto } from "../../server/routers/imports/imports.schema";

export const meta: MetaFunction = () => [{ title: "Import links · Links" }];

const FIELD_LABELS: Record<MappingField, string> = {
  url: "Destination URL",
  slug: "Slug",
  domain: "Domain",
  title: "Title",
  tags: "Tags",
  og_title: "Share title",
  og_description: "Share description",
  og_image: "Share image",
  expires_at: "Expires at",
  expiration_url: "After expiry URL",
  targeting: "Targeting (JSON)",
  created_at: "Created at",
  has_password: "Had a password",
  forward_query: "Forward query (true/false)",
  variants: "A/B variants (JSON)",
  archived: "Archived (true/false)",
};

export async function loader({ context, request }: LoaderFunctionArgs) {
  await requireActor(context, request);
  const id = new URL(request.url).searchParams.get("job");
  const job = id ? await load(request, () => context.caller.imports.get({ id })) : null;
  const { imports } = await load(request, () => context.caller.imports.list({}));
  const { domains } = await load(request, () => context.caller.domain.list({}));
  const { formats, fields, max_bytes } = await load(request, () => context.caller.imports.formats({}));
  return { job, imports, domains: domains.filter((d) => d.verified).map((d) => d.name), formats, fields, limitMb: Math.round(max_bytes / 1024 / 1024) };
}

type ImportChoices = { on_conflict: string; title_to: string };
type ActionData = { inspection?: InspectionDto; error?: FormError; mapping?: Record<string, string>; options?: ImportChoices };

export async function action({ context, request }: ActionFunctionArgs): Promise<ActionData> {
  await requireActor(context, request);
  const imports = context.caller.imports;
  const form = await request.formData();
  const upload = String(form.get("upload") ?? "");
  const format = String(form.get("format") ?? "auto") as ImportFormat | "auto";
  if (form.get("step") === "uploaded") {
    // Step 1: the server stored the file (DATA_DIR/imports/uploads) before this action ran, if the
    // disk had room for it, or says why it did not.
    const refused = uploadError(form);
    if (refused) return json<ActionData>({ error: refused.error }, { status: refused.status }) as unknown as ActionData;
    const r = await attempt(request, () => imports.inspect({ upload, format }));
    return r.ok ? { inspection: r.value } : { error: r.error };
  }
  // Step 2: the mapping; the job starts and the page follows its progress.
  const mapping: Record<string, string> = {};
  for (const [k, v] of form) if (k.startsWith("map_") && typeof v === "string" && v) mapping[k.slice("map_".length)] = v;
  const on_conflict = String(form.get("on_conflict") || "reject");
  const title_to = String(form.get("title_to") || "title") as "title" | "og_title" | "ignore";
  const r = await attempt(request, () => imports.start({ upload, format, mapping, on_conflict, title_to }));
  if (r.ok) throw redirect(`/links/import?job=${r.value.id}`);
  const again = await attempt(request, () => imports.inspect({ upload, format }));
  return {
    error: r.error,
    inspection: again.ok ? { ...again.value, format: format === "auto" ? again.value.detected : format } : undefined,
    mapping,
    options: { on_conflict, title_to },
  };
}

export default function ImportLinks() {
  const { job, imports, domains } = useLoaderData<typeof loader>();
  const data = useActionData<typeof action>();
  return (
    <>
      <PageHeader title="Import links" subtitle="From a CSV file: your own, or an export of Bitly, Shlink, Kutt or YOURLS.">
        <Link to="/links" className="btn-secondary">
          Back to links
        </Link>
      </PageHeader>
      {job ? (
        <JobProgress job={job} />
      ) : data?.inspection ? (
        <MappingStep inspection={data.inspection} error={data.error} chosen={data.mapping} options={data.options} domains={domains} />
      ) : (
        <UploadStep error={data?.error} />
      )}
      {!job && imports.length ? (
        <section className="mt-8" aria-labelledby="recent">
          <h2 id="recent" className="mb-2 text-lg font-semibold">
            Recent imports
          </h2>
          <ul className="space-y-1 text-sm">
            {imports.map((i) => (
              <li key={i.id}>
                <Link to={`/links/import?job=${i.id}`} className="underline">
                  {formatDateTime(i.created_at)}
                </Link>{" "}
                · {i.status} · {i.created.toLocaleString("en-US")} created, {i.skipped.toLocaleString("en-US")} skipped, {i.rejected.toLocaleString("en-US")}{" "}
                rejected of {(i.rows ?? 0).toLocaleString("en-US")}
              </li>
            ))}
          </ul>
        </section>
      ) : null}
    </>
  );
}

function FormatSelect({ value, onChange, detected }: { value: string; onChange?: (v: string) => void; detected?: ImportFormat }) {
  const { formats } = useLoaderData<typeof loader>();
  return (
    <div>
      <label htmlFor="format" className="label">
        Format
      </label>
      <select id="format" name="format" className="input" value={value} onChange={(e) => onChange?.(e.target.value)}>
        {detected ? null : <option value="auto">Recognise it from the header row</option>}
        {formats.map(({ id: f, label }) => (
          <option key={f} value={f}>
            {label}
            {f === detected ? " (detected)" : ""}
          </option>
        ))}
      </select>
    </div>
  );
}

function UploadStep({ error }: { error?: FormError }) {
  const busy = useNavigation().state === "submitting";
  const [format, setFormat] = useState("auto");
  // Said before the upload when the browser can tell; the server refuses a larger body anyway (413).
  const LIMIT_MB = useLoaderData<typeof loader>().limitMb;
  const [tooLarge, setTooLarge] = useState<FormError | null>(null);
  const shown = tooLarge ?? error;
  return (
    <Form
      method="post"
      encType="multipart/form-data"
      className="card max-w-2xl space-y-4"
      aria-labelledby="upload"
      onSubmit={(e) => {
        const file = (e.currentTarget.elements.namedItem("file") as HTMLInputElement | null)?.files?.[0];
        if (file && file.size > LIMIT_MB * 1024 * 1024) {
          e.preventDefault();
          setTooLarge({ error: "PAYLOAD_TOO_LARGE", message: "That file is too large.", fields: { file: [`is larger than ${LIMIT_MB} MB`] } });
        } else setTooLarge(null);
      }}
    >
      <h2 id="upload" className="text-lg font-semibold">
        1. Upload
      </h2>
      <FormAlert error={shown} />
      <div>
        <label htmlFor="file" className="label">
          CSV file
        </label>
        <input
          id="file"
          name="file"
          type="file"
          accept=".csv,text/csv"
          required
          className="input"
          aria-describedby="file-hint file-err"
          aria-invalid={fieldErrors(shown, "file", "upload").length > 0 || undefined}
        />
        <p id="file-hint" className="hint">
          UTF-8 text, comma, semicolon or tab separated, a header row first, at most {LIMIT_MB} MB. Columns: <code>url</code> (required), <code>slug</code>,{" "}
          <code>domain</code>, <code>title</code>, <code>tags</code> (separated by | or ,), <code>og_title</code>, <code>og_description</code>,{" "}
          <code>og_image</code>, <code>expires_at</code>, <code>expiration_url</code>, <code>targeting</code> (JSON) and <code>created_at</code> (ms or ISO
          8601). An export of this dashboard imports as it is (visit passwords cannot be exported).
        </p>
        <FieldErrors id="file-err" errors={fieldErrors(shown, "file", "upload")} />
      </div>
      <FormatSelect value={format} onChange={setFormat} />
      <button type="submit" className="btn-primary" disabled={busy}>
        {busy ? "Reading the file…" : "Upload and preview"}
      </button>
    </Form>
  );
}

function MappingStep({
  inspection,
  error,
  chosen,
  options,
  domains,
}: {
  inspection: InspectionDto;
  error?: FormError;
  chosen?: Record<string, string>;
  options?: ImportChoices;
  domains: string[];
}) {
  const busy = useNavigation().state === "submitting";
  const { formats, fields } = useLoaderData<typeof loader>();
  const [format, setFormat] = useState<string>(inspection.format);
  const [mapping, setMapping] = useState<Record<string, string>>(chosen ?? inspection.mappings[inspection.format] ?? {});
  const pick = (f: string) => {
    setFormat(f);
    setMapping(inspection.mappings[f] ?? {});
  };
  const mapped = new Set(Object.values(mapping));
  return (
    <Form method="post" className="card space-y-5" aria-labelledby="mapping">
      <h2 id="mapping" className="text-lg font-semibold">
        2. Columns
      </h2>
      <p className="text-sm">
        {inspection.rows.toLocaleString("en-US")} rows. Detected format:{" "}
        <strong data-testid="detected-format">{formats.find((f) => f.id === inspection.detected)?.label}</strong>.
      </p>
      <FormAlert error={error} />
      <input type="hidden" name="upload" value={inspection.upload} />
      <div className="max-w-md">
        <FormatSelect value={format} onChange={pick} detected={inspection.detected} />
      </div>
      <fieldset>
        <legend className="label">Which column holds what</legend>
        <div className="grid gap-3 sm:grid-cols-2 lg:grid-cols-4">
          {fields.map((f) => (
            <div key={f}>
              <label htmlFor={`map_${f}`} className="text-sm font-medium">
                {FIELD_LABELS[f]}
                {f === "url" ? " (required)" : ""}
              </label>
              <select
                id={`map_${f}`}
                name={`map_${f}`}
                className="input"
                value={mapping[f] ?? ""}
                onChange={(e) => setMapping({ ...mapping, [f]: e.target.value })}
              >
                <option value="">— not imported —</option>
                {inspection.header.map((h, i) =>
                  h ? (
                    <option key={i} value={h}>
                      {h}
                    </option>
                  ) : null,
                )}
              </select>
              {f === "slug" && mapping.slug_fallback ? <p className="hint">else {mapping.slug_fallback}</p> : null}
            </div>
          ))}
        </div>
        {mapping.slug_fallback ? <input type="hidden" name="map_slug_fallback" value={mapping.slug_fallback} /> : null}
        <FieldErrors errors={fieldErrors(error, "mapping", "file", "upload")} />
      </fieldset>
      <div className="grid max-w-3xl gap-4 sm:grid-cols-2">
        <div>
          <label htmlFor="on_conflict" className="label">
            When a row&apos;s slug is taken
          </label>
          <select
            id="on_conflict"
            name="on_conflict"
            className="input"
            defaultValue={options?.on_conflict ?? "reject"}
            aria-describedby="on_conflict-hint on_conflict-err"
          >
            <option value="reject">Reject the row</option>
            <option value="generate">Give it a new generated slug</option>
            {domains.map((d) => (
              <option key={d} value={`domain:${d}`}>
                Put it on {d} with the same slug
              </option>
            ))}
          </select>
          <p id="on_conflict-hint" className="hint">
            Slugs on the default domain are shared with every workspace. The report lists each new short URL.
          </p>
          <FieldErrors id="on_conflict-err" errors={fieldErrors(error, "on_conflict")} />
        </div>
        <div>
          <label htmlFor="title_to" className="label">
            The source&apos;s title goes to
          </label>
          <select id="title_to" name="title_to" className="input" defaultValue={options?.title_to ?? "title"} aria-describedby="title_to-hint">
            <option value="title">Label (title)</option>
            <option value="og_title">Share-card title (og_title)</option>
            <option value="ignore">Nowhere (ignore it)</option>
          </select>
          <p id="title_to-hint" className="hint">
            Bitly, Shlink and YOURLS titles and Kutt descriptions. The label is what people see in your list.
          </p>
        </div>
      </div>
      <ScrollRegion label="Preview of the file">
        <table className="w-full text-left text-sm" aria-label="The first rows of the file">
          <caption className="mb-1 text-left text-xs text-slate-600 dark:text-slate-400">The first rows of the file; imported columns are highlighted.</caption>
          <thead>
            <tr>
              {inspection.header.map((h, i) => (
                <th key={i} scope="col" className={`border-b px-2 py-1 font-medium ${mapped.has(h) ? "bg-indigo-50 dark:bg-indigo-950" : ""}`}>
                  {h || <em>(no name)</em>}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {inspection.preview.map((row, r) => (
              <tr key={r}>
                {inspection.header.map((h, i) => (
                  <td key={i} className={`max-w-xs truncate border-b px-2 py-1 ${mapped.has(h) ? "bg-indigo-50 dark:bg-indigo-950" : ""}`} title={row[i]}>
                    {row[i] ?? ""}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
      <div className="flex flex-wrap gap-2">
        <button type="submit" className="btn-primary" disabled={busy}>
          Import {inspection.rows.toLocaleString("en-US")} rows
        </button>
        <Link to="/links/import" className="btn-secondary">
          Choose another file
        </Link>
      </div>
    </Form>
  );
}

type Job = NonNullable<ReturnType<typeof useLoaderData<typeof loader>>["job"]>;

/** What the import did, in a few words, and how the bar looks: an import that created nothing is no success. */
function outcome(job: Job): { title: string; tone: "busy" | "ok" | "partial" | "bad" } {
  if (job.status === "queued") return { title: "Waiting for this workspace's earlier import to finish…", tone: "busy" };
  if (job.status === "running") return { title: "Importing…", tone: "busy" };
  if (job.status === "failed") return { title: "Import failed", tone: "bad" };
  const moved = job.moved.length ? `, ${job.moved.length.toLocaleString("en-US")} under a new short URL` : "";
  if (job.rejected && !job.created && !job.skipped) return { title: "Nothing imported: every row was rejected", tone: "bad" };
  if (job.rejected) return { title: `Imported with problems: ${job.rejected.toLocaleString("en-US")} rows rejected${moved}`, tone: "partial" };
  if (!job.created) return { title: "Nothing new: every link was already here", tone: "ok" };
  return { title: `Import finished${moved}`, tone: "ok" };
}

const BAR_TONE = { busy: "accent-indigo-600", ok: "accent-green-600", partial: "accent-amber-500", bad: "accent-red-600" } as const;

/** A rejected row's reason in words: what each field says, else the code's message. */
const reasonOf = (r: { error: string; fields?: Record<string, string[]> }) =>
  Object.entries(r.fields ?? {})
    .map(([k, v]) => `${k}: ${v.join(", ")}`)
    .join("; ") || messageFor(r.error);

function JobProgress({ job }: { job: Job }) {
  const active = job.status === "queued" || job.status === "running";
  const revalidator = useRevalidator();
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => revalidator.state === "idle" && revalidator.revalidate(), 500);
    return () => clearInterval(timer);
  }, [active, revalidator]);
  const total = job.rows ?? 0;
  const f = (n: number) => n.toLocaleString("en-US");
  const pct = total ? Math.floor((job.rows_done / total) * 100) : 0;
  const said = outcome(job);
  const cell = "border-b px-2 py-1";
  return (
    <section className="card space-y-4" aria-labelledby="progress">
      <h2 id="progress" className="text-lg font-semibold" data-testid="import-outcome" data-tone={said.tone}>
        {said.title}
      </h2>
      <div>
        <progress
          className={`h-3 w-full ${BAR_TONE[said.tone]}`}
          max={total || 1}
          value={job.rows_done}
          aria-label={`Rows read: ${said.title}`}
          data-testid="import-progress"
          data-tone={said.tone}
        />
        <p className="mt-1 text-sm" aria-live="polite" data-testid="import-counts">
          {f(job.rows_done)} of {f(total)} rows ({pct}%) · {f(job.created)} created · {f(job.skipped)} skipped · {f(job.rejected)} rejected
        </p>
      </div>
      {said.tone === "bad" && job.status === "done" ? (
        <p role="alert" className="alert-error">
          No link was created. The table below says why each row was rejected.
        </p>
      ) : null}
      {active ? (
        <p className="text-sm">
          It goes on if you leave this page. <Link to={`/links/import?job=${job.id}`}>Refresh</Link>
        </p>
      ) : null}
      {job.status === "failed" ? (
        <p role="alert" className="alert-error">
          {job.error}
        </p>
      ) : null}
      {job.rejected || job.moved.length ? (
        <p className="text-sm">
          Row numbers count data rows, the header row excluded.{" "}
          <a href={`/links/import/${job.id}/rejects.csv`} download className="underline">
            Download the report (CSV)
          </a>
        </p>
      ) : null}
      {job.moved.length ? (
        <div>
          <h3 className="font-semibold">Rows with a new short URL (their slug was taken)</h3>
          <ScrollRegion className="mt-2" label="Rows with a new short URL, scrollable">
            <table className="w-full text-left text-sm" aria-label="Rows with a new short URL">
              <thead>
                <tr>
                  {["Row", "Slug in the file", "URL", "New short URL"].map((h) => (
                    <th key={h} scope="col" className={cell}>
                      {h}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {job.moved.slice(0, 50).map((m) => (
                  <tr key={m.row}>
                    <td className={cell}>{m.row}</td>
                    <td className={`${cell} font-mono text-xs`}>{m.slug}</td>
                    <td className={`${cell} max-w-xs truncate`} title={m.url}>
                      {m.url}
                    </td>
                    <td className={`${cell} font-mono text-xs`}>{m.short_url}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollRegion>
          {job.moved.length > 50 ? <p className="hint">The first 50 are shown; the report has {f(job.moved.length)}.</p> : null}
        </div>
      ) : null}
      {job.rejected ? (
        <div>
          <h3 className="font-semibold">Rejected rows</h3>
          <ScrollRegion className="mt-2" label="Rejected rows, scrollable">
            <table className="w-full text-left text-sm" aria-label="Rejected rows">
              <thead>
                <tr>
                  {["Row", "Slug", "URL", "Error", "Reason"].map((h) => (
                    <th key={h} scope="col" className={cell}>
                      {h}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {job.rejects.slice(0, 50).map((r) => (
                  <tr key={r.row}>
                    <td className={cell}>{r.row}</td>
                    <td className={`${cell} font-mono text-xs`}>{r.slug ?? ""}</td>
                    <td className={`${cell} max-w-xs truncate`} title={r.url}>
                      {r.url ?? ""}
                    </td>
                    <td className={`${cell} font-mono text-xs`}>{r.error}</td>
                    <td className={cell}>{reasonOf(r)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollRegion>
          {job.rejected > 50 ? <p className="hint">The first 50 are shown; the report has {f(Math.min(job.rejected, job.rejects.length))}.</p> : null}
        </div>
      ) : null}
      {!active ? (
        <div className="flex flex-wrap gap-2">
          <Link to="/links" className="btn-primary">
            See your links
          </Link>
          <Link to="/links/import" className="btn-secondary">
            Import another file
          </Link>
        </div>
      ) : null}
    </section>
  );
}
