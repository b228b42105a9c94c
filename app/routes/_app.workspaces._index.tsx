import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useNavigation, useSearchParams } from "@remix-run/react";
import { Field, fieldErrors, FormAlert, PageHeader, Success } from "../components/ui";
import { workspaceLabel } from "../components/WorkspaceSwitcher";
import { attempt, load } from "../lib/errors.server";
import { requireActor } from "../lib/session.server";

export const meta: MetaFunction = () => [{ title: "Workspaces · Links" }];

export async function loader({ context, request }: LoaderFunctionArgs) {
  await requireActor(context, request);
  return load(request, () => context.caller.workspace.list());
}

export async function action({ context, request }: ActionFunctionArgs) {
  await requireActor(context, request);
  const form = await request.formData();
  const name = String(form.get("name") ?? "");
  const r = await attempt(request, () => context.caller.workspace.create({ name }));
  if (!r.ok) return { error: r.error, name };
  // Straight to its members page: inviting people is what a new workspace is for.
  throw redirect(`/workspaces/${r.value.id}?created=1`);
}

const NOTICES: Record<string, string> = {
  left: "You left the workspace. Its links stay with its other members.",
  deleted: "The workspace was deleted, with its links and linktrees.",
};

export default function Workspaces() {
  const { workspaces } = useLoaderData<typeof loader>();
  const data = useActionData<typeof action>();
  const [params] = useSearchParams();
  const busy = useNavigation().state === "submitting";
  const notice = NOTICES[params.get("done") ?? ""];
  return (
    <>
      <PageHeader title="Workspaces" subtitle="Links, linktrees, domains and analytics belong to a workspace; every member sees and edits all of them." />
      {notice ? (
        <div className="mb-6">
          <Success>{notice}</Success>
        </div>
      ) : null}
      {params.get("switch") === "failed" ? (
        <p role="alert" className="alert-error mb-6">
          That workspace could not be opened: you are not (or no longer) a member of it.
        </p>
      ) : null}
      <div className="grid gap-6 lg:grid-cols-[1fr_22rem]">
        <ul className="space-y-3" aria-label="Your workspaces">
          {workspaces.map((w) => (
            <li key={w.id} className="card !p-4" data-testid="workspace-row">
              <div className="flex flex-wrap items-center justify-between gap-3">
                <div className="min-w-0">
                  <p className="flex flex-wrap items-center gap-2 font-semibold">
                    <Link to={`/workspaces/${w.id}`}>{workspaceLabel(w)}</Link>
                    <span className="badge">{w.role}</span>
                    {w.current ? <span className="badge bg-indigo-100 text-indigo-800 dark:bg-indigo-950 dark:text-indigo-200">current</span> : null}
                  </p>
                  <p className="text-sm text-slate-600 dark:text-slate-400">
                    {w.personal ? "Only you" : `${w.members} ${w.members === 1 ? "member" : "members"}`}
                  </p>
                </div>
                <div className="flex flex-wrap gap-2">
                  {w.current ? null : (
                    <Form method="post" action="/workspaces/switch">
                      <input type="hidden" name="id" value={w.id} />
                      <input type="hidden" name="redirectTo" value="/links" />
                      <button type="submit" className="btn-secondary" aria-label={`Switch to ${workspaceLabel(w)}`}>
                        Switch
                      </button>
                    </Form>
                  )}
                  <Link to={`/workspaces/${w.id}`} className="btn-secondary" aria-label={`${w.personal ? "About" : "Members of"} ${workspaceLabel(w)}`}>
                    {w.personal ? "About" : "Members"}
                  </Link>
                </div>
              </div>
            </li>
          ))}
        </ul>
        <Form method="post" className="card space-y-4 self-start" aria-labelledby="new-workspace">
          <h2 id="new-workspace" className="text-lg font-semibold">
            New workspace
          </h2>
          <p className="text-sm text-slate-600 dark:text-slate-400">A shared workspace for a team. You will be its owner and can invite people by e-mail.</p>
          <FormAlert error={data?.error} />
          <Field
            label="Name"
            name="name"
            required
            maxLength={100}
            placeholder="Marketing"
            defaultValue={data?.name}
            errors={fieldErrors(data?.error, "name")}
          />
          <button type="submit" className="btn-primary" disabled={busy}>
            Create workspace
          </button>
        </Form>
      </div>
    </>
  );
}
