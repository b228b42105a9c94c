import type { ActionFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, useActionData, useNavigation } from "@remix-run/react";
import { Field, fieldErrors, FormAlert, Success } from "../components/ui";
import { formError } from "../lib/errors.server";
import type { FormError } from "../lib/messages";

export const meta: MetaFunction = () => [{ title: "Report abuse · Links" }];

const REASONS = [
  ["phishing", "Phishing"],
  ["malware", "Malware"],
  ["spam", "Spam"],
  ["fraude", "Fraud"],
  ["outro", "Other"],
] as const;

type Values = { url: string; reason: string; detail: string; email: string };
type ActionData = { ok: true } | { ok: false; error: FormError; values: Values };

export async function action({ context, request }: ActionFunctionArgs): Promise<ActionData> {
  const form = await request.formData();
  const values: Values = {
    url: String(form.get("url") ?? ""),
    reason: String(form.get("reason") ?? ""),
    detail: String(form.get("detail") ?? ""),
    email: String(form.get("email") ?? ""),
  };
  try {
    await context.caller.report.create({
      url: values.url.trim(),
      reason: values.reason as (typeof REASONS)[number][0],
      ...(values.detail.trim() ? { detail: values.detail.trim() } : {}),
      ...(values.email.trim() ? { email: values.email.trim() } : {}),
    });
    return { ok: true };
  } catch (e) {
    return { ok: false, error: formError(e), values };
  }
}

export default function Report() {
  const data = useActionData<typeof action>();
  const busy = useNavigation().state === "submitting";
  const err = data && !data.ok ? data.error : null;
  const v = data && !data.ok ? data.values : null;
  return (
    <div className="mx-auto max-w-xl">
      <h1 className="text-2xl font-semibold">Report a short link</h1>
      <p className="mt-1 text-sm text-slate-600 dark:text-slate-400">
        Tell us about a short link used for phishing, malware, spam or fraud. A person reviews every report; a report alone never changes what a link does.
      </p>
      {data?.ok ? (
        <div className="mt-6 space-y-4">
          <Success>
            <p className="font-medium">Thank you — your report was received.</p>
            <p>We review reports by their content. You do not need to do anything else.</p>
          </Success>
          <a href="/report" className="btn-secondary">
            Report another link
          </a>
        </div>
      ) : (
        <Form method="post" className="card mt-6 space-y-4" noValidate={false}>
          <FormAlert error={err} />
          <Field
            label="Short link"
            name="url"
            required
            maxLength={2000}
            placeholder="https://go.example/abcd"
            defaultValue={v?.url}
            errors={fieldErrors(err, "url")}
            hint="The short link as you saw it, or just its slug."
          />
          <Field label="Reason" name="reason" errors={fieldErrors(err, "reason")}>
            {({ id, describedBy, invalid }) => (
              <select
                id={id}
                name="reason"
                required
                className="input"
                defaultValue={v?.reason ?? ""}
                aria-invalid={invalid || undefined}
                aria-describedby={describedBy}
              >
                <option value="" disabled>
                  Choose a reason
                </option>
                {REASONS.map(([value, text]) => (
                  <option key={value} value={value}>
                    {text}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Details (optional)" name="detail" errors={fieldErrors(err, "detail")} hint="At most 1000 characters.">
            {({ id, describedBy, invalid }) => (
              <textarea
                id={id}
                name="detail"
                rows={4}
                maxLength={1000}
                className="input"
                defaultValue={v?.detail}
                aria-invalid={invalid || undefined}
                aria-describedby={describedBy}
              />
            )}
          </Field>
          <Field
            label="Your e-mail (optional)"
            name="email"
            type="email"
            maxLength={200}
            autoComplete="email"
            defaultValue={v?.email}
            errors={fieldErrors(err, "email")}
            hint="Only used if we need to ask you something. It does not give the report more weight."
          />
          <button type="submit" className="btn-primary" disabled={busy}>
            Send report
          </button>
        </Form>
      )}
    </div>
  );
}
