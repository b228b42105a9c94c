import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { FormAlert, Success } from "../components/ui";
import { attempt, load } from "../lib/errors.server";
import { formatDateTime } from "../lib/format";
import { useCountryName } from "../lib/hydrated";
import type { FormError } from "../lib/messages";
import { requireActor } from "../lib/session.server";

export async function loader({ context, request }: LoaderFunctionArgs) {
  await requireActor(context, request);
  return load(request, () => context.caller.session.list());
}

export async function action({ context, request }: ActionFunctionArgs): Promise<{ error?: FormError; ok?: string }> {
  await requireActor(context, request);
  const form = await request.formData();
  const id = String(form.get("id") ?? "");
  const current = form.get("current") === "true";
  const r = await attempt(request, () => context.caller.session.revoke({ id }));
  if (!r.ok) return { error: r.error };
  if (current) throw redirect("/login");
  return { ok: "Session ended. That browser is signed out." };
}

const place = (s: { city: string | null; region_name: string | null; country: string | null }, countryName: (c: string) => string) =>
  [s.city, s.region_name, s.country ? countryName(s.country) : null].filter(Boolean).join(", ") || "Unknown place";

export default function Sessions() {
  const { sessions } = useLoaderData<typeof loader>();
  const data = useActionData<typeof action>();
  const countryName = useCountryName();
  return (
    <section className="card space-y-4" aria-labelledby="h-sessions">
      <h2 id="h-sessions" className="text-lg font-semibold">
        Signed-in browsers
      </h2>
      {data?.ok ? <Success>{data.ok}</Success> : null}
      <FormAlert error={data?.error} />
      <ul className="divide-y divide-slate-200 dark:divide-slate-800">
        {sessions.map((s) => (
          <li key={s.id} className="flex flex-wrap items-center justify-between gap-3 py-3" data-testid="session-row">
            <div className="min-w-0">
              <p className="font-medium">
                {[s.browser, s.platform].filter(Boolean).join(" on ") || "Unknown browser"}{" "}
                <span className="text-sm font-normal text-slate-500">· {s.device ?? "unknown device"}</span>{" "}
                {s.current ? <span className="badge">this browser</span> : null}
              </p>
              <p className="text-sm text-slate-600 dark:text-slate-400">
                {place(s, countryName)} · signed in {formatDateTime(s.created_at)} · expires {formatDateTime(s.expires_at)}
              </p>
            </div>
            <Form method="post">
              <input type="hidden" name="id" value={s.id} />
              <input type="hidden" name="current" value={String(s.current)} />
              <button type="submit" className="btn-secondary" aria-label={s.current ? "Sign out this browser" : `Revoke session ${s.id}`}>
                {s.current ? "Sign out" : "Revoke"}
              </button>
            </Form>
          </li>
        ))}
      </ul>
    </section>
  );
}
