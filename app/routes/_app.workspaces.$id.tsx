import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useNavigation, useSearchParams } from "@remix-run/react";
import { ConfirmDelete, Field, fieldErrors, FormAlert, PageHeader, Success } from "../components/ui";
import { workspaceLabel } from "../components/WorkspaceSwitcher";
import { attempt, load, unconfirmed } from "../lib/errors.server";
import { formatDate, formatDateTime } from "../lib/format";
import type { FormError } from "../lib/messages";
import { requireActor } from "../lib/session.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data ? workspaceLabel(data.workspace) : "Workspace"} · Links` }];

export async function loader({ context, request, params }: LoaderFunctionArgs) {
  const actor = await requireActor(context, request);
  const id = params.id ?? "";
  const { workspaces } = await load(request, () => context.caller.workspace.list());
  const workspace = workspaces.find((w) => w.id === id);
  // Not a member: the same 404 as the API's.
  if (!workspace) throw new Response("Not found", { status: 404 });
  const { members, invites } = await load(request, () => context.caller.workspace.members({ id }));
  return { workspace, members, invites, me: actor.userId };
}

type Intent = "rename" | "invite" | "resend" | "revoke" | "role" | "remove" | "leave" | "delete";
type ActionData = { intent: Intent; ok?: string; error?: FormError; values?: Record<string, string>; target?: string };

export async function action({ context, request, params }: ActionFunctionArgs): Promise<ActionData> {
  const actor = await requireActor(context, request);
  const id = params.id ?? "";
  const form = await request.formData();
  const s = (k: string) => String(form.get(k) ?? "");
  const intent = s("intent") as Intent;
  const ws = context.caller.workspace;
  switch (intent) {
    case "rename": {
      const r = await attempt(request, () => ws.update({ id, name: s("name") }));
      return r.ok ? { intent, ok: "Name saved." } : { intent, error: r.error, values: { name: s("name") } };
    }
    case "invite":
    case "resend": {
      const role = s("role") as "owner" | "member" | "viewer";
      const r = await attempt(request, () => ws.invite({ id, email: s("email"), role }));
      if (!r.ok) return { intent, error: r.error, values: { email: s("email"), role }, target: s("email") };
      return {
        intent,
        ok: intent === "resend" ? `A new invitation went to ${r.value.email}; the earlier link no longer works.` : `Invitation sent to ${r.value.email}.`,
      };
    }
    case "revoke": {
      const r = await attempt(request, () => ws.revokeInvite({ id, inviteId: s("inviteId") }));
      return r.ok ? { intent, ok: "Invitation revoked: its link no longer works." } : { intent, error: r.error };
    }
    case "role": {
      const r = await attempt(request, () => ws.updateMember({ id, userId: s("userId"), role: s("role") as "owner" | "member" | "viewer" }));
      return r.ok ? { intent, ok: `${r.value.email} is now ${withArticle(r.value.role)}.` } : { intent, error: r.error, target: s("userId") };
    }
    case "remove": {
      // Removing someone ends their access at once: the form asks for a tick first, so one stray click does nothing.
      const refused = unconfirmed(form);
      if (refused) return { intent, error: refused, target: s("userId") };
      const r = await attempt(request, () => ws.removeMember({ id, userId: s("userId") }));
      return r.ok ? { intent, ok: "Removed. Their access ended at once." } : { intent, error: r.error, target: s("userId") };
    }
    case "leave": {
      const r = await attempt(request, () => ws.removeMember({ id, userId: actor.userId }));
      if (!r.ok) return { intent, error: r.error };
      throw redirect("/workspaces?done=left");
    }
    case "delete": {
      const refused = unconfirmed(form);
      if (refused) return { intent, error: refused };
      const r = await attempt(request, () => ws.delete({ id }));
      if (!r.ok) return { intent, error: r.error };
      throw redirect("/workspaces?done=deleted");
    }
    default:
      throw new Response("Unknown action", { status: 400 });
  }
}

const roleName = (role: string) => (role === "owner" ? "Owner" : role === "viewer" ? "Viewer" : "Member");
const withArticle = (role: string) => (role === "owner" ? "an owner" : role === "viewer" ? "a viewer" : "a member");

function RoleSelect({ id, name = "role", defaultValue, label }: { id: string; name?: string; defaultValue: string; label: string }) {
  return (
    <>
      <label htmlFor={id} className="sr-only">
        {label}
      </label>
      <select id={id} name={name} defaultValue={defaultValue} className="input w-auto">
        <option value="member">Member</option>
        <option value="viewer">Viewer</option>
        <option value="owner">Owner</option>
      </select>
    </>
  );
}

