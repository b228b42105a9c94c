import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { Form, useActionData, useLoaderData, useRouteLoaderData } from "@remix-run/react";
import { CopyButton, Field, fieldErrors, FormAlert, Success } from "../components/ui";
import { workspaceLabel } from "../components/WorkspaceSwitcher";
import type { loader as layoutLoader } from "./_app";
import { attempt, fieldError, load } from "../lib/errors.server";
import { formatDateTime } from "../lib/format";
import type { FormError } from "../lib/messages";
import { requireActor } from "../lib/session.server";

export async function loader({ context, request }: LoaderFunctionArgs) {
  const actor = await requireActor(context, request);
  // Each token with the workspace it acts in.
  const { tokens, scopes } = await load(request, () => context.caller.token.listWithWorkspace());
  return { tokens, scopes, plan: actor.plan, viewer: actor.role === "viewer" };
}

/** The two presets: every scope (the token made without a list), or every scope that only reads. */
const isRead = (scope: string) => scope.endsWith(":read");

/** A token's scopes in words: the preset it matches, else the list. */
function describeScopes(scopes: string[], all: string[]): string {
  if (all.every((s) => scopes.includes(s))) return "full access";
  if (scopes.length && all.filter(isRead).every((s) => scopes.includes(s)) && scopes.every(isRead)) return "read only";
  return scopes.length ? scopes.join(", ") : "none (account only)";
}

type ActionData = { intent: string; error?: FormError; created?: { token: string; name: string }; ok?: string };

export async function action({ context, request }: ActionFunctionArgs): Promise<ActionData> {
  await requireActor(context, request);
  const form = await request.formData();
  const intent = String(form.get("intent") ?? "");
  if (intent === "revoke") {
    const r = await attempt(request, () => context.caller.token.revoke({ id: String(form.get("id") ?? "") }));
    return r.ok ? { intent, ok: "Token revoked. It stops working at once." } : { intent, error: r.error };
  }
  // Works without JavaScript: the preset is a radio button, the custom choice a set of checkboxes.
  const access = String(form.get("access") ?? "full");
  const name = String(form.get("name") ?? "");
  // A token with no scope could read nothing and would take a plan's token for nothing.
  if (access === "custom" && form.getAll("scopes").length === 0)
    return { intent: "create", error: fieldError({ scopes: ["check at least one scope, or choose full access or read only"] }) };
  const r = await attempt(request, async () => {
    if (access === "full") return context.caller.token.create({ name });
    const scopes = access === "read" ? (await context.caller.token.listWithWorkspace()).scopes.filter(isRead) : form.getAll("scopes").map((v) => String(v));
    return context.caller.token.create({ name, scopes: scopes as NonNullable<Parameters<typeof context.caller.token.create>[0]["scopes"]> });
  });
  // The value exists only in this answer: it is shown once and never stored in clear.
  return r.ok ? { intent: "create", created: { token: r.value.token, name: r.value.record.name } } : { intent: "create", error: r.error };
}

