import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { ConfirmDelete, CopyButton, Field, fieldErrors, FormAlert, ListBesideForm, PageHeader, Success } from "../components/ui";
import { attempt, fieldError, load, unconfirmed } from "../lib/errors.server";
import { useEnv } from "../lib/env";
import { formatDateTime } from "../lib/format";
import type { FormError } from "../lib/messages";
import { requireActor } from "../lib/session.server";
import type { DomainDto } from "../../server/routers/domains/domains.schema";
import { hostNameFromInput } from "../../server/domain/host-input";

export const meta: MetaFunction = () => [{ title: "Domains · Links" }];

export async function loader({ context, request }: LoaderFunctionArgs) {
  await requireActor(context, request);
  return load(request, () => context.caller.domain.list({}));
}

type ActionData =
  | { intent: "add"; error?: FormError; name: string; added?: string }
  | { intent: "verify" | "not_found" | "delete"; id: string; error?: FormError; verified?: boolean; saved?: boolean; deleted?: string };

export async function action({ context, request }: ActionFunctionArgs): Promise<ActionData> {
  await requireActor(context, request);
  const form = await request.formData();
  const intent = String(form.get("intent") ?? "");
  const id = String(form.get("id") ?? "");
  if (intent === "add") {
    // A pasted URL or a name in capitals means its host name: that is what is sent and shown back.
    const name = hostNameFromInput(String(form.get("name") ?? ""));
    const r = await attempt(request, () => context.caller.domain.create({ name }));
    return r.ok ? { intent, name: "", added: r.value.name } : { intent, name, error: r.error };
  }
  if (intent === "verify") {
    const r = await attempt(request, () => context.caller.domain.verify({ id }));
    return r.ok ? { intent, id, verified: r.value.verified } : { intent, id, error: r.error };
  }
  if (intent === "not_found") {
    const url = String(form.get("not_found_url") ?? "").trim();
    const r = await attempt(request, () => context.caller.domain.update({ id, not_found_url: url || null }));
    return r.ok ? { intent, id, saved: true } : { intent, id, error: r.error };
  }
  if (intent === "delete") {
    const refused = unconfirmed(form);
    if (refused) return { intent, id, error: refused };
    const name = String(form.get("name") ?? "");
    const r = await attempt(request, () => context.caller.domain.delete({ id }));
    return r.ok ? { intent, id, deleted: name } : { intent, id, error: r.error };
  }
  return { intent: "add", name: "", error: fieldError({ intent: ["unknown action"] }) };
}

export default function Domains() {
  const { domains } = useLoaderData<typeof loader>();
  const data = useActionData<typeof action>();
  const busy = useNavigation().state === "submitting";
  const { redirectUrl } = useEnv();
  const redirectHost = new URL(redirectUrl).hostname;
  const addData = data?.intent === "add" ? data : null;
  return (
    <>
      <PageHeader title="Domains" subtitle="Serve your short links on your own domain, such as go.example.com." />
      {addData?.added ? (
        <div className="mb-4">
          <Success>{addData.added} added. Create its TXT record, then verify it.</Success>
        </div>
      ) : null}
      {data?.intent === "delete" && data.deleted ? (
        <div className="mb-4">
          <Success>{data.deleted} removed.</Success>
        </div>
      ) : null}
      <ListBesideForm
        items={domains}
        label="Domains"
        empty="No domain yet. Add one with the form."
        render={(d) => <DomainCard key={d.id} domain={d} data={data && data.intent !== "add" && data.id === d.id ? data : null} busy={busy} />}
        aside={
          <>
            {/* key: after a successful add, the field starts empty again */}
            <Form key={addData?.added ?? "new"} method="post" className="card space-y-4" aria-labelledby="new-domain">
              <h2 id="new-domain" className="text-lg font-semibold">
                Add a domain
              </h2>
              <FormAlert error={addData?.error} />
              <Field
                label="Domain name"
                name="name"
                key={addData?.error ? addData.name : "empty"}
                required
                placeholder="go.example.com"
                autoCapitalize="none"
                spellCheck={false}
                defaultValue={addData?.name}
                errors={fieldErrors(addData?.error, "name")}
                hint="The host name, such as go.example.com (a pasted address is reduced to it). An internationalised name in its punycode form (xn--…)."
              />
              <button type="submit" name="intent" value="add" className="btn-primary" disabled={busy}>
                Add domain
              </button>
            </Form>
            <section className="card space-y-2 text-sm" aria-labelledby="dns-help">
              <h2 id="dns-help" className="text-base font-semibold">
                Pointing the domain here
              </h2>
              <p>
                At your DNS provider, point the domain at this service:{" "}
                {/^[\d.]+$|:/.test(redirectHost) ? (
                  <>
                    an <span className="font-mono">A</span>/<span className="font-mono">AAAA</span> record to <span className="font-mono">{redirectHost}</span>
                  </>
                ) : (
                  <>
                    a <span className="font-mono">CNAME</span> of <span className="font-mono">{redirectHost}</span> (or <span className="font-mono">A</span>/
                    <span className="font-mono">AAAA</span> records with its addresses)
                  </>
                )}
                . Then add the <span className="font-mono">TXT</span> record shown on the domain and verify it: links on it work from then on.
              </p>
            </section>
          </>
        }
      />
    </>
  );
}

