import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { ConfirmDelete, CopyButton, Field, fieldErrors, FormAlert, ListBesideForm, PageHeader, Success } from "../components/ui";
import { attempt, fieldError, load, unconfirmed } from "../lib/errors.server";
import { formatDateTime } from "../lib/format";
import type { FormError } from "../lib/messages";
import { requireActor } from "../lib/session.server";
import type { WebhookDeliveryDto, WebhookDto } from "../../server/routers/webhooks/webhooks.schema";

export const meta: MetaFunction = () => [{ title: "Webhooks · Links" }];

/** The events an endpoint can subscribe to, in plain words. */
const EVENTS = [
  { name: "link.created", label: "A link is created" },
  { name: "link.updated", label: "A link is changed" },
  { name: "link.deleted", label: "A link is deleted" },
  { name: "link.clicked", label: "A link is clicked" },
  { name: "link.broken", label: "A link's destination is found broken" },
  { name: "linktree.viewed", label: "A linktree page is viewed" },
] as const;
type EventName = (typeof EVENTS)[number]["name"];

/** Deliveries shown per endpoint (the API answers up to 100). */
const SHOWN = 10;

export async function loader({ context, request }: LoaderFunctionArgs) {
  await requireActor(context, request);
  return load(request, async () => {
    const { webhooks } = await context.caller.webhook.list({});
    const deliveries = await Promise.all(webhooks.map((w) => context.caller.webhook.listDeliveries({ id: w.id })));
    return { webhooks: webhooks.map((w, i) => ({ ...w, deliveries: deliveries[i].deliveries.slice(0, SHOWN) })) };
  });
}

type ActionData =
  | { intent: "add"; error?: FormError; url: string; events: string[]; created?: { url: string; secret: string } }
  | { intent: "toggle" | "test" | "delete"; id: string; error?: FormError; ok?: string };

export async function action({ context, request }: ActionFunctionArgs): Promise<ActionData> {
  await requireActor(context, request);
  const form = await request.formData();
  const intent = String(form.get("intent") ?? "");
  const id = String(form.get("id") ?? "");
  if (intent === "add") {
    const url = String(form.get("url") ?? "").trim();
    const events = form.getAll("events").map((v) => String(v));
    const r = await attempt(request, () => context.caller.webhook.create({ url, events: events as EventName[] }));
    // The secret exists in clear only in this answer: it is shown once.
    return r.ok ? { intent, url: "", events: [], created: { url: r.value.url, secret: r.value.secret } } : { intent, url, events, error: r.error };
  }
  if (intent === "toggle") {
    const active = form.get("active") === "true";
    const r = await attempt(request, () => context.caller.webhook.update({ id, active }));
    return r.ok ? { intent, id, ok: active ? "Turned on." : "Turned off. Nothing is sent to it until you turn it on again." } : { intent, id, error: r.error };
  }
  if (intent === "test") {
    const r = await attempt(request, () => context.caller.webhook.test({ id }));
    return r.ok ? { intent, id, ok: "Test event queued. Its delivery shows below in a moment." } : { intent, id, error: r.error };
  }
  if (intent === "delete") {
    const refused = unconfirmed(form);
    if (refused) return { intent, id, error: refused };
    const r = await attempt(request, () => context.caller.webhook.delete({ id }));
    return r.ok ? { intent, id, ok: "Webhook removed." } : { intent, id, error: r.error };
  }
  return { intent: "add", url: "", events: [], error: fieldError({ intent: ["unknown action"] }) };
}