export default function Tokens() {
  const { tokens, scopes, plan, viewer } = useLoaderData<typeof loader>();
  // The workspace a new token would act in: the one the layout's switcher shows.
  const current = useRouteLoaderData<typeof layoutLoader>("routes/_app")?.workspaces.find((w) => w.current);
  const data = useActionData<typeof action>();
  const live = tokens.filter((t) => !t.revoked_at);
  const atLimit = plan === "free" && live.length >= 1;
  return (
    <div className="space-y-6">
      {data?.created ? (
        <div role="status" className="alert-success space-y-2">
          <p className="font-medium">Token “{data.created.name}” created. Copy it now: it will not be shown again.</p>
          <div className="flex flex-wrap items-center gap-2">
            <code
              className="break-all rounded bg-white px-2 py-1 font-mono text-sm text-slate-900 dark:bg-slate-900 dark:text-slate-100"
              data-testid="new-token"
            >
              {data.created.token}
            </code>
            <CopyButton value={data.created.token} label="Copy token" />
          </div>
          <p className="text-xs">
            Use it as <code>Authorization: Bearer {data.created.token.slice(0, 8)}…</code>
          </p>
        </div>
      ) : null}
      {data?.ok ? <Success>{data.ok}</Success> : null}
      <Form method="post" className="card space-y-4" aria-labelledby="h-new-token">
        <h2 id="h-new-token" className="text-lg font-semibold">
          New API token
        </h2>
        <p className="text-sm text-slate-600 dark:text-slate-400">
          Tokens are for scripts and servers. They can manage links, linktrees and analytics, but not your account.
        </p>
        {current ? (
          <p className="text-sm" data-testid="token-workspace">
            A new token acts in the workspace you are in now, <strong>{workspaceLabel(current)}</strong>, and only there. To make one for another workspace,
            switch first.
          </p>
        ) : null}
        {plan === "free" ? (
          <p className="alert-info" data-testid="plan-rule">
            The free plan allows <strong>one live token</strong>.{" "}
            {atLimit ? "You have one, so revoke it first to create a new one (rotate = revoke, then create)." : "Revoking a token frees the slot."} The one
            token counts over all your workspaces.
          </p>
        ) : null}
        {viewer ? (
          <p className="alert-info" data-testid="viewer-rule">
            You are a viewer of this workspace, so you cannot create tokens for it. Switch to a workspace where you are a member or an owner.
          </p>
        ) : null}
        <FormAlert error={data?.intent === "create" ? data.error : null} />
        <Field
          label="Name"
          name="name"
          required
          maxLength={100}
          placeholder="CI deploy"
          errors={fieldErrors(data?.intent === "create" ? data.error : null, "name")}
        />
        <fieldset className="space-y-1">
          <legend className="label">Access</legend>
          <label className="flex items-center gap-2 text-sm">
            <input type="radio" name="access" value="full" defaultChecked /> Full access: links, linktrees, analytics, domains and webhooks
          </label>
          <label className="flex items-center gap-2 text-sm">
            <input type="radio" name="access" value="read" /> Read only: reads everything, changes nothing
          </label>
          <label className="flex items-center gap-2 text-sm">
            <input type="radio" name="access" value="custom" /> Only the scopes checked below
          </label>
        </fieldset>
        <fieldset
          className="space-y-1"
          aria-describedby={fieldErrors(data?.intent === "create" ? data.error : null, "scopes").length ? "scopes-err" : undefined}
        >
          <legend className="label">Scopes (with “Only the scopes checked below”)</legend>
          <div className="grid grid-cols-2 gap-1 sm:grid-cols-3">
            {scopes.map((scope) => (
              <label key={scope} className="flex items-center gap-2 font-mono text-sm">
                <input type="checkbox" name="scopes" value={scope} /> {scope}
              </label>
            ))}
          </div>
          {fieldErrors(data?.intent === "create" ? data.error : null, "scopes").map((m) => (
            <p key={m} id="scopes-err" className="text-sm text-red-700 dark:text-red-400">
              {m}
            </p>
          ))}
        </fieldset>
        <button type="submit" name="intent" value="create" className="btn-primary" disabled={atLimit || viewer}>
          Create token
        </button>
      </Form>
      <section className="card relative overflow-x-auto" aria-labelledby="h-tokens">
        <h2 id="h-tokens" className="mb-3 text-lg font-semibold">
          Your tokens
        </h2>
        <FormAlert error={data?.intent === "revoke" ? data.error : null} />
        {tokens.length === 0 ? (
          <p className="text-sm text-slate-600 dark:text-slate-400">No tokens yet.</p>
        ) : (
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Token</th>
                <th scope="col">Workspace</th>
                <th scope="col">Scopes</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span className="sr-only">State</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {tokens.map((t) => (
                <tr key={t.id} data-testid="token-row">
                  <td className="font-medium">{t.name}</td>
                  <td className="font-mono">{t.prefix}…</td>
                  <td>{t.workspace ? workspaceLabel(t.workspace) : "deleted"}</td>
                  <td data-testid="token-scopes">{describeScopes(t.scopes, scopes)}</td>
                  <td className="whitespace-nowrap">{formatDateTime(t.created_at)}</td>
                  <td className="whitespace-nowrap">{t.last_used_at ? formatDateTime(t.last_used_at) : "never"}</td>
                  <td>
                    {t.revoked_at ? (
                      <span className="badge">revoked {formatDateTime(t.revoked_at)}</span>
                    ) : (
                      <Form method="post">
                        <input type="hidden" name="id" value={t.id} />
                        <button type="submit" name="intent" value="revoke" className="btn-secondary" aria-label={`Revoke ${t.name}`}>
                          Revoke
                        </button>
                      </Form>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </div>
  );
}