type CardData = Extract<ActionData, { id: string }>;

function DomainCard({ domain: d, data, busy }: { domain: DomainDto; data: CardData | null; busy: boolean }) {
  const headingId = `domain-${d.id}`;
  return (
    <li className="card space-y-4" aria-labelledby={headingId} data-testid="domain">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h2 id={headingId} className="break-all font-mono text-lg font-semibold">
          {d.name}
        </h2>
        {d.verified ? (
          <span className="badge bg-emerald-100 text-emerald-800 dark:bg-emerald-900 dark:text-emerald-100" data-testid="domain-status">
            Verified
          </span>
        ) : (
          <span className="badge bg-amber-100 text-amber-900 dark:bg-amber-900 dark:text-amber-100" data-testid="domain-status">
            Pending verification
          </span>
        )}
      </div>
      {data?.intent === "verify" && !data.error ? (
        data.verified ? (
          <Success>Verified. Links can now use {d.name}.</Success>
        ) : (
          <p role="status" className="alert-info">
            The TXT record was not found yet. DNS changes can take a while to show; try again in a few minutes.
          </p>
        )
      ) : null}
      {d.verified ? (
        <p className="text-sm text-slate-600 dark:text-slate-400">Verified {d.verified_at ? formatDateTime(d.verified_at) : ""}.</p>
      ) : (
        <div className="space-y-3">
          <p className="text-sm">Create this DNS record, then verify:</p>
          <dl className="grid gap-x-4 gap-y-2 text-sm sm:grid-cols-[6rem_1fr]">
            <dt className="font-medium">Type</dt>
            <dd className="font-mono">{d.verification.type}</dd>
            <dt className="font-medium">Name</dt>
            <dd className="flex flex-wrap items-center gap-2">
              <span className="break-all font-mono" data-testid="txt-name">
                {d.verification.name}
              </span>
              <CopyButton value={d.verification.name} label="Copy name" className="btn-ghost" />
            </dd>
            <dt className="font-medium">Value</dt>
            <dd className="flex flex-wrap items-center gap-2">
              <span className="break-all font-mono" data-testid="txt-value">
                {d.verification.value}
              </span>
              <CopyButton value={d.verification.value} label="Copy value" />
            </dd>
          </dl>
          <Form method="post">
            <input type="hidden" name="id" value={d.id} />
            <FormAlert error={data?.intent === "verify" ? data.error : null} className="mb-3" />
            <button type="submit" name="intent" value="verify" className="btn-primary" disabled={busy}>
              Verify now
            </button>
          </Form>
        </div>
      )}
      <Form method="post" className="space-y-3">
        <input type="hidden" name="id" value={d.id} />
        {data?.intent === "not_found" && data.saved ? <Success>Saved.</Success> : null}
        <FormAlert error={data?.intent === "not_found" ? data.error : null} />
        <Field
          label="Not-found page"
          name="not_found_url"
          type="url"
          placeholder="https://www.example.com/"
          defaultValue={d.not_found_url ?? ""}
          errors={fieldErrors(data?.intent === "not_found" ? data.error : null, "not_found_url")}
          hint={`Where ${d.name}/ and unknown slugs on it send visitors. Empty: a 404 page.`}
        />
        <button type="submit" name="intent" value="not_found" className="btn-secondary" disabled={busy}>
          Save not-found page
        </button>
      </Form>
      <Form method="post">
        <input type="hidden" name="id" value={d.id} />
        <input type="hidden" name="name" value={d.name} />
        <FormAlert error={data?.intent === "delete" ? data.error : null} className="mb-3" />
        <ConfirmDelete label="Remove domain" what={d.name}>
          <p className="text-sm text-slate-600 dark:text-slate-400">Only a domain without live links can be removed: delete or move its links first.</p>
        </ConfirmDelete>
      </Form>
    </li>
  );
}