export default function Webhooks() {
  const { webhooks } = useLoaderData<typeof loader>();
  const data = useActionData<typeof action>();
  const busy = useNavigation().state === "submitting";
  const addData = data?.intent === "add" ? data : null;
  const removed = data?.intent === "delete" && data.ok ? data.ok : null;
  return (
    <>
      <PageHeader title="Webhooks" subtitle="Your own server is told when links change, are clicked, or linktree pages are viewed." />
      {addData?.created ? (
        <div role="status" className="alert-success mb-4 space-y-2">
          <p className="font-medium">Webhook for {addData.created.url} added. Copy its signing secret now: it will not be shown again.</p>
          <div className="flex flex-wrap items-center gap-2">
            <code
              className="break-all rounded bg-white px-2 py-1 font-mono text-sm text-slate-900 dark:bg-slate-900 dark:text-slate-100"
              data-testid="webhook-secret"
            >
              {addData.created.secret}
            </code>
            <CopyButton value={addData.created.secret} label="Copy secret" />
          </div>
          <p className="text-xs">Check each request&apos;s webhook-signature header with it (Standard Webhooks), so you know the request came from us.</p>
        </div>
      ) : null}
      {removed ? (
        <div className="mb-4">
          <Success>{removed}</Success>
        </div>
      ) : null}
      <ListBesideForm
        items={webhooks}
        label="Webhooks"
        empty="No webhook yet. Add one with the form."
        render={(w) => <WebhookCard key={w.id} webhook={w} data={data && data.intent !== "add" && data.id === w.id ? data : null} busy={busy} />}
        aside={
          <>
            <Form key={addData?.created?.secret ?? "new"} method="post" className="card space-y-4" aria-labelledby="new-webhook">
              <h2 id="new-webhook" className="text-lg font-semibold">
                Add a webhook
              </h2>
              <FormAlert error={addData?.error} />
              <Field
                label="Endpoint URL"
                name="url"
                type="url"
                required
                placeholder="https://example.com/hooks/links"
                autoCapitalize="none"
                spellCheck={false}
                defaultValue={addData?.url}
                errors={fieldErrors(addData?.error, "url")}
                hint="An https address on the public internet. Each event is sent there as a signed POST."
              />
              <fieldset className="space-y-1" aria-describedby={fieldErrors(addData?.error, "events").length ? "events-err" : undefined}>
                <legend className="label">Events</legend>
                {EVENTS.map((e) => (
                  <label key={e.name} className="flex items-center gap-2 text-sm">
                    <input type="checkbox" name="events" value={e.name} defaultChecked={addData?.events.includes(e.name)} />
                    {e.label} <span className="font-mono text-xs text-slate-600 dark:text-slate-400">{e.name}</span>
                  </label>
                ))}
                {fieldErrors(addData?.error, "events").map((m) => (
                  <p key={m} id="events-err" className="text-sm text-red-700 dark:text-red-400">
                    {m}
                  </p>
                ))}
              </fieldset>
              <button type="submit" name="intent" value="add" className="btn-primary" disabled={busy}>
                Add webhook
              </button>
            </Form>
            <section className="card space-y-2 text-sm" aria-labelledby="webhook-help">
              <h2 id="webhook-help" className="text-base font-semibold">
                How delivery works
              </h2>
              <p>
                An answer with a 2xx status within 10 seconds counts as delivered. Otherwise we try again after 5 seconds, 5 minutes, 30 minutes, 2 hours, 5
                hours, 10 hours and 10 hours. An endpoint whose deliveries all failed for 3 days is turned off, and the workspace&apos;s owners get an e-mail.
              </p>
            </section>
          </>
        }
      />
    </>
  );
}

type CardData = Extract<ActionData, { id: string }>;
type Card = WebhookDto & { deliveries: WebhookDeliveryDto[] };

const STATUS_LABEL = { pending: "Waiting", delivered: "Delivered", failed: "Failed" } as const;
const STATUS_CLASS = {
  pending: "bg-amber-100 text-amber-900 dark:bg-amber-900 dark:text-amber-100",
  delivered: "bg-emerald-100 text-emerald-800 dark:bg-emerald-900 dark:text-emerald-100",
  failed: "bg-red-100 text-red-800 dark:bg-red-900 dark:text-red-100",
} as const;

