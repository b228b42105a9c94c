import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, useActionData, useLoaderData, useSubmit } from "@remix-run/react";
import { Empty, FormAlert, PageHeader, Success } from "../components/ui";
import { attempt, fieldError, load, unconfirmed } from "../lib/errors.server";
import { useEnv } from "../lib/env";
import { formatDateTime } from "../lib/format";
import type { FormError } from "../lib/messages";
import { requireAdmin } from "../lib/session.server";

export const meta: MetaFunction = () => [{ title: "Abuse reports · Links" }];

const STATUSES = [
  ["open", "Open"],
  ["dismissed", "Dismissed"],
  ["link_deleted", "Link deleted"],
  ["", "All"],
] as const;
type Status = "open" | "dismissed" | "link_deleted";

export async function loader({ context, request }: LoaderFunctionArgs) {
  await requireAdmin(context, request);
  const raw = new URL(request.url).searchParams.get("status") ?? "open";
  const status = (["open", "dismissed", "link_deleted"].includes(raw) ? raw : undefined) as Status | undefined;
  const { reports } = await load(request, () => context.caller.report.list({ status }));
  return { reports, status: status ?? "" };
}

export async function action({ context, request }: ActionFunctionArgs): Promise<{ error?: FormError; ok?: string }> {
  await requireAdmin(context, request);
  const form = await request.formData();
  const id = String(form.get("id") ?? "");
  const intent = form.get("intent");
  if (intent === "dismiss") {
    const r = await attempt(request, () => context.caller.report.dismiss({ id }));
    return r.ok ? { ok: "Report dismissed." } : { error: r.error };
  }
  if (intent === "deleteLink") {
    const refused = unconfirmed(form);
    if (refused) return { error: refused };
    const r = await attempt(request, () => context.caller.report.deleteLink({ id }));
    return r.ok ? { ok: "Link deleted and report closed." } : { error: r.error };
  }
  return { error: fieldError({ intent: ["unknown action"] }) };
}

const REASONS: Record<string, string> = { phishing: "Phishing", malware: "Malware", spam: "Spam", fraude: "Fraud", outro: "Other" };

export default function Reports() {
  const { reports, status } = useLoaderData<typeof loader>();
  const data = useActionData<typeof action>();
  const submit = useSubmit();
  const { redirectUrl } = useEnv();
  return (
    <>
      <PageHeader title="Abuse reports" subtitle="Judge each report by its content. Dismiss it, or delete the reported link." />
      <Form method="get" className="mb-4 flex items-end gap-2" onChange={(e) => submit(e.currentTarget, { replace: true })}>
        <div>
          <label htmlFor="status" className="label">
            Status
          </label>
          <select id="status" name="status" className="input" defaultValue={status}>
            {STATUSES.map(([v, label]) => (
              <option key={v} value={v}>
                {label}
              </option>
            ))}
          </select>
        </div>
        <noscript>
          <button type="submit" className="btn-secondary">
            Filter
          </button>
        </noscript>
      </Form>
      {data?.ok ? (
        <div className="mb-4">
          <Success>{data.ok}</Success>
        </div>
      ) : null}
      <FormAlert error={data?.error} className="mb-4" />
      {reports.length === 0 ? (
        <Empty>No reports here.</Empty>
      ) : (
        <ul className="space-y-3">
          {reports.map((r) => (
            <li key={r.id} className="card !p-4" data-testid="report-row">
              <div className="flex flex-wrap items-start justify-between gap-3">
                <div className="min-w-0 flex-1 space-y-1">
                  <p className="flex flex-wrap items-center gap-2">
                    <span className="badge">{REASONS[r.reason] ?? r.reason}</span>
                    <span className="badge">{r.status.replace("_", " ")}</span>
                    <span className="font-mono font-semibold">{r.slug}</span>
                    <span className="text-xs text-slate-500">{formatDateTime(r.created_at)}</span>
                  </p>
                  <p className="break-all text-sm">Reported as: {r.url}</p>
                  {r.link ? (
                    <p className="break-all text-sm">
                      Goes to:{" "}
                      <a href={r.link.url} rel="noopener noreferrer nofollow" target="_blank">
                        {r.link.url}
                      </a>{" "}
                      {r.link.deleted_at ? <span className="badge">deleted</span> : null}
                    </p>
                  ) : null}
                  {r.detail ? <p className="whitespace-pre-wrap text-sm text-slate-700 dark:text-slate-300">“{r.detail}”</p> : null}
                  <p className="text-xs text-slate-500">
                    {r.email ? `From ${r.email}` : "Anonymous"}
                    {r.reviewed_at ? ` · reviewed ${formatDateTime(r.reviewed_at)}` : ""}
                  </p>
                </div>
                <div className="flex flex-col gap-2 sm:items-end">
                  <a href={`${redirectUrl}/${r.slug}`} rel="noopener noreferrer nofollow" target="_blank" className="btn-secondary">
                    Open link ↗
                  </a>
                  {r.status === "open" ? (
                    <>
                      <Form method="post">
                        <input type="hidden" name="id" value={r.id} />
                        <button type="submit" name="intent" value="dismiss" className="btn-secondary">
                          Dismiss
                        </button>
                      </Form>
                      {r.link && !r.link.deleted_at ? (
                        <Form method="post" className="flex items-center gap-2">
                          <input type="hidden" name="id" value={r.id} />
                          <input id={`c-${r.id}`} type="checkbox" name="confirm" value="yes" required className="h-4 w-4" />
                          <label htmlFor={`c-${r.id}`} className="text-sm">
                            Confirm
                          </label>
                          <button type="submit" name="intent" value="deleteLink" className="btn-danger">
                            Delete link
                          </button>
                        </Form>
                      ) : null}
                    </>
                  ) : null}
                </div>
              </div>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