export default function WorkspacePage() {
  const { workspace, members, invites, me } = useLoaderData<typeof loader>();
  const data = useActionData<typeof action>();
  const [params] = useSearchParams();
  const busy = useNavigation().state === "submitting";
  const owner = workspace.role === "owner";
  const label = workspaceLabel(workspace);
  const errorFor = (...intents: Intent[]) => (data && intents.includes(data.intent) ? data.error : null);
  return (
    <>
      <PageHeader
        title={label}
        subtitle={
          workspace.personal
            ? "Your personal workspace: yours alone. To work with others, create a shared workspace."
            : `You are ${withArticle(workspace.role)} of this workspace. Owners manage its members and invitations; members edit its links, linktrees, domains and analytics; viewers only look.`
        }
      >
        {workspace.current ? (
          <span className="badge self-center">current workspace</span>
        ) : (
          <Form method="post" action="/workspaces/switch">
            <input type="hidden" name="id" value={workspace.id} />
            <input type="hidden" name="redirectTo" value="/links" />
            <button type="submit" className="btn-primary">
              Switch to this workspace
            </button>
          </Form>
        )}
      </PageHeader>

      <div className="space-y-6">
        {params.get("created") ? <Success>Workspace created. Invite people below; switch to it to add links.</Success> : null}
        {data?.ok ? <Success>{data.ok}</Success> : null}

        {workspace.personal ? (
          <p className="card text-sm">
            <Link to="/workspaces">Create a shared workspace</Link> to invite people. Your personal workspace stays as it is.
          </p>
        ) : null}

        {!workspace.personal ? (
          <section className="card" aria-labelledby="h-members">
            <h2 id="h-members" className="mb-3 text-lg font-semibold">
              Members
            </h2>
            <FormAlert error={errorFor("role", "remove")} />
            <ul className="divide-y divide-slate-100 dark:divide-slate-800" aria-labelledby="h-members">
              {members.map((m) => (
                <li key={m.user_id} className="flex flex-wrap items-center justify-between gap-3 py-3" data-testid="member-row">
                  <div className="min-w-0">
                    <p className="break-words font-medium">
                      {m.name || m.email} {m.user_id === me ? <span className="badge">you</span> : null}
                    </p>
                    <p className="break-words text-sm text-slate-600 dark:text-slate-400">
                      {m.name ? `${m.email} · ` : null}
                      {roleName(m.role)} · joined {formatDate(m.joined_at)}
                    </p>
                  </div>
                  {owner ? (
                    <div className="flex flex-wrap items-center gap-2">
                      <Form method="post" className="flex items-center gap-2">
                        <input type="hidden" name="userId" value={m.user_id} />
                        <RoleSelect id={`role-${m.user_id}`} defaultValue={m.role} label={`Role of ${m.email}`} />
                        <button type="submit" name="intent" value="role" className="btn-secondary" aria-label={`Change role of ${m.email}`}>
                          Change role
                        </button>
                      </Form>
                      {m.user_id === me ? null : (
                        <Form method="post">
                          <input type="hidden" name="userId" value={m.user_id} />
                          <details className="rounded-md border border-red-200 px-3 py-1.5 dark:border-red-900">
                            <summary className="cursor-pointer text-sm font-medium text-red-700 dark:text-red-400">Remove…</summary>
                            <div className="mt-2 space-y-2">
                              <div className="flex items-start gap-2">
                                <input id={`remove-${m.user_id}`} type="checkbox" name="confirm" value="yes" required className="mt-1 h-4 w-4" />
                                <label htmlFor={`remove-${m.user_id}`} className="text-sm">
                                  Yes, remove {m.email}: their access ends at once.
                                </label>
                              </div>
                              <button type="submit" name="intent" value="remove" className="btn-danger" aria-label={`Remove ${m.email}`}>
                                Remove
                              </button>
                            </div>
                          </details>
                        </Form>
                      )}
                    </div>
                  ) : null}
                </li>
              ))}
            </ul>
          </section>
        ) : null}

        {!workspace.personal ? (
          <section className="card" aria-labelledby="h-invites">
            <h2 id="h-invites" className="mb-3 text-lg font-semibold">
              Pending invitations
            </h2>
            <FormAlert error={errorFor("resend", "revoke")} />
            {invites.length === 0 ? (
              <p className="text-sm text-slate-600 dark:text-slate-400">None. {owner ? "Invite someone with the form below." : null}</p>
            ) : (
              <ul className="divide-y divide-slate-100 dark:divide-slate-800" aria-labelledby="h-invites">
                {invites.map((i) => (
                  <li key={i.id} className="flex flex-wrap items-center justify-between gap-3 py-3" data-testid="invite-row">
                    <div className="min-w-0">
                      <p className="break-words font-medium">{i.email}</p>
                      <p className="text-sm text-slate-600 dark:text-slate-400">
                        {roleName(i.role)} · link valid until {formatDateTime(i.expires_at)}
                      </p>
                    </div>
                    {owner ? (
                      <div className="flex flex-wrap gap-2">
                        <Form method="post">
                          <input type="hidden" name="email" value={i.email} />
                          <input type="hidden" name="role" value={i.role} />
                          <button type="submit" name="intent" value="resend" className="btn-secondary" aria-label={`Resend the invitation to ${i.email}`}>
                            Resend
                          </button>
                        </Form>
                        <Form method="post">
                          <input type="hidden" name="inviteId" value={i.id} />
                          <button type="submit" name="intent" value="revoke" className="btn-secondary" aria-label={`Revoke the invitation to ${i.email}`}>
                            Revoke
                          </button>
                        </Form>
                      </div>
                    ) : null}
                  </li>
                ))}
              </ul>
            )}
          </section>
        ) : null}

        {owner && !workspace.personal ? (
          // A new form after each invitation sent: the fields start empty again.
          <Form method="post" className="card space-y-4" aria-labelledby="h-invite" key={data?.intent === "invite" && data.ok ? data.ok : "invite"}>
            <h2 id="h-invite" className="text-lg font-semibold">
              Invite someone
            </h2>
            <p className="text-sm text-slate-600 dark:text-slate-400">
              We e-mail them a link valid for 7 days. They accept it signed in with that address (new addresses get an account on the way).
            </p>
            <FormAlert error={errorFor("invite")} />
            <div className="grid gap-4 sm:grid-cols-[1fr_auto]">
              <Field
                label="E-mail"
                name="email"
                type="email"
                required
                maxLength={200}
                autoComplete="off"
                defaultValue={data?.intent === "invite" ? data.values?.email : undefined}
                errors={fieldErrors(errorFor("invite"), "email")}
              />
              <Field
                label="Role"
                name="role"
                errors={fieldErrors(errorFor("invite"), "role")}
                hint="Members edit links, linktrees, domains and analytics; owners also manage members and invitations."
              >
                {({ id, describedBy, invalid }) => (
                  <select
                    id={id}
                    name="role"
                    className="input"
                    defaultValue={(data?.intent === "invite" ? data.values?.role : undefined) ?? "member"}
                    aria-describedby={describedBy}
                    aria-invalid={invalid || undefined}
                  >
                    <option value="member">Member</option>
                    <option value="viewer">Viewer</option>
                    <option value="owner">Owner</option>
                  </select>
                )}
              </Field>
            </div>
            <button type="submit" name="intent" value="invite" className="btn-primary" disabled={busy}>
              Send invitation
            </button>
          </Form>
        ) : null}

        {owner ? (
          <Form method="post" className="card space-y-4" aria-labelledby="h-rename">
            <h2 id="h-rename" className="text-lg font-semibold">
              Name
            </h2>
            <FormAlert error={errorFor("rename")} />
            <Field
              label="Workspace name"
              name="name"
              required
              maxLength={100}
              defaultValue={(data?.intent === "rename" ? data.values?.name : undefined) ?? workspace.name ?? ""}
              errors={fieldErrors(errorFor("rename"), "name")}
            />
            <button type="submit" name="intent" value="rename" className="btn-secondary">
              Save name
            </button>
          </Form>
        ) : null}

        {!workspace.personal ? (
          <section className="card space-y-4" aria-labelledby="h-leave">
            <h2 id="h-leave" className="text-lg font-semibold">
              Leave or delete
            </h2>
            <FormAlert error={errorFor("leave", "delete")} />
            <Form method="post">
              <details className="rounded-md border border-slate-300 p-3 dark:border-slate-700">
                <summary className="cursor-pointer text-sm font-medium">Leave this workspace</summary>
                <div className="mt-3 space-y-3">
                  <p className="text-sm">
                    You lose access at once, and your API tokens for this workspace stop working. Its links stay with the other members.
                    {owner ? " If you are its only owner, make someone else an owner first." : null}
                  </p>
                  <div className="flex items-start gap-2">
                    <input id="confirm-leave" type="checkbox" name="confirm" value="yes" required className="mt-1 h-4 w-4" />
                    <label htmlFor="confirm-leave" className="text-sm">
                      Yes, I want to leave {label}.
                    </label>
                  </div>
                  <button type="submit" name="intent" value="leave" className="btn-secondary">
                    Leave workspace
                  </button>
                </div>
              </details>
            </Form>
            {owner ? (
              <Form method="post">
                <ConfirmDelete label="Delete this workspace" what={`the workspace ${label}`}>
                  <p className="text-sm">
                    Its links and linktrees are deleted (their short links stop working and the slugs become free), its domains are removed and every
                    member&apos;s API tokens for it are revoked. Click records are kept.
                  </p>
                </ConfirmDelete>
              </Form>
            ) : null}
          </section>
        ) : null}
      </div>
    </>
  );
}