function WebhookCard({ webhook: w, data, busy }: { webhook: Card; data: CardData | null; busy: boolean }) {
  const headingId = `webhook-${w.id}`;
  return (
    <li className="card space-y-4" aria-labelledby={headingId} data-testid="webhook">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h2 id={headingId} className="break-all font-mono text-base font-semibold">
          {w.url}
        </h2>
        <span
          className={`badge ${w.active ? STATUS_CLASS.delivered : "bg-slate-200 text-slate-800 dark:bg-slate-700 dark:text-slate-100"}`}
          data-testid="webhook-state"
        >
          {w.active ? "On" : "Off"}
        </span>
      </div>
      {w.disabled_reason ? (
        <p className="alert-info" data-testid="webhook-disabled">
          Turned off by the service: {w.disabled_reason}. Fix the endpoint, then turn it on again.
        </p>
      ) : null}
      <p className="text-sm">
        <span className="font-medium">Events:</span> <span className="font-mono">{w.events.join(", ")}</span>
      </p>
      {data?.ok ? <Success>{data.ok}</Success> : null}
      <FormAlert error={data?.intent !== "delete" ? data?.error : null} />
      <div className="flex flex-wrap gap-2">
        <Form method="post">
          <input type="hidden" name="id" value={w.id} />
          <input type="hidden" name="active" value={w.active ? "false" : "true"} />
          <button
            type="submit"
            name="intent"
            value="toggle"
            className="btn-secondary"
            disabled={busy}
            aria-label={`${w.active ? "Turn off" : "Turn on"} ${w.url}`}
          >
            {w.active ? "Turn off" : "Turn on"}
          </button>
        </Form>
        <Form method="post">
          <input type="hidden" name="id" value={w.id} />
          <button type="submit" name="intent" value="test" className="btn-secondary" disabled={busy} aria-label={`Send test to ${w.url}`}>
            Send test
          </button>
        </Form>
      </div>
      {/* Named after its webhook, so each card's deliveries are a landmark of their own; focusable, so
          a keyboard can scroll a table wider than a phone. */}
      {/* eslint-disable-next-line jsx-a11y/no-noninteractive-tabindex -- a scrolling region must take focus to be scrolled by keys */}
      <section aria-label={`Recent deliveries to ${w.url}`} className="overflow-x-auto" tabIndex={0}>
        <h3 id={`${headingId}-deliveries`} className="mb-2 text-sm font-semibold">
          Recent deliveries
        </h3>
        {w.deliveries.length === 0 ? (
          <p className="text-sm text-slate-600 dark:text-slate-400">Nothing sent yet.</p>
        ) : (
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Answer</th>
                <th scope="col">Last attempt</th>
                <th scope="col">Next try</th>
              </tr>
            </thead>
            <tbody>
              {w.deliveries.map((d) => (
                <tr key={d.id} data-testid="delivery">
                  <td className="font-mono text-xs">{d.event}</td>
                  <td>
                    <span className={`badge ${STATUS_CLASS[d.status]}`}>{STATUS_LABEL[d.status]}</span>
                  </td>
                  <td>{d.attempts}</td>
                  <td>{d.response_status ?? (d.attempts ? "no answer" : "")}</td>
                  <td className="whitespace-nowrap">{d.last_attempt_at ? formatDateTime(d.last_attempt_at) : ""}</td>
                  <td className="whitespace-nowrap">{d.next_attempt_at ? formatDateTime(d.next_attempt_at) : ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <Form method="post">
        <input type="hidden" name="id" value={w.id} />
        <FormAlert error={data?.intent === "delete" ? data.error : null} className="mb-3" />
        <ConfirmDelete label="Remove webhook" what={`the webhook for ${w.url}`}>
          <p className="text-sm text-slate-600 dark:text-slate-400">Nothing more is sent to it, and its delivery history goes too.</p>
        </ConfirmDelete>
      </Form>
    </li>
  );
}
